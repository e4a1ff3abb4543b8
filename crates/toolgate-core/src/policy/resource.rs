//! Resource templates: a tool's `"resource": "file:{path*}"`, resolved against the call's
//! (already repaired) arguments into the string that policy rules' `resources` globs match.
//!
//! Resolution is fail-closed: a placeholder whose argument is missing, not a string or number,
//! or would escape (a `/` inside one segment, a path climbing above its start, an absolute path,
//! NUL or control characters) yields [`ResolveError::Unresolved`] instead of a resource string,
//! so a rule can never match something other than what the tool will touch lexically.

use std::fmt::{self, Write as _};

use serde_json::{Map, Number, Value};
use thiserror::Error;

/// A compiled resource template. Built once per tool at config time; resolving it allocates
/// exactly one `String`, sized before anything is written.
///
/// Syntax: literal text, `{{` / `}}` for literal braces, and placeholders
/// - `{x}`: argument `x` as one path segment (never empty, `.`, or containing `/`, `\`, `..`,
///   NUL or control characters);
/// - `{x*}`: argument `x` as a relative path, normalized (`.` and empty segments dropped, `..`
///   pops a segment) and refused if it would climb above its start;
/// - `{a.b}` / `{a.b*}`: the same for a nested object member (`args.a.b`);
/// - `{subject}`: the caller's subject, inserted as given (trusted host data).
///
/// Names are `[A-Za-z0-9_-]+` segments joined by `.`. `subject` is reserved: `{subject.x}` and
/// `{subject*}` are configuration errors, and an argument named `subject` cannot be addressed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceTemplate {
    source: Box<str>,
    parts: Box<[Part]>,
    /// Total bytes of the literal parts: the fixed share of every resolved string.
    literal_len: usize,
    needs_subject: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(Box<str>),
    Arg(Arg),
    Subject,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Arg {
    /// The dotted name as written, for messages.
    name: Box<str>,
    /// Object path into the arguments (`["a", "b"]` for `{a.b}`).
    path: Box<[Box<str>]>,
    /// `{x*}`: a path, not a single segment.
    star: bool,
}

/// Why a template could not be resolved for one call.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ResolveError {
    /// An argument is missing, not a string/number, or escaping (reason `unresolved_resource`).
    /// The message is short, model-readable and names the argument.
    #[error("{0}")]
    Unresolved(String),
    /// The template uses `{subject}` and the call has no subject (reason `no_subject`).
    #[error("this tool's resource needs a subject and the call has none")]
    NoSubject,
}

impl ResourceTemplate {
    /// Compiles `template`. The error (for `E_CONFIG`) names what is wrong and its character
    /// offset (0-based, counted in characters): an unclosed `{`, an unmatched `}`, an empty
    /// name or name segment, a character not allowed in a name, `*` anywhere but at the end,
    /// `{subject*}` or `{subject.x}`, or an empty template.
    pub fn compile(template: &str) -> Result<ResourceTemplate, String> {
        let fail = |what: String| Err(format!("resource template `{template}`: {what}"));
        if template.is_empty() {
            return fail("is empty".into());
        }
        let mut parts = Vec::new();
        let mut literal = String::new();
        let mut literal_len = 0;
        let mut chars = template.chars().enumerate().peekable();
        while let Some((at, c)) = chars.next() {
            match c {
                '{' | '}' if chars.peek().map(|&(_, n)| n) == Some(c) => {
                    chars.next();
                    literal.push(c);
                }
                '}' => return fail(format!("unmatched `}}` at character {at} (write `}}}}` for a literal `}}`)")),
                '{' => {
                    let mut name = String::new();
                    loop {
                        match chars.next() {
                            None => return fail(format!("unclosed `{{` at character {at}")),
                            Some((_, '}')) => break,
                            Some((_, n)) if n.is_ascii_alphanumeric() || matches!(n, '_' | '-' | '.' | '*') => name.push(n),
                            Some((bad_at, n)) => {
                                return fail(format!(
                                    "{n:?} at character {bad_at} is not allowed in a placeholder name \
                                     (letters, digits, `_`, `-`; `.` between segments; `*` at the end)"
                                ))
                            }
                        }
                    }
                    let part = placeholder(&name).map_err(|what| format!("resource template `{template}`: {what} in the placeholder at character {at}"))?;
                    if !literal.is_empty() {
                        literal_len += literal.len();
                        parts.push(Part::Literal(std::mem::take(&mut literal).into()));
                    }
                    parts.push(part);
                }
                _ => literal.push(c),
            }
        }
        if !literal.is_empty() {
            literal_len += literal.len();
            parts.push(Part::Literal(literal.into()));
        }
        let needs_subject = parts.iter().any(|p| matches!(p, Part::Subject));
        Ok(ResourceTemplate { source: template.into(), parts: parts.into(), literal_len, needs_subject })
    }

