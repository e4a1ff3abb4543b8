//! Glob patterns for rule `tools` / `actions` / `subjects` / `resources`, tool
//! `args.<name>.glob` and the `matches` operator of conditions. Syntax (docs/conditions.md): `*` any run without `/`, `**` (a run
//! of two or more stars) any run, `?` one character other than `/`, `\` escapes the next
//! character, `{subject}` the caller's subject taken literally; everything else is literal and
//! case-sensitive, characters being Unicode scalar values.
//!
//! Matching never backtracks: literal patterns compare for equality, a literal prefix or suffix
//! with one star is a `starts_with`/`ends_with`, anything else runs a bit-parallel NFA over the
//! pattern's positions, one pass over the text: O(text × pattern / 64) in the worst case.
//!
//! Why home-made rather than `globset` or `glob` → `regex`: the grammar is the contract's own
//! (`{subject}` as a literal, `**` as any run of two or more stars, no classes or alternation, so
//! a model-written `[` or `{` is never syntax), every pattern must compile to a guaranteed linear
//! matcher with a bounded size, and resource globs decide security. A library would be a
//! translation layer whose corner cases must equal these exactly; until a differential fuzz
//! target shows that, this file (with its unit tests and the `condition` fuzz target, which runs
//! `matches`) stays.

use thiserror::Error;

/// The longest pattern accepted, in characters.
pub const MAX_PATTERN_CHARS: usize = 1024;

/// Why a pattern does not compile. `at()` is the 1-based character the message points at.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum GlobError {
    /// The pattern is longer than [`MAX_PATTERN_CHARS`]; `at` is the first character past it.
    #[error("glob pattern is too long: character {at} is past the limit of {max} characters")]
    TooLong {
        /// 1-based index of the first character past the limit.
        at: usize,
        /// The limit, [`MAX_PATTERN_CHARS`].
        max: usize,
    },
    /// The pattern ends with a `\` that has nothing to escape.
    #[error("glob pattern ends with a lone `\\` at character {at}; write `\\\\` for a literal backslash")]
    DanglingEscape {
        /// 1-based index of the backslash.
        at: usize,
    },
}

impl GlobError {
    /// The 1-based character index (in the pattern) the error points at.
    pub fn at(&self) -> usize {
        match self {
            GlobError::TooLong { at, .. } | GlobError::DanglingEscape { at } => *at,
        }
    }
}

