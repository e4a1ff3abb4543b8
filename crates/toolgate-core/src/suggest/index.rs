//! The candidates "did you mean" scores, found length by length without visiting every tool: an
//! index of the declared names' character bigrams, grouped by name length, built once per gate.
//!
//! A name is offered when its edit distance to the query is within the budget `k`, or when one
//! contains the other (`super::closest`). Both leave a trace in shared bigrams (counted with
//! multiplicity, on the lower-cased names, in characters):
//!
//! - edit distance ≤ k ⇒ at least `max(n, L) − 1 − 2k` shared bigrams (the q-gram lemma: one
//!   edit destroys at most two bigrams; `n`, `L`: the query's and the name's lengths);
//! - the query inside the name ⇒ the name holds every bigram of the query;
//! - the name inside the query ⇒ all of the name's `L − 1` bigrams shared.
//!
//! `closest` asks for one length at a time ([`Probe::tools`]), nearest to the query's length
//! first: the edit distance is at least the length difference, so the lengths still to visit
//! can only hold worse names. At a length within `k` of the query's, the names sharing enough
//! bigrams (all of them when the bound is ≤ 0: both lengths at most `1 + 2k`); beyond it only
//! containment can offer a name: longer names from the postings of the query's rarest bigram,
//! shorter ones by their count (names of at most one character, which have no bigram, all of
//! them). The candidates are a superset of the names of that length a scan of every tool would
//! offer; `closest` decides on them exactly as on every tool (the tests and the fuzz target
//! `suggest_index` hold the two to the same answer).

use ahash::AHashMap;

use super::ToolName;

/// Bigram postings and lengths of every declared tool name (lower-cased).
#[derive(Debug, Clone, Default)]
pub struct NameIndex {
    /// Tools by lower-cased name length, in characters (ascending in each length).
    by_len: Vec<Vec<u32>>,
    /// A bigram (two characters, packed) → the names holding it.
    grams: AHashMap<u64, Postings>,
}

/// The names holding one bigram, grouped by length: so a query reads only the lengths it visits.
#[derive(Debug, Clone, Default)]
struct Postings {
    /// Per length holding the bigram (ascending): the length and where its run in `entries` ends
    /// (it starts where the previous one ends).
    runs: Vec<(u32, u32)>,
    /// The names of each run: their rank in [`NameIndex::by_len`] of that length (ascending) and
    /// how many times they hold the bigram.
    entries: Vec<(u32, u16)>,
}

impl Postings {
    /// The names of `len` characters holding this bigram. `at` is where the last search ended (a
    /// run's position, updated): lengths asked in order from it are found in a step or two.
    fn run(&self, len: usize, at: &mut usize) -> &[(u32, u16)] {
        let runs = &self.runs;
        // the first run of at least `len` characters, walking from `at`
        let mut i = (*at).min(runs.len());
        while i > 0 && runs[i - 1].0 as usize >= len {
            i -= 1;
        }
        while i < runs.len() && (runs[i].0 as usize) < len {
            i += 1;
        }
        *at = i;
        match runs.get(i) {
            Some(&(l, end)) if l as usize == len => {
                let start = if i == 0 { 0 } else { runs[i - 1].1 };
                &self.entries[start as usize..end as usize]
            }
            _ => &[],
        }
    }

    fn len(&self) -> usize {
        self.entries.len()
    }
}

fn bigrams(lower: &str) -> impl Iterator<Item = u64> + '_ {
    lower.chars().zip(lower.chars().skip(1)).map(|(a, b)| (a as u64) << 32 | b as u64)
}

/// `lower`'s bigrams with their counts, sorted.
fn counted(lower: &str) -> Vec<(u64, u16)> {
    let mut out: Vec<(u64, u16)> = bigrams(lower).map(|g| (g, 1)).collect();
    out.sort_unstable();
    // `dedup_by` hands the later of two equal bigrams first, the one kept second
    out.dedup_by(|later, kept| {
        later.0 == kept.0 && {
            kept.1 = kept.1.saturating_add(1);
            true
        }
    });
    out
}

impl NameIndex {
    /// Indexes `tools` (their lower-cased names, see [`ToolName`]); tool `i` is `tools[i]`.
    pub fn new<T: ToolName>(tools: &[T]) -> NameIndex {
        let mut by_len: Vec<Vec<u32>> = Vec::new();
        // (length, rank in that length, count) per bigram, in tool order
        let mut grams: AHashMap<u64, Vec<(u32, u32, u16)>> = AHashMap::new();
        for (i, t) in tools.iter().enumerate() {
            let lower = t.names().1;
            let len = lower.chars().count();
            if by_len.len() <= len {
                by_len.resize_with(len + 1, Vec::new);
            }
            let rank = by_len[len].len() as u32;
            by_len[len].push(i as u32);
            for (g, n) in counted(lower) {
                grams.entry(g).or_default().push((len as u32, rank, n));
            }
        }
        let grams = grams
            .into_iter()
            .map(|(g, mut all)| {
                // stable: ranks stay ascending within a length
                all.sort_by_key(|&(len, _, _)| len);
                let mut p = Postings { runs: Vec::new(), entries: Vec::with_capacity(all.len()) };
                for (len, rank, n) in all {
                    if p.runs.last().is_none_or(|&(l, _)| l != len) {
                        p.runs.push((len, 0));
                    }
                    p.entries.push((rank, n));
                    p.runs.last_mut().expect("a run").1 = p.entries.len() as u32;
                }
                (g, p)
            })
            .collect();
        NameIndex { by_len, grams }
    }

    /// The longest name's length in characters (0 without names).
    pub(super) fn max_len(&self) -> usize {
        self.by_len.len().saturating_sub(1)
    }

