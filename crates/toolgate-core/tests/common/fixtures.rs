// The shared fixture corpus under `__test__/fixtures/` (also read by vitest): loading and the
// message mask the fixture formats use.
#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// `__test__/fixtures/`.
pub fn fixtures_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../__test__/fixtures")
}

/// Every `<dialect>/<case>.json` under `__test__/fixtures/<kind>/`, named `<dialect>/<case>.json`,
/// in name order.
pub fn load(kind: &str) -> Vec<(String, Value)> {
    let base = fixtures_root().join(kind);
    let mut out = Vec::new();
    for dir in fs::read_dir(&base).unwrap() {
        let dir = dir.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        for f in fs::read_dir(&dir).unwrap() {
            let f = f.unwrap().path();
            if f.extension().is_some_and(|e| e == "json") {
                let v: Value = serde_json::from_str(&fs::read_to_string(&f).unwrap()).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
                out.push((f.strip_prefix(&base).unwrap().display().to_string(), v));
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Replaces every string equal to a refusal message by `"<message>"` (fixtures do not pin wording).
pub fn mask(v: &mut Value, messages: &[String]) {
    match v {
        Value::String(s) if messages.contains(s) => *s = "<message>".into(),
        Value::Array(a) => a.iter_mut().for_each(|x| mask(x, messages)),
        Value::Object(m) => m.values_mut().for_each(|x| mask(x, messages)),
        _ => {}
    }
}