/// A compiled glob pattern. Immutable, cheap to share; matching allocates nothing unless the
/// pattern needs the NFA and either holds `{subject}` or has more than 255 positions.
#[derive(Debug, Clone)]
pub struct Glob {
    source: Box<str>,
    kind: Kind,
    needs_subject: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum El {
    Char(char),
    Any,
    Star,
    Globstar,
    Subject,
}

#[derive(Debug, Clone)]
enum Part {
    Lit(Box<str>),
    Subject,
}

#[derive(Debug, Clone)]
enum Kind {
    /// No wildcard, no placeholder: equality.
    Literal(Box<str>),
    /// Literals and placeholders, then one trailing `Star`/`Globstar` or (`None`) nothing.
    Prefix { parts: Box<[Part]>, tail: Option<El> },
    /// One leading `Star`/`Globstar`, then a literal.
    Suffix { star: El, lit: Box<str> },
    /// Anything else: a literal prefix and suffix stripped, the middle run by the NFA.
    General { prefix: Box<str>, suffix: Box<str>, els: Box<[El]>, nfa: Option<Nfa> },
}

impl Glob {
    /// Compiles `pattern`. Fails only when it is longer than [`MAX_PATTERN_CHARS`] characters
    /// or ends with a lone `\`; every other string is a valid pattern.
    pub fn compile(pattern: &str) -> Result<Glob, GlobError> {
        if pattern.chars().nth(MAX_PATTERN_CHARS).is_some() {
            return Err(GlobError::TooLong { at: MAX_PATTERN_CHARS + 1, max: MAX_PATTERN_CHARS });
        }
        let mut els = Vec::new();
        let mut chars = pattern.chars().enumerate();
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some((_, e)) => els.push(El::Char(e)),
                    None => return Err(GlobError::DanglingEscape { at: i + 1 }),
                },
                '*' => push_star(&mut els, El::Star),
                '?' => els.push(El::Any),
                '{' if chars.clone().map(|(_, c)| c).take(8).eq("subject}".chars()) => {
                    chars.nth(7);
                    els.push(El::Subject);
                }
                c => els.push(El::Char(c)),
            }
        }
        let needs_subject = els.contains(&El::Subject);
        Ok(Glob { source: pattern.into(), kind: classify(els), needs_subject })
    }

    /// The pattern as written.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// True iff the pattern holds a `{subject}` placeholder, so matching needs a subject.
    pub fn needs_subject(&self) -> bool {
        self.needs_subject
    }

    /// `Some(text)` when the pattern has no wildcard and no placeholder: it matches exactly that
    /// text (escapes removed), so a caller may use a hash lookup or `==` instead.
    pub fn is_literal(&self) -> Option<&str> {
        match &self.kind {
            Kind::Literal(s) => Some(s),
            _ => None,
        }
    }

    /// Whether `text` matches. A pattern that needs a subject never matches here (use
    /// [`Glob::matches_with`]).
    pub fn matches(&self, text: &str) -> bool {
        self.matches_with(text, None).unwrap_or(false)
    }

    /// Whether `text` matches, `{subject}` standing for `subject` literally (its `*`, `?`, `\`
    /// are plain characters). `None` iff the pattern needs a subject and `subject` is `None`;
    /// a subject given to a pattern without placeholder is ignored.
    pub fn matches_with(&self, text: &str, subject: Option<&str>) -> Option<bool> {
        if self.needs_subject && subject.is_none() {
            return None;
        }
        let subject = subject.unwrap_or("");
        Some(match &self.kind {
            Kind::Literal(s) => text == &**s,
            Kind::Prefix { parts, tail } => {
                let mut rest = text;
                for part in parts.iter() {
                    let want = match part {
                        Part::Lit(s) => s,
                        Part::Subject => subject,
                    };
                    match rest.strip_prefix(want) {
                        Some(r) => rest = r,
                        None => return Some(false),
                    }
                }
                match tail {
                    Some(El::Globstar) => true,
                    Some(El::Star) => !rest.contains('/'),
                    _ => rest.is_empty(),
                }
            }
            Kind::Suffix { star, lit } => match text.strip_suffix(&**lit) {
                Some(head) => *star == El::Globstar || !head.contains('/'),
                None => false,
            },
            Kind::General { prefix, suffix, els, nfa } => {
                if text.len() < prefix.len() + suffix.len() || !text.starts_with(&**prefix) || !text.ends_with(&**suffix) {
                    return Some(false);
                }
                let middle = &text[prefix.len()..text.len() - suffix.len()];
                match nfa {
                    Some(nfa) => nfa.run(middle),
                    None => Nfa::build(&expand(els, subject)).run(middle),
                }
            }
        })
    }
}

/// Adds a star, merging runs: two or more adjacent stars are one `Globstar`.
fn push_star(els: &mut Vec<El>, star: El) {
    match els.last_mut() {
        Some(last @ (El::Star | El::Globstar)) => *last = El::Globstar,
        _ => els.push(star),
    }
}

/// The elements with `{subject}` replaced by its characters. Stars an empty subject leaves
/// adjacent are merged by meaning (`*` `*` is `*`; with a `**` it is `**`), so the NFA's
/// one-pass epsilon closure stays exact.
fn expand(els: &[El], subject: &str) -> Vec<El> {
    let mut out = Vec::with_capacity(els.len() + subject.len());
    for &el in els {
        match (el, out.last_mut()) {
            (El::Subject, _) => out.extend(subject.chars().map(El::Char)),
            (El::Globstar, Some(last @ El::Star)) => *last = El::Globstar,
            (El::Star | El::Globstar, Some(El::Star | El::Globstar)) => {}
            (el, _) => out.push(el),
        }
    }
    out
}

