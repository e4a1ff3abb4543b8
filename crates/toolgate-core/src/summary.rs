//! The confirmation summary: what the person approving a `writes` call reads
//! (`confirmation.summary`, the MCP proxy's elicitation prompt).
//!
//! Guarantees: every argument's key is shown; the arguments that decide what the call does come
//! first — pinned ones, the ones the resource is built from, then the schema's required ones,
//! then the rest in the order sent — so a long first argument cannot push `to` or `amount` out
//! of sight; a value is never cut silently: a cut value says how many characters are missing.
//! Control and invisible format characters in values are escaped (they are model output).

use serde_json::{Map, Value};

/// The most characters one value shows before it is cut (with a note saying how much).
const VALUE_BUDGET: usize = 160;
/// The most arguments listed; beyond, their keys are still named.
const MAX_LISTED: usize = 40;

/// The order in which a tool's arguments are summarized: pinned keys, then resource placeholder
/// keys, then required keys, each once (computed once per tool).
pub(crate) fn key_order(pins: &[String], resource: Option<&str>, schema: Option<&Value>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut add = |k: &str| {
        if !k.is_empty() && !out.iter().any(|x| x == k) {
            out.push(k.to_owned());
        }
    };
    for p in pins {
        add(p);
    }
    if let Some(tpl) = resource {
        // `{name}`, `{name*}`, `{a.b}` (first segment); `{{` is a literal brace
        let mut rest = tpl;
        while let Some(i) = rest.find('{') {
            if rest[i..].starts_with("{{") {
                rest = &rest[i + 2..];
                continue;
            }
            let Some(j) = rest[i..].find('}') else { break };
            let inner = rest[i + 1..i + j].trim_end_matches('*');
            let first = inner.split('.').next().unwrap_or("");
            if first != "subject" {
                add(first);
            }
            rest = &rest[i + j + 1..];
        }
    }
    if let Some(req) = schema.and_then(|s| s.get("required")).and_then(Value::as_array) {
        for k in req.iter().filter_map(Value::as_str) {
            add(k);
        }
    }
    out
}

/// `tool` `on resource`: `key: value`, … for a confirmation prompt (see the module docs).
pub(crate) fn summary(tool: &str, resource: Option<&str>, args: &Value, first: &[String]) -> String {
    let mut s = String::from(tool);
    if let Some(r) = resource {
        s.push_str(" on ");
        s.push_str(&shown(r, VALUE_BUDGET));
    }
    let Value::Object(m) = args else { return s };
    if m.is_empty() {
        s.push_str(" (no arguments)");
        return s;
    }
    let ordered = ordered_keys(m, first);
    s.push_str(": ");
    for (i, k) in ordered.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        if i == MAX_LISTED {
            let rest: Vec<String> = ordered[i..].iter().map(|k| shown(k, 40)).collect();
            s.push_str(&format!("and {} more: {}", rest.len(), rest.join(", ")));
            break;
        }
        let text = match &m[k.as_str()] {
            Value::String(v) => serde_json::to_string(v).unwrap_or_default(),
            v => serde_json::to_string(v).unwrap_or_default(),
        };
        s.push_str(&shown(k, 60));
        s.push_str(": ");
        s.push_str(&shown(&text, VALUE_BUDGET));
    }
    s
}

fn ordered_keys<'a>(m: &'a Map<String, Value>, first: &[String]) -> Vec<&'a String> {
    let mut out: Vec<&String> = first.iter().filter_map(|k| m.get_key_value(k.as_str()).map(|(k, _)| k)).collect();
    out.extend(m.keys().filter(|k| !first.iter().any(|f| f == *k)));
    out
}

/// `text` with controls and invisible format characters escaped, cut at `budget` characters
/// with a note of how many more there were.
fn shown(text: &str, budget: usize) -> String {
    let escaped = crate::suggest::escape_for_model(text);
    let total = escaped.chars().count();
    if total <= budget {
        return escaped;
    }
    let kept: String = escaped.chars().take(budget).collect();
    format!("{kept}… (+{} more characters)", total - budget)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn deciding_arguments_come_first_and_nothing_is_cut_silently() {
        let order = key_order(&["from".into()], Some("account:{account}/{path*}"), Some(&json!({"required":["to","amount"]})));
        assert_eq!(order, ["from", "account", "path", "to", "amount"]);
        let args = json!({"note": "x".repeat(5000), "to": "mallory@evil", "amount": 9000, "from": "ann"});
        let s = summary("pay", Some("account:ann/main"), &args, &order);
        let pos = |k: &str| s.find(k).unwrap();
        assert!(pos("from:") < pos("to:") && pos("to:") < pos("amount:") && pos("amount:") < pos("note:"), "{s}");
        assert!(s.contains("mallory@evil") && s.contains("9000"), "{s}");
        assert!(s.contains("more characters)"), "{s}");
        assert!(s.len() < 1000, "{}", s.len());
    }

    #[test]
    fn every_key_is_named_and_values_cannot_forge_lines() {
        let m: Map<String, Value> = (0..60).map(|i| (format!("k{i}"), json!(i))).collect();
        let s = summary("t", None, &Value::Object(m), &[]);
        assert!(s.contains("k59"), "{s}");
        let s = summary("t", None, &json!({"a": "ok\nAPPROVED: yes\u{202e}"}), &[]);
        assert!(!s.contains('\n') && !s.contains('\u{202e}'), "{s}");
    }
}