    /// Prepares the search for `lower` (`n` characters; budget `k` edits): its bigrams' postings,
    /// looked up once.
    pub(super) fn probe(&self, lower: &str, n: usize, k: usize) -> Probe<'_> {
        let counted = counted(lower);
        let mut grams: Vec<Gram<'_>> = Vec::with_capacity(counted.len());
        let mut holds = Holds::All;
        for (g, qc) in counted {
            match self.grams.get(&g) {
                Some(p) => {
                    // both sides start from the query's length
                    let at = p.runs.partition_point(|&(l, _)| (l as usize) < n);
                    grams.push(Gram { qc, p, below: at, above: at });
                }
                // no name holds this bigram, so none holds the query
                None => holds = Holds::None,
            }
        }
        if let Holds::All = holds {
            // the query's bigram with the fewest names: every name holding the query is among them
            if let Some((i, _)) = grams.iter().enumerate().min_by_key(|(_, g)| g.p.len()) {
                holds = Holds::Rarest(i);
            }
        }
        let runs = Vec::with_capacity(grams.len());
        Probe { index: self, n, k, grams, holds, runs, hits: Vec::new(), shared: Vec::new() }
    }
}

/// Which names may hold the query.
enum Holds {
    /// Any name (a query with no bigram).
    All,
    /// None (a bigram of the query is in no name).
    None,
    /// Only names holding this bigram of the query's (its rarest).
    Rarest(usize),
}

/// One of the query's bigrams found in the index.
struct Gram<'a> {
    /// How many times the query holds it.
    qc: u16,
    /// Its names.
    p: &'a Postings,
    /// Where the last search of a length below the query's, and of one above it, ended.
    below: usize,
    above: usize,
}

impl<'a> Gram<'a> {
    fn run(&mut self, len: usize, n: usize) -> &'a [(u32, u16)] {
        let p = self.p;
        p.run(len, if len < n { &mut self.below } else { &mut self.above })
    }
}

/// One query's search through a [`NameIndex`], length by length (see the module's comment).
/// What it holds besides is reused from one length to the next, so it allocates in proportion
/// to the postings it reads, not to the tools.
pub(super) struct Probe<'a> {
    index: &'a NameIndex,
    n: usize,
    k: usize,
    grams: Vec<Gram<'a>>,
    holds: Holds,
    /// The runs of the length being counted: the query's count of the bigram, its names.
    runs: Vec<(u16, &'a [(u32, u16)])>,
    /// Sparse counting: (rank, shared) per name and bigram, sorted to sum.
    hits: Vec<(u32, u16)>,
    /// Dense counting: shared bigrams per rank (zero between lengths).
    shared: Vec<u16>,
}

impl Probe<'_> {
    /// Appends the tools whose names have `len` characters and may be offered — within `k`
    /// edits of the query when `len` is within `k` of its length, else containing it or contained
    /// in it: a superset of those `closest` offers, in no particular order. Fastest when the
    /// lengths on each side of the query's are asked in order away from it, as `closest` does.
    pub(super) fn tools(&mut self, len: usize, out: &mut Vec<usize>) {
        let Some(bucket) = self.index.by_len.get(len).filter(|b| !b.is_empty()) else { return };
        let (n, k) = (self.n, self.k);
        let all = |out: &mut Vec<usize>| out.extend(bucket.iter().map(|&t| t as usize));
        if len.abs_diff(n) <= k {
            match (n.max(len) + 1).checked_sub(2 * k + 2) {
                // the bound is ≤ 0: no count can rule a name out
                None | Some(0) => all(out),
                Some(least) => self.count(len, least, bucket, out),
            }
        } else if len > n {
            match self.holds {
                Holds::All => all(out),
                Holds::None => {}
                Holds::Rarest(g) => out.extend(self.grams[g].run(len, n).iter().map(|&(r, _)| bucket[r as usize] as usize)),
            }
        } else if len <= 1 {
            all(out);
        } else {
            self.count(len, len - 1, bucket, out);
        }
    }

    /// The names of `bucket` (those of `len` characters) sharing at least `least` bigrams with
    /// the query (each counted as often as both hold it).
    fn count(&mut self, len: usize, least: usize, bucket: &[u32], out: &mut Vec<usize>) {
        let n = self.n;
        self.runs.clear();
        self.runs.extend(self.grams.iter_mut().map(|g| (g.qc, g.run(len, n))).filter(|(_, r)| !r.is_empty()));
        let read: usize = self.runs.iter().map(|(_, r)| r.len()).sum();
        if read == 0 {
            return;
        }
        if read * 4 < bucket.len() {
            // few names touched among many: sort the hits instead of a counter per name
            self.hits.clear();
            for &(qc, run) in &self.runs {
                self.hits.extend(run.iter().map(|&(r, nc)| (r, qc.min(nc))));
            }
            self.hits.sort_unstable_by_key(|&(r, _)| r);
            for same in self.hits.chunk_by(|a, b| a.0 == b.0) {
                if same.iter().map(|&(_, c)| usize::from(c)).sum::<usize>() >= least {
                    out.push(bucket[same[0].0 as usize] as usize);
                }
            }
            return;
        }
        if self.shared.len() < bucket.len() {
            self.shared.resize(bucket.len(), 0);
        }
        for &(qc, run) in &self.runs {
            for &(r, nc) in run {
                let s = &mut self.shared[r as usize];
                *s = s.saturating_add(qc.min(nc));
            }
        }
        for &(_, run) in &self.runs {
            for &(r, _) in run {
                let s = std::mem::take(&mut self.shared[r as usize]);
                if usize::from(s) >= least {
                    out.push(bucket[r as usize] as usize);
                }
            }
        }
    }
}