fn classify(els: Vec<El>) -> Kind {
    let is_lit = |e: &El| matches!(e, El::Char(_));
    let is_star = |e: &El| matches!(e, El::Star | El::Globstar);
    // Only ever called on runs of `Char`.
    let lit = |els: &[El]| -> Box<str> { els.iter().map(|e| if let El::Char(c) = e { *c } else { '\0' }).collect() };
    if els.iter().all(is_lit) {
        return Kind::Literal(lit(&els));
    }
    let (body, tail) = match els.last() {
        Some(e) if is_star(e) => (&els[..els.len() - 1], Some(*e)),
        _ => (&els[..], None),
    };
    if body.iter().all(|e| matches!(e, El::Char(_) | El::Subject)) {
        let mut parts = Vec::new();
        for run in body.split(|e| *e == El::Subject) {
            if !run.is_empty() {
                parts.push(Part::Lit(lit(run)));
            }
            parts.push(Part::Subject);
        }
        parts.pop();
        return Kind::Prefix { parts: parts.into(), tail };
    }
    if is_star(&els[0]) && els[1..].iter().all(is_lit) {
        return Kind::Suffix { star: els[0], lit: lit(&els[1..]) };
    }
    let head = els.iter().take_while(|e| is_lit(e)).count();
    let tail = els[head..].iter().rev().take_while(|e| is_lit(e)).count();
    let middle: Box<[El]> = els[head..els.len() - tail].into();
    let nfa = (!middle.contains(&El::Subject)).then(|| Nfa::build(&middle));
    Kind::General { prefix: lit(&els[..head]), suffix: lit(&els[els.len() - tail..]), els: middle, nfa }
}

/// Bit-parallel NFA: bit `i` set = "the text read so far can leave the pattern at element
/// `i`"; bit `len` = the whole pattern. Stars are self-loops plus an epsilon step to the next
/// position; runs of stars are merged, so one epsilon pass closes a state.
#[derive(Debug, Clone)]
struct Nfa {
    /// Number of elements; bit `len` accepts.
    len: usize,
    words: usize,
    /// Per-word masks, `words` each: `?` elements, `*`, `**`, `*`|`**`.
    any: Box<[u64]>,
    star: Box<[u64]>,
    globstar: Box<[u64]>,
    eps: Box<[u64]>,
    /// Row `r` (`words` each, row 0 all zero): positions holding the literal character of row r.
    rows: Box<[u64]>,
    ascii: Box<[u16; 128]>,
    other: Box<[(char, u16)]>,
}

const STACK_WORDS: usize = 4;

impl Nfa {
    fn build(els: &[El]) -> Nfa {
        let words = (els.len() + 1).div_ceil(64);
        let mut nfa = Nfa {
            len: els.len(),
            words,
            any: vec![0; words].into(),
            star: vec![0; words].into(),
            globstar: vec![0; words].into(),
            eps: vec![0; words].into(),
            rows: Box::default(),
            ascii: Box::new([0; 128]),
            other: Box::default(),
        };
        let mut rows = vec![0u64; words];
        let mut other: Vec<(char, u16)> = Vec::new();
        for (i, el) in els.iter().enumerate() {
            let (w, bit) = (i / 64, 1u64 << (i % 64));
            match el {
                El::Any => nfa.any[w] |= bit,
                El::Star => nfa.star[w] |= bit,
                El::Globstar => nfa.globstar[w] |= bit,
                El::Subject => {} // never built: subjects are expanded first
                El::Char(c) => {
                    let slot = if (*c as u32) < 128 {
                        &mut nfa.ascii[*c as usize]
                    } else {
                        match other.iter().position(|(o, _)| o == c) {
                            Some(k) => &mut other[k].1,
                            None => {
                                other.push((*c, 0));
                                &mut other.last_mut().expect("just pushed").1
                            }
                        }
                    };
                    if *slot == 0 {
                        *slot = (rows.len() / words) as u16;
                        rows.extend(std::iter::repeat_n(0, words));
                    }
                    rows[*slot as usize * words + w] |= bit;
                }
            }
        }
        for w in 0..words {
            nfa.eps[w] = nfa.star[w] | nfa.globstar[w];
        }
        other.sort_unstable_by_key(|(c, _)| *c);
        nfa.rows = rows.into();
        nfa.other = other.into();
        nfa
    }

    fn row(&self, c: char) -> usize {
        let r = if (c as u32) < 128 { self.ascii[c as usize] } else { self.other.binary_search_by_key(&c, |(o, _)| *o).map_or(0, |k| self.other[k].1) };
        r as usize * self.words
    }

    fn run(&self, text: &str) -> bool {
        if self.words <= STACK_WORDS {
            let (mut a, mut b) = ([0u64; STACK_WORDS], [0u64; STACK_WORDS]);
            self.simulate(text, &mut a[..self.words], &mut b[..self.words])
        } else {
            self.simulate(text, &mut vec![0; self.words], &mut vec![0; self.words])
        }
    }