    /// The template as written in the config.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// `true` when the template contains `{subject}`: resolving it without a subject is
    /// [`ResolveError::NoSubject`].
    pub fn needs_subject(&self) -> bool {
        self.needs_subject
    }

    /// `true` when the template has no placeholders: it resolves to itself (braces unescaped)
    /// for any arguments and subject.
    pub fn is_static(&self) -> bool {
        self.parts.iter().all(|p| matches!(p, Part::Literal(_)))
    }

    /// Resolves the template against `args` and `subject`.
    ///
    /// Guarantees: every argument placeholder's value was a JSON string or number (numbers as
    /// their JSON text, `42`, `1.5`); a `{x}` value is one non-empty segment other than `.`
    /// without `/`, `\`, `..`, NUL or control characters; a `{x*}` value is a relative path with
    /// no `\`, NUL or control characters, no drive prefix (`C:`) on its first segment, which never
    /// climbs above its start, written normalized (may be empty: the start itself). Percent
    /// escapes are not decoded (`%2e%2e` is a literal segment). A missing subject is reported
    /// before any argument problem (fixing arguments cannot help that call).
    pub fn resolve(&self, args: &Map<String, Value>, subject: Option<&str>) -> Result<String, ResolveError> {
        let subject = match subject {
            Some(s) => s,
            None if self.needs_subject => return Err(ResolveError::NoSubject),
            None => "",
        };
        // Pass 1: check every value and size the output (normalizing only shrinks a path).
        let mut len = self.literal_len;
        let mut num = NumText::default();
        for part in self.parts.iter() {
            len += match part {
                Part::Literal(_) => 0,
                Part::Subject => subject.len(),
                Part::Arg(arg) => {
                    let text = arg.text(args, &mut num)?;
                    arg.check(text)?;
                    text.len()
                }
            };
        }
        // Pass 2: write.
        let mut out = String::with_capacity(len);
        for part in self.parts.iter() {
            match part {
                Part::Literal(s) => out.push_str(s),
                Part::Subject => out.push_str(subject),
                Part::Arg(arg) => {
                    let text = arg.text(args, &mut num)?;
                    if arg.star {
                        push_normalized(&mut out, text);
                    } else {
                        out.push_str(text);
                    }
                }
            }
        }
        debug_assert!(out.len() <= len);
        Ok(out)
    }
}

impl fmt::Display for ResourceTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

/// Parses a placeholder's name (between the braces); the error says what is wrong.
fn placeholder(name: &str) -> Result<Part, String> {
    let (body, star) = match name.strip_suffix('*') {
        Some(body) => (body, true),
        None => (name, false),
    };
    if body.is_empty() {
        return Err("empty name".into());
    }
    if body.contains('*') {
        return Err(format!("`*` inside `{{{name}}}` (it may only end a name)"));
    }
    if body.split('.').any(str::is_empty) {
        return Err(format!("empty name segment in `{{{name}}}`"));
    }
    if body == "subject" {
        return match star {
            true => Err("`{subject*}` (the subject is inserted as given, never as a path)".into()),
            false => Ok(Part::Subject),
        };
    }
    if body.starts_with("subject.") {
        return Err(format!("`{{{name}}}` (`subject` is the caller's subject and has no fields)"));
    }
    let path = body.split('.').map(Box::from).collect();
    Ok(Part::Arg(Arg { name: body.into(), path, star }))
}

