//! Instance paths, kept as a stack of segments while walking and rendered only when needed.

use std::fmt::Write;

/// One step into a JSON value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seg {
    /// An object member.
    Key(String),
    /// An array element.
    Index(usize),
}

/// Renders segments as an RFC 6901 JSON Pointer (`""` for the root, `/a/0/b~1c`).
pub fn to_pointer(segs: &[Seg]) -> String {
    let mut out = String::new();
    for seg in segs {
        out.push('/');
        match seg {
            Seg::Key(k) => {
                for ch in k.chars() {
                    match ch {
                        '~' => out.push_str("~0"),
                        '/' => out.push_str("~1"),
                        c => out.push(c),
                    }
                }
            }
            Seg::Index(i) => {
                let _ = write!(out, "{i}");
            }
        }
    }
    out
}

/// Renders segments for a human or a model: `filters.status`, `items[2].name`,
/// `(arguments)` for the root. Keys that are not plain identifiers are quoted: `["a b"]`.
pub fn to_display<'a>(segs: impl IntoIterator<Item = &'a Seg>) -> String {
    let mut out = String::new();
    for seg in segs {
        match seg {
            Seg::Key(k) if is_ident(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Seg::Key(k) => {
                out.push('[');
                out.push_str(&serde_json::to_string(k).unwrap_or_default());
                out.push(']');
            }
            Seg::Index(i) => {
                let _ = write!(out, "[{i}]");
            }
        }
    }
    if out.is_empty() {
        out.push_str("(arguments)");
    }
    out
}

fn is_ident(k: &str) -> bool {
    let mut chars = k.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$' || c == '-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointer_escapes_tilde_and_slash() {
        let segs = [Seg::Key("a/b~c".into()), Seg::Index(3)];
        assert_eq!(to_pointer(&segs), "/a~1b~0c/3");
        assert_eq!(to_pointer(&[]), "");
    }

    #[test]
    fn display_reads_like_code() {
        let segs = [Seg::Key("filters".into()), Seg::Index(2), Seg::Key("a b".into())];
        assert_eq!(to_display(&segs), "filters[2][\"a b\"]");
        assert_eq!(to_display(&[]), "(arguments)");
    }
}
