//! Runs every fixture under `__test__/fixtures/tool-lists/` (shared with vitest) through
//! `Gate::filter_tools`, and `Gate::filter_tools_removals` against it.

use std::fs;
use std::path::PathBuf;

use serde_json::Value;
use toolgate_core::dialect::sieve::remove_paths;
use toolgate_core::json::pointer::Seg;
use toolgate_core::{Dialect, Gate};

#[path = "common/fixtures.rs"]
mod fixtures;

fn root() -> PathBuf {
    fixtures::fixtures_root()
}

#[test]
fn every_tool_list_fixture_holds() {
    let gate = Gate::from_json(&fs::read_to_string(root().join("dialects/tools.json")).unwrap()).unwrap();
    let mut failures = Vec::new();
    let mut count = 0;
    for (name, fx) in fixtures::load("tool-lists") {
        count += 1;
        let d: Dialect = fx["dialect"].as_str().unwrap().parse().unwrap();
        let got = gate.filter_tools(d, &fx["tools"].to_string());
        match (fx.get("error"), got) {
            (Some(err), Err(e)) => {
                if e.code() != err["code"] || !e.to_string().contains(err["contains"].as_str().unwrap_or("")) {
                    failures.push(format!("{name}: got {} {e}, expected {err}", e.code()));
                }
            }
            (Some(err), Ok(out)) => failures.push(format!("{name}: expected {err}, got {out}")),
            (None, Err(e)) => failures.push(format!("{name}: unexpected {} {e}", e.code())),
            (None, Ok(out)) => {
                let out: Value = serde_json::from_str(&out).unwrap();
                if out != fx["expect"] {
                    failures.push(format!("{name}: got {out}, expected {}", fx["expect"]));
                }
            }
        }
        // the removals, taken from the list as sent, give the same answer (or the same error)
        let removals = gate.filter_tools_removals(d, &fx["tools"].to_string(), &gate.anonymous());
        match (gate.filter_tools(d, &fx["tools"].to_string()), removals) {
            (Err(a), Err(b)) if a.to_string() == b.to_string() => {}
            (Ok(text), Ok(paths)) => {
                if let Err(why) = well_ordered(&paths) {
                    failures.push(format!("{name}: removals {paths:?}: {why}"));
                }
                let mut mine = fx["tools"].clone();
                if !remove_paths(&mut mine, &paths) {
                    failures.push(format!("{name}: removals {paths:?} name something not in the list as sent"));
                }
                // compared as text: the same members in the same order
                if serde_json::to_string(&mine).unwrap() != text {
                    failures.push(format!("{name}: removals {paths:?} leave {mine}, filter_tools answers {text}"));
                }
            }
            (a, b) => failures.push(format!("{name}: filter_tools {a:?} but filter_tools_removals {b:?}")),
        }
    }
    assert!(count >= 4, "tool-list fixtures missing");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The order the removals promise: document order (within one array, ascending indices), and
/// no path a prefix of another.
fn well_ordered(paths: &[Vec<Seg>]) -> Result<(), String> {
    for (i, a) in paths.iter().enumerate() {
        for b in &paths[i + 1..] {
            if b.starts_with(a) || a.starts_with(b) {
                return Err(format!("{a:?} and {b:?}: one inside the other"));
            }
            let shared = a.iter().zip(b).take_while(|(x, y)| x == y).count();
            if let (Some(Seg::Index(x)), Some(Seg::Index(y))) = (a.get(shared), b.get(shared)) {
                if x > y {
                    return Err(format!("{a:?} before {b:?}: not in document order"));
                }
            }
        }
    }
    Ok(())
}

/// A tool list holding a key written twice (or a prototype key) is refused whole (`E_PAYLOAD`
/// naming where): a reader keeping the other copy would see another name or schema than the one
/// the gate filtered.
#[test]
fn a_tool_list_read_two_ways_is_refused() {
    let gate = Gate::from_json(&fs::read_to_string(root().join("dialects/tools.json")).unwrap()).unwrap();
    let cases = [
        (Dialect::OpenAi, r#"[{"type":"function","function":{"name":"undeclared","name":"search","parameters":{"type":"object"}}}]"#, "[0].function"),
        (Dialect::Anthropic, r#"[{"name":"search","input_schema":{"type":"object","properties":{},"properties":{"q":{}}}}]"#, "[0].input_schema"),
        (Dialect::Mcp, r#"{"tools":[{"name":"search","inputSchema":{"type":"object"},"__proto__":{"x":1}}]}"#, "tools[0]"),
    ];
    for (d, text, at) in cases {
        let err = gate.filter_tools(d, text).expect_err(text);
        assert_eq!(err.code(), "E_PAYLOAD", "{text}: {err}");
        assert!(err.to_string().contains(at), "{text}: {err}");
    }
    // the same lists written once each are read as before
    let once = r#"[{"type":"function","function":{"name":"search","parameters":{"type":"object"}}}]"#;
    assert!(gate.filter_tools(Dialect::OpenAi, once).is_ok());
}