impl Arg {
    /// The argument's text: a string as is, a number as its JSON text (rendered into `num`).
    fn text<'a>(&self, args: &'a Map<String, Value>, num: &'a mut NumText) -> Result<&'a str, ResolveError> {
        let Some((first, rest)) = self.path.split_first() else { return Err(self.fail("is missing")) };
        let mut value = args.get(&**first);
        for key in rest.iter() {
            value = value.and_then(Value::as_object).and_then(|o| o.get(&**key));
        }
        let got = match value {
            None => return Err(self.fail("is missing")),
            Some(Value::String(s)) => return Ok(s),
            Some(Value::Number(n)) => return num.render(n).ok_or_else(|| self.fail("is a number too long to use")),
            Some(Value::Null) => "null",
            Some(Value::Bool(_)) => "boolean",
            Some(Value::Array(_)) => "array",
            Some(Value::Object(_)) => "object",
        };
        Err(self.fail(&format!("must be a string or number, got {got}")))
    }

    /// Checks `text` against the placeholder's rules (see [`ResourceTemplate::resolve`]).
    fn check(&self, text: &str) -> Result<(), ResolveError> {
        if !self.star {
            return match text {
                "" => Err(self.fail("must not be empty")),
                "." => Err(self.fail("must be one path segment, not `.`")),
                _ if text.contains("..") || text.chars().any(|c| c == '/' || c == '\\' || c.is_control()) => {
                    Err(self.fail("must be one path segment (no `/`, `\\`, `..`, NUL or control characters)"))
                }
                _ => Ok(()),
            };
        }
        if text.chars().any(|c| c == '\\' || c.is_control()) {
            return Err(self.fail("must not contain `\\`, NUL or control characters (use `/` between segments)"));
        }
        if text.starts_with('/') {
            return Err(self.fail("must be a relative path"));
        }
        let mut depth = 0usize;
        for seg in text.split('/') {
            match seg {
                "" | "." => {}
                ".." if depth == 0 => return Err(self.fail("climbs above its start")),
                ".." => depth -= 1,
                _ if depth == 0 && is_drive(seg) => return Err(self.fail("must be a relative path")),
                _ => depth += 1,
            }
        }
        Ok(())
    }

    fn fail(&self, what: &str) -> ResolveError {
        ResolveError::Unresolved(format!("argument `{}` {what}", self.name))
    }
}

/// A Windows drive form at the start of a path: `C:`, `C:x`, `c:/`.
fn is_drive(seg: &str) -> bool {
    let b = seg.as_bytes();
    b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':'
}

/// Appends the normalized form of a path already accepted by [`Arg::check`].
fn push_normalized(out: &mut String, path: &str) {
    let start = out.len();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                let cut = out[start..].rfind('/').map_or(start, |i| start + i);
                out.truncate(cut);
            }
            _ => {
                if out.len() > start {
                    out.push('/');
                }
                out.push_str(seg);
            }
        }
    }
}

/// A stack buffer for a number's JSON text (at most 24 bytes for an `f64`, 20 for integers).
#[derive(Default)]
struct NumText {
    buf: [u8; 32],
    len: usize,
}

impl NumText {
    fn render(&mut self, n: &Number) -> Option<&str> {
        self.len = 0;
        write!(self, "{n}").ok()?;
        std::str::from_utf8(&self.buf[..self.len]).ok()
    }
}

impl fmt::Write for NumText {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        self.buf.get_mut(self.len..end).ok_or(fmt::Error)?.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    fn resolve(t: &str, v: Value) -> Result<String, ResolveError> {
        ResourceTemplate::compile(t).unwrap().resolve(&args(v), None)
    }

