//! Records cut to size: no line a gate writes is longer than a reader of the log reads back.
//!
//! A decision record is small unless the model made it big — a tool named with a million
//! characters, megabytes of arguments recorded with `includeArguments`. The writers (Node and
//! Python) add `prev` and `mac` to each record and read lines back up to [`MAX_LINE_BYTES`]
//! (`toolgate audit verify`, a gate resuming its chain); a longer line would read as a broken
//! log. So the core cuts every record it builds to [`MAX_RECORD_BYTES`] here, once, and every
//! writer writes the same bytes.

use serde_json::{json, Map, Value};

/// The longest line a reader of a toolgate log reads, in bytes (newline excluded): `verify`, the
/// writers resuming a chain.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// The longest record the core hands a writer, in bytes: with the writer's `prev` and `mac`
/// added a line stays within [`MAX_LINE_BYTES`].
pub const MAX_RECORD_BYTES: usize = MAX_LINE_BYTES - 1024;

/// In a record cut to size, string members keep this many characters …
const CUT_CHARS: usize = 4096;

/// … and object or array members whose JSON is longer than this many bytes are left out.
const KEEP_JSON_BYTES: usize = 64 * 1024;

/// `record` (one JSON object) as the log takes it: itself when it is at most `max` bytes; else
/// the same record cut to size — every string member kept to its first 4,096 characters, every
/// object or array member over 64 KiB of JSON left out, and `args` left out (replay must not
/// re-decide a call on part of what was decided) — with `"truncated": {bytes, cut?, omitted?}`
/// (the original length, the members cut, the members left out) before `configHash`. A record
/// that does not read back as an object becomes `{"v":1,"type":"unreadable",…}`. The result is
/// always far shorter than `max` for any `max` of a megabyte or more.
pub fn to_size(record: String, max: usize) -> String {
    if record.len() <= max {
        return record;
    }
    let bytes = record.len();
    let src = match serde_json::from_str::<Value>(&record) {
        Ok(Value::Object(m)) => m,
        _ => json!({ "v": 1, "type": "unreadable" }).as_object().cloned().unwrap_or_default(),
    };
    drop(record);
    let mut out = Map::with_capacity(src.len() + 2);
    let (mut cut, mut omitted) = (Vec::new(), Vec::new());
    let mut config_hash = None;
    for (k, v) in src {
        match (k.as_str(), v) {
            ("configHash", Value::String(h)) => config_hash = Some(h),
            ("configHash" | "prev" | "mac" | "truncated", _) => {}
            ("args", _) => omitted.push(k),
            (_, Value::String(s)) if s.chars().nth(CUT_CHARS).is_some() => {
                out.insert(k.clone(), Value::String(s.chars().take(CUT_CHARS).collect()));
                cut.push(k);
            }
            (_, v @ (Value::Object(_) | Value::Array(_))) if crate::json::serialized_len(&v) > KEEP_JSON_BYTES => omitted.push(k),
            (_, v) => {
                out.insert(k, v);
            }
        }
    }
    let mut truncated = Map::new();
    truncated.insert("bytes".into(), bytes.into());
    if !cut.is_empty() {
        truncated.insert("cut".into(), cut.into());
    }
    if !omitted.is_empty() {
        truncated.insert("omitted".into(), omitted.into());
    }
    out.insert("truncated".into(), Value::Object(truncated));
    if let Some(h) = config_hash {
        out.insert("configHash".into(), Value::String(h));
    }
    serde_json::to_string(&Value::Object(out)).unwrap_or_else(|_| r#"{"v":1,"type":"unreadable"}"#.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(s: &str) -> Vec<String> {
        serde_json::from_str::<Map<String, Value>>(s).expect("an object").keys().cloned().collect()
    }

    #[test]
    fn a_record_within_the_bound_is_kept_as_it_is() {
        let r = r#"{"v":1,"type":"decision","tool":"x","configHash":"C"}"#.to_string();
        assert_eq!(to_size(r.clone(), r.len()), r);
    }

    #[test]
    fn long_strings_are_cut_by_characters_big_members_and_args_left_out() {
        let max = 1 << 20;
        let name = format!("{}😀{}", "a".repeat(CUT_CHARS - 1), "b".repeat(max));
        let rec = json!({
            "v": 1, "type": "decision", "id": "q-0", "tool": name, "outcome": "passed",
            "args": { "text": "s" }, "context": { "k": "z".repeat(70_000) }, "flags": [],
            "prev": "P", "truncated": "forged", "configHash": "C", "mac": "M"
        })
        .to_string();
        let bytes = rec.len();
        let out = to_size(rec, max);
        assert!(out.len() < 20_000, "{}", out.len());
        let v: Value = serde_json::from_str(&out).expect("JSON");
        let tool = v["tool"].as_str().expect("tool kept");
        assert_eq!(tool.chars().count(), CUT_CHARS);
        assert!(tool.ends_with('😀'), "a character is never split");
        assert_eq!(v["truncated"], json!({ "bytes": bytes, "cut": ["tool"], "omitted": ["args", "context"] }));
        assert_eq!(keys(&out), ["v", "type", "id", "tool", "outcome", "flags", "truncated", "configHash"]);
    }

    #[test]
    fn a_record_that_is_not_an_object_becomes_unreadable() {
        let out = to_size(format!(r#"{{"v":1,"x":"{}"#, "y".repeat(5000)), 1000);
        assert_eq!(out, r#"{"v":1,"type":"unreadable","truncated":{"bytes":5012}}"#);
    }
}