    fn simulate<'b>(&self, text: &str, mut cur: &'b mut [u64], mut next: &'b mut [u64]) -> bool {
        let w = self.words;
        cur[0] = 1;
        self.close(cur);
        for c in text.chars() {
            let row = &self.rows[self.row(c)..self.row(c) + w];
            let slash = c == '/';
            let mut carry = 0u64;
            let mut alive = 0u64;
            for i in 0..w {
                let adv = cur[i] & (row[i] | if slash { 0 } else { self.any[i] });
                let stay = cur[i] & (self.globstar[i] | if slash { 0 } else { self.star[i] });
                next[i] = (adv << 1) | carry | stay;
                carry = adv >> 63;
                alive |= next[i];
            }
            if alive == 0 {
                return false;
            }
            self.close(next);
            std::mem::swap(&mut cur, &mut next);
        }
        cur[self.len / 64] & (1u64 << (self.len % 64)) != 0
    }

    /// Adds the epsilon step of every star: position `i` set and element `i` a star sets `i+1`.
    fn close(&self, state: &mut [u64]) {
        let mut carry = 0u64;
        for (word, eps) in state.iter_mut().zip(self.eps.iter()) {
            let from = *word & eps;
            *word |= (from << 1) | carry;
            carry = from >> 63;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn m(p: &str, t: &str) -> bool {
        Glob::compile(p).unwrap().matches(t)
    }

    #[test]
    fn stars_and_slashes() {
        assert!(m("read_*", "read_file"));
        assert!(m("read_*", "read_"));
        assert!(!m("read_*", "read/x"));
        assert!(!m("read_*", "write_file"));
        assert!(m("reports/**", "reports/a/b.pdf"));
        assert!(m("reports/**", "reports/"));
        assert!(!m("reports/**", "reports"));
        assert!(m("**/x", "a/b/x"));
        assert!(m("**/x", "/x"));
        assert!(!m("**/x", "x"));
        assert!(m("a**b", "a/x/yb"));
        assert!(m("a**b", "ab"));
        assert!(m("a***b", "a/b"), "three stars are a globstar");
        assert!(m("*.pdf", "x.pdf"));
        assert!(!m("*.pdf", "r/x.pdf"));
        assert!(m("**.pdf", "r/x.pdf"));
        assert!(m("file:*/*.txt", "file:a/b.txt"));
        assert!(!m("file:*/*.txt", "file:a/b/c.txt"));
        assert!(m("file:**/*.txt", "file:a/b/c.txt"));
        assert!(!m("file:**/*.txt", "file:a/b/c/"));
        assert!(m("*", ""));
        assert!(!m("*", "/"));
        assert!(m("**", "/"));
        assert!(m("", ""));
        assert!(!m("", "a"));
    }

    #[test]
    fn question_mark_and_unicode() {
        assert!(m("a?c", "abc"));
        assert!(!m("a?c", "a/c"));
        assert!(!m("a?c", "ac"));
        assert!(m("?", "é"), "one scalar value, not one byte");
        assert!(m("?", "😀"));
        assert!(!m("??", "é"));
        assert!(m("é*ü", "é-/-ü".replace('/', "").as_str()));
        assert!(m("*😀?", "x😀y"));
        assert!(!m("A*", "a"), "case-sensitive");
    }

    #[test]
    fn escapes_and_braces() {
        assert!(m(r"a\*b", "a*b"));
        assert!(!m(r"a\*b", "axb"));
        assert!(m(r"\?", "?"));
        assert!(!m(r"\?", "x"));
        assert!(m(r"\\", "\\"));
        assert!(m(r"\a", "a"));
        assert!(m("{x}", "{x}"));
        assert!(m("{sub}*", "{sub}zz"));
        assert!(m("}{", "}{"));
        assert!(m(r"\{subject}", "{subject}"));
        assert!(!Glob::compile(r"\{subject}").unwrap().needs_subject());
        assert!(m("{subject", "{subject"));
        assert!(m("{Subject}", "{Subject}"));
        assert_eq!(Glob::compile(r"a\*b").unwrap().is_literal(), Some("a*b"));
        assert_eq!(Glob::compile("{x}").unwrap().is_literal(), Some("{x}"));
        assert_eq!(Glob::compile("a*").unwrap().is_literal(), None);
        assert_eq!(Glob::compile("{subject}").unwrap().is_literal(), None);
    }

    #[test]
    fn errors_say_where() {
        let e = Glob::compile(r"ab\").unwrap_err();
        assert_eq!(e, GlobError::DanglingEscape { at: 3 });
        assert_eq!(e.at(), 3);
        assert!(e.to_string().contains("character 3"), "{e}");
        assert!(Glob::compile(r"ab\\").is_ok());
        let long = "é".repeat(MAX_PATTERN_CHARS);
        assert!(Glob::compile(&long).is_ok(), "the limit counts characters, not bytes");
        let e = Glob::compile(&format!("{long}x")).unwrap_err();
        assert_eq!(e, GlobError::TooLong { at: MAX_PATTERN_CHARS + 1, max: MAX_PATTERN_CHARS });
        assert!(e.to_string().contains("1025"), "{e}");
    }

    #[test]
    fn subject_is_literal() {
        let g = Glob::compile("file:home/{subject}/**").unwrap();
        assert!(g.needs_subject());
        assert_eq!(g.matches_with("file:home/ann/x", None), None);
        assert!(!g.matches("file:home/ann/x"));
        assert_eq!(g.matches_with("file:home/ann/x", Some("ann")), Some(true));
        assert_eq!(g.matches_with("file:home/bob/x", Some("ann")), Some(false));
        assert_eq!(g.matches_with("file:home/ann", Some("ann")), Some(false));
        // A subject holding wildcards is compared character by character.
        assert_eq!(g.matches_with("file:home/bob/x", Some("*")), Some(false));
        assert_eq!(g.matches_with("file:home/*/x", Some("*")), Some(true));
        let g = Glob::compile("*-{subject}-?").unwrap();
        assert_eq!(g.matches_with("x-a*b-c", Some("a*b")), Some(true));
        assert_eq!(g.matches_with("x-axxb-c", Some("a*b")), Some(false));
        assert_eq!(g.matches_with("x--c", Some("")), Some(true));
        let g = Glob::compile("*{subject}*").unwrap();
        assert_eq!(g.matches_with("ab", Some("")), Some(true), "empty subject merges stars");
        assert_eq!(g.matches_with("a/b", Some("")), Some(false));
        assert_eq!(g.matches_with("a/b", Some("/")), Some(true));
        let g = Glob::compile("{subject}").unwrap();
        assert_eq!(g.matches_with("a?", Some("a?")), Some(true));
        assert_eq!(g.matches_with("ab", Some("a?")), Some(false));
        // Without placeholder, a subject is ignored.
        assert_eq!(Glob::compile("a*").unwrap().matches_with("ab", Some("zz")), Some(true));
    }

    #[test]
    fn long_patterns_use_many_words() {
        let p = format!("{}b", "*a".repeat(200));
        let g = Glob::compile(&p).unwrap();
        assert!(g.matches(&format!("{}b", "a".repeat(200))));
        assert!(g.matches(&format!("{}b", "xa".repeat(200))));
        assert!(!g.matches(&format!("{}b", "a".repeat(199))));
        assert!(!g.matches(&format!("{}/b", "a".repeat(300))));
    }

    fn timed(p: &str, t: &str) -> (bool, Duration) {
        let g = Glob::compile(p).unwrap();
        let start = Instant::now();
        (g.matches(t), start.elapsed())
    }

    #[test]
    fn adversarial_patterns_stay_linear() {
        let mib = "a".repeat(1 << 20);
        for p in ["*a*a*a*a*a*b", "*a*a*a*a*a*b*", "**a**a**a**a**b**", "*?*?*?*?*b", "a*a*a*a*a*a*ac*"] {
            let (hit, took) = timed(p, &mib);
            assert!(!hit, "{p}");
            assert!(took < Duration::from_secs(2), "{p} took {took:?}");
        }
        let (hit, took) = timed("*a*a*a*a*a*a*", &mib);
        assert!(hit && took < Duration::from_secs(2));
        let slashes = "a/".repeat(1 << 19);
        let (hit, took) = timed("**/*a/*b/**", &slashes);
        assert!(!hit && took < Duration::from_secs(2), "{took:?}");
        let big = format!("{}b", "*a".repeat(500));
        let (hit, took) = timed(&big, &mib[..1 << 17]);
        assert!(!hit && took < Duration::from_secs(2), "{took:?}");
    }

    /// Reference semantics, written apart from the NFA: a tokenizer and an O(n·m) table.
    fn reference(p: &str, t: &str, subject: &str) -> bool {
        #[derive(Clone, Copy, PartialEq)]
        enum T {
            C(char),
            Any,
            Star,
            Glob,
        }
        let pc: Vec<char> = p.chars().collect();
        let mut toks = Vec::new();
        let mut i = 0;
        while i < pc.len() {
            match pc[i] {
                '\\' => {
                    toks.push(T::C(pc[i + 1]));
                    i += 2;
                    continue;
                }
                '*' => {
                    let mut j = i;
                    while j < pc.len() && pc[j] == '*' {
                        j += 1;
                    }
                    toks.push(if j - i > 1 { T::Glob } else { T::Star });
                    i = j;
                    continue;
                }
                '?' => toks.push(T::Any),
                '{' if pc[i..].iter().take(9).copied().eq("{subject}".chars()) => {
                    toks.extend(subject.chars().map(T::C));
                    i += 9;
                    continue;
                }
                c => toks.push(T::C(c)),
            }
            i += 1;
        }
        let tc: Vec<char> = t.chars().collect();
        // ok[j][k]: toks[j..] matches tc[k..]
        let (n, m) = (toks.len(), tc.len());
        let mut ok = vec![vec![false; m + 1]; n + 1];
        ok[n][m] = true;
        for j in (0..n).rev() {
            for k in (0..=m).rev() {
                ok[j][k] = match toks[j] {
                    T::C(c) => k < m && tc[k] == c && ok[j + 1][k + 1],
                    T::Any => k < m && tc[k] != '/' && ok[j + 1][k + 1],
                    T::Star => ok[j + 1][k] || (k < m && tc[k] != '/' && ok[j][k + 1]),
                    T::Glob => ok[j + 1][k] || (k < m && ok[j][k + 1]),
                };
            }
        }
        ok[0][0]
    }

    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
    }

    const PAT_ATOMS: [&str; 11] = ["a", "b", "/", "*", "**", "?", "\\*", "{subject}", "é", "{", "ab"];
    const TEXT_ATOMS: [&str; 7] = ["a", "b", "/", "é", "*", "ab", "{"];
    const SUBJECTS: [&str; 5] = ["", "a", "*", "a/b", "é?"];

    /// A text the pattern probably matches (wildcards filled at random), sometimes mutated.
    fn instance(rng: &mut Rng, atoms: &[&str], subject: &str) -> String {
        let mut t = String::new();
        for a in atoms {
            match *a {
                "*" | "**" => (0..rng.below(3)).for_each(|_| t.push_str(TEXT_ATOMS[rng.below(7)])),
                "?" => t.push('a'),
                "\\*" => t.push('*'),
                "{subject}" => t.push_str(subject),
                lit => t.push_str(lit),
            }
        }
        if rng.below(3) == 0 && !t.is_empty() {
            let cut = t.char_indices().nth(rng.below(t.chars().count())).map_or(0, |(i, _)| i);
            t.insert(cut, ['a', '/', 'b'][rng.below(3)]);
        }
        t
    }

    fn check_random(seed: u64, rounds: usize, max_atoms: usize) {
        let mut rng = Rng(seed);
        for _ in 0..rounds {
            let atoms: Vec<&str> = (0..rng.below(max_atoms)).map(|_| PAT_ATOMS[rng.below(11)]).collect();
            let p = atoms.concat();
            let s = SUBJECTS[rng.below(SUBJECTS.len())];
            let t = if rng.below(2) == 0 { instance(&mut rng, &atoms, s) } else { (0..rng.below(max_atoms + 2)).map(|_| TEXT_ATOMS[rng.below(7)]).collect() };
            let g = Glob::compile(&p).unwrap();
            assert_eq!(g.matches_with(&t, Some(s)), Some(reference(&p, &t, s)), "pattern {p:?} text {t:?} subject {s:?}");
        }
    }

    #[test]
    fn agrees_with_reference_on_random_inputs() {
        check_random(0x9E37_79B9_7F4A_7C15, 60_000, 8);
    }

    #[test]
    fn agrees_with_reference_past_one_word() {
        // 60–150 atoms: the NFA spans two or more words, and the stack-to-heap switch at 4.
        check_random(0x2545_F491_4F6C_DD1D, 1_500, 150);
    }
}