    fn unresolved(t: &str, v: Value) -> String {
        match resolve(t, v) {
            Err(ResolveError::Unresolved(m)) => m,
            other => panic!("expected Unresolved, got {other:?}"),
        }
    }

    #[test]
    fn traversal_table() {
        let ok = [
            ("a/b", "file:a/b"),
            ("a/./b//c", "file:a/b/c"),
            ("a/b/../c", "file:a/c"),
            ("a/..", "file:"),
            ("./", "file:"),
            ("", "file:"),
            ("%2e%2e/x", "file:%2e%2e/x"),
            ("a/...", "file:a/..."),
            ("a..b/c", "file:a..b/c"),
            ("x/C:", "file:x/C:"),
        ];
        for (path, want) in ok {
            assert_eq!(resolve("file:{path*}", json!({ "path": path })).as_deref(), Ok(want), "{path:?}");
        }
        let bad = [
            ("../x", "climbs above its start"),
            ("a/../../x", "climbs above its start"),
            ("..", "climbs above its start"),
            ("..\\x", "`\\`"),
            ("a\\b", "`\\`"),
            ("/etc/passwd", "must be a relative path"),
            ("//server/share", "must be a relative path"),
            ("C:\\x", "`\\`"),
            ("C:/x", "must be a relative path"),
            ("c:x", "must be a relative path"),
            ("./C:/x", "must be a relative path"),
            ("a/../C:/x", "must be a relative path"),
            ("a\0b", "control characters"),
            ("a\u{7}b", "control characters"),
            ("a\nb", "control characters"),
            ("a\u{85}b", "control characters"),
        ];
        for (path, want) in bad {
            let m = unresolved("file:{path*}", json!({ "path": path }));
            assert!(m.starts_with("argument `path` ") && m.contains(want), "{path:?}: {m}");
        }
    }

    #[test]
    fn one_segment() {
        assert_eq!(resolve("repo:{org}/{name}", json!({"org": "acme", "name": "site"})).unwrap(), "repo:acme/site");
        assert_eq!(resolve("u:{name}", json!({"name": "a.b"})).unwrap(), "u:a.b");
        for v in ["../admin", "a/b", "..", "a..b", "a\\b", "a\0", "a\u{1b}", "/"] {
            let m = unresolved("u:{name}", json!({ "name": v }));
            assert_eq!(m, "argument `name` must be one path segment (no `/`, `\\`, `..`, NUL or control characters)", "{v:?}");
        }
        assert_eq!(unresolved("u:{name}", json!({"name": ""})), "argument `name` must not be empty");
        assert!(unresolved("u:{name}", json!({"name": "."})).contains("not `.`"));
    }

    #[test]
    fn numbers_and_non_scalars() {
        assert_eq!(resolve("n:{x}", json!({"x": 42})).unwrap(), "n:42");
        assert_eq!(resolve("n:{x}", json!({"x": -7})).unwrap(), "n:-7");
        assert_eq!(resolve("n:{x}", json!({"x": 1.5})).unwrap(), "n:1.5");
        assert_eq!(resolve("n:{x*}", json!({"x": u64::MAX})).unwrap(), format!("n:{}", u64::MAX));
        assert_eq!(resolve("n:{x}", json!({"x": 1e300})).unwrap(), "n:1e+300");
        assert_eq!(resolve("n:{x}", json!({"x": -1.2345678901234568e-300})).unwrap(), "n:-1.2345678901234568e-300");
        assert_eq!(unresolved("n:{x}", json!({})), "argument `x` is missing");
        for (v, got) in [(json!(null), "null"), (json!(true), "boolean"), (json!([1]), "array"), (json!({"a": 1}), "object")] {
            assert_eq!(unresolved("n:{x*}", json!({ "x": v })), format!("argument `x` must be a string or number, got {got}"));
        }
    }

    #[test]
    fn nested() {
        let t = "db:{target.db}/{target.table*}";
        assert_eq!(resolve(t, json!({"target": {"db": "main", "table": "a/b"}})).unwrap(), "db:main/a/b");
        assert_eq!(unresolved(t, json!({"target": {"table": "x"}})), "argument `target.db` is missing");
        assert_eq!(unresolved(t, json!({"target": "main"})), "argument `target.db` is missing");
        assert_eq!(unresolved(t, json!({"target": {"db": {"x": 1}}})), "argument `target.db` must be a string or number, got object");
    }

    #[test]
    fn subject() {
        let t = ResourceTemplate::compile("home:{subject}/{path*}").unwrap();
        assert!(t.needs_subject() && !t.is_static());
        let a = args(json!({"path": "notes/a.txt"}));
        assert_eq!(t.resolve(&a, Some("alice")).unwrap(), "home:alice/notes/a.txt");
        // Host data is inserted as given.
        assert_eq!(t.resolve(&a, Some("org/bob")).unwrap(), "home:org/bob/notes/a.txt");
        assert_eq!(t.resolve(&a, None), Err(ResolveError::NoSubject));
        // No subject is reported before a bad argument.
        assert_eq!(t.resolve(&args(json!({"path": "../x"})), None), Err(ResolveError::NoSubject));
        assert_eq!(ResolveError::NoSubject.to_string(), "this tool's resource needs a subject and the call has none");
        let plain = ResourceTemplate::compile("f:{x}").unwrap();
        assert!(!plain.needs_subject());
        assert_eq!(plain.resolve(&args(json!({"x": "y"})), None).unwrap(), "f:y");
    }

    #[test]
    fn literal_braces_and_static() {
        let t = ResourceTemplate::compile("a{{b}}c").unwrap();
        assert!(t.is_static() && !t.needs_subject());
        assert_eq!(t.resolve(&Map::new(), None).unwrap(), "a{b}c");
        assert_eq!(t.as_str(), "a{{b}}c");
        assert_eq!(resolve("{{{x}}}", json!({"x": "v"})).unwrap(), "{v}");
        assert_eq!(resolve("{a}{b*}", json!({"a": "1", "b": "x/../y"})).unwrap(), "1y");
    }

    #[test]
    fn compile_errors() {
        let cases = [
            ("file:{path", "unclosed `{` at character 5"),
            ("file:{}", "empty name in the placeholder at character 5"),
            ("{*}", "empty name in the placeholder at character 0"),
            ("x{a..b}", "empty name segment in `{a..b}` in the placeholder at character 1"),
            ("x{.a}", "empty name segment"),
            ("x{a.}", "empty name segment"),
            ("x{a b}", "' ' at character 3 is not allowed"),
            ("x{a{b}", "'{' at character 3 is not allowed"),
            ("x{é}", "'é' at character 2 is not allowed"),
            ("x{a*b}", "`*` inside `{a*b}`"),
            ("x{a**}", "`*` inside"),
            ("{subject*}", "`{subject*}`"),
            ("{subject.id}", "`subject` is the caller's subject"),
            ("a}b", "unmatched `}` at character 1"),
            ("", "is empty"),
        ];
        for (t, want) in cases {
            let e = ResourceTemplate::compile(t).unwrap_err();
            assert!(e.starts_with(&format!("resource template `{t}`: ")) && e.contains(want), "{t:?}: {e}");
        }
        assert!(ResourceTemplate::compile("x{a-b_C.d9*}").is_ok());
    }

    #[test]
    fn one_allocation_sized_up_front() {
        let t = ResourceTemplate::compile("file:{a*}/{n}:{subject}").unwrap();
        let out = t.resolve(&args(json!({"a": "x/./y/../z//", "n": 1.25})), Some("s")).unwrap();
        assert_eq!(out, "file:x/z/1.25:s");
        assert!(out.capacity() >= out.len() && out.capacity() <= "file:".len() + 12 + 1 + 4 + 1 + 1);
    }
}
