//! The official JSON Schema Test Suite (draft 2020-12 and draft-07, with `optional/`) through
//! strict tools: each case's schema is served from the config's offline `schemas` (beside the
//! suite's `remotes/`, so the `refRemote` cases run without the network) and a strict tool
//! (`destructive: true`) takes the case's data as its one argument `value`. A case passes when
//! the gate lets the data through exactly when the suite says it is valid.
//!
//! Prints the pass percentage per draft (required and optional apart) and fails when one falls
//! below its recorded baseline (docs/json-schema.md lists what still differs, and why).
//! The suite lives in `../shared/conformance/json-schema-test-suite` beside the repository
//! (or `TOOLGATE_CONFORMANCE_DIR`); without it the test is skipped with a message, except under
//! `CI=true`, where a missing suite fails. `TOOLGATE_SUITE_REPORT=1` lists every failing case.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};
use toolgate_core::{Gate, Outcome};

/// Where the suite's `remotes/` documents are served from (as the suite expects).
const REMOTE_BASE: &str = "http://localhost:1234/";
/// The URI a case's own schema is registered under.
const CASE_URI: &str = "urn:toolgate:suite:case";

/// Pass percentages below which the run fails: (draft folder, part, baseline %).
/// Raise a baseline when a change makes more cases pass; never lower one to let a change in.
/// Measured with the suite at commit 44401e0c: 2020-12 1277/1299 and 925/926, draft-07 924/927
/// and 793/794 (docs/json-schema.md says which cases differ, and why).
const BASELINES: [(&str, Part, f64); 4] =
    [("draft2020-12", Part::Required, 98.3), ("draft2020-12", Part::Optional, 99.8), ("draft7", Part::Required, 99.6), ("draft7", Part::Optional, 99.8)];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Required,
    Optional,
}

/// The suite folder, or `None` when absent.
fn suite_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("TOOLGATE_CONFORMANCE_DIR") {
        Some(d) => PathBuf::from(d).join("json-schema-test-suite"),
        // crates/toolgate-core → the repository → its parent, where shared/ sits beside it
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance/json-schema-test-suite"),
    };
    dir.join("tests").is_dir().then_some(dir)
}

fn json_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            json_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "json") {
            out.push(p);
        }
    }
}

fn read(p: &Path) -> Value {
    serde_json::from_str(&fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The suite's `remotes/` documents a draft's cases may fetch, each under
/// `http://localhost:1234/…`. A document without `$schema` is read in the draft under test (as
/// the suite intends), so it is said outright.
fn remotes(suite: &Path, draft: &str) -> Map<String, Value> {
    let root = suite.join("remotes");
    let mut files = Vec::new();
    json_files(&root, &mut files);
    let mut out = Map::new();
    for f in files {
        let rel = f.strip_prefix(&root).expect("under remotes").to_string_lossy().replace('\\', "/");
        // other drafts' folders are for other drafts' runs (cross-draft cases name 2019-09)
        let first = rel.split('/').next().unwrap_or("");
        let folder_draft = if rel.contains('/') && (first.starts_with("draft") || first == "v1") { Some(first) } else { None };
        match folder_draft {
            None => drop(out.insert(format!("{REMOTE_BASE}{rel}"), case_document(&read(&f), draft))),
            Some(d) if d == draft || d == "draft2019-09" => drop(out.insert(format!("{REMOTE_BASE}{rel}"), case_document(&read(&f), d))),
            Some(_) => {}
        }
    }
    out
}

/// A case's schema as a registry document, read in `draft`: a document without `$schema` of a
/// draft other than 2020-12 (the registry's default) gets its `$schema` said outright.
fn case_document(schema: &Value, draft: &str) -> Value {
    let meta = match draft {
        "draft7" => "http://json-schema.org/draft-07/schema#",
        "draft2019-09" => "https://json-schema.org/draft/2019-09/schema",
        _ => return schema.clone(),
    };
    match schema {
        Value::Object(o) if !o.contains_key("$schema") => {
            let mut o = o.clone();
            o.insert("$schema".into(), json!(meta));
            Value::Object(o)
        }
        _ => schema.clone(),
    }
}

#[derive(Default)]
struct Tally {
    passed: usize,
    total: usize,
    failures: Vec<String>,
}

fn run_draft(suite: &Path, draft: &str) -> (Tally, Tally) {
    let remotes = remotes(suite, draft);
    let mut files = Vec::new();
    json_files(&suite.join("tests").join(draft), &mut files);
    let (mut required, mut optional) = (Tally::default(), Tally::default());
    for file in files {
        let rel = file.strip_prefix(suite.join("tests").join(draft)).expect("under the draft").to_string_lossy().replace('\\', "/");
        let tally = if rel.starts_with("optional/") { &mut optional } else { &mut required };
        let Value::Array(groups) = read(&file) else { panic!("{rel}: not a list") };
        for group in groups {
            let what = group["description"].as_str().unwrap_or("?").to_string();
            let mut schemas = remotes.clone();
            schemas.insert(CASE_URI.into(), case_document(&group["schema"], draft));
            let wrapper = json!({
                "type": "object",
                "properties": { "value": { "$ref": CASE_URI } },
                "required": ["value"],
                "additionalProperties": false
            });
            let config = json!({ "tools": [{ "name": "t", "destructive": true, "inputSchema": wrapper }], "schemas": schemas });
            let gate = Gate::from_json(&config.to_string());
            for test in group["tests"].as_array().into_iter().flatten() {
                tally.total += 1;
                let valid = test["valid"].as_bool().expect("valid is a boolean");
                let got = match &gate {
                    Ok(g) => {
                        let v = g.check("t", &json!({ "value": test["data"] }).to_string());
                        Ok(matches!(v.outcome, Outcome::Passed | Outcome::Repaired))
                    }
                    Err(e) => Err(e.to_string()),
                };
                if got.as_ref() == Ok(&valid) {
                    tally.passed += 1;
                } else {
                    let why = match got {
                        Ok(_) => format!("expected {}", if valid { "valid" } else { "invalid" }),
                        Err(e) => format!("config refused: {}", e.chars().take(160).collect::<String>()),
                    };
                    tally.failures.push(format!("{rel} | {what} | {} | {why}", test["description"].as_str().unwrap_or("?")));
                }
            }
        }
    }
    (required, optional)
}

fn pct(t: &Tally) -> f64 {
    if t.total == 0 {
        100.0
    } else {
        100.0 * t.passed as f64 / t.total as f64
    }
}

#[test]
fn json_schema_test_suite_through_strict_tools() {
    let Some(suite) = suite_dir() else {
        let msg = "JSON Schema Test Suite not found (../shared/conformance/json-schema-test-suite beside the repository, or TOOLGATE_CONFORMANCE_DIR)";
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("{msg}: CI must run it");
        }
        eprintln!("SKIPPED: {msg}");
        return;
    };
    let report = std::env::var_os("TOOLGATE_SUITE_REPORT").is_some();
    let mut below = Vec::new();
    for draft in ["draft2020-12", "draft7"] {
        let (required, optional) = run_draft(&suite, draft);
        let all = Tally { passed: required.passed + optional.passed, total: required.total + optional.total, failures: Vec::new() };
        println!("JSON Schema Test Suite {draft}: {}/{} = {:.1}% (required and optional)", all.passed, all.total, pct(&all));
        for (part, t) in [(Part::Required, &required), (Part::Optional, &optional)] {
            let p = pct(t);
            let base = BASELINES.iter().find(|(d, pp, _)| *d == draft && *pp == part).map(|b| b.2).expect("a baseline per draft and part");
            println!("JSON Schema Test Suite {draft} {part:?}: {}/{} = {p:.1}% (baseline {base}%)", t.passed, t.total);
            if report {
                for f in &t.failures {
                    println!("  FAIL {draft} | {f}");
                }
            }
            if p + 1e-9 < base {
                below.push(format!("{draft} {part:?}: {p:.1}% < baseline {base}%"));
            }
        }
    }
    assert!(below.is_empty(), "fell below the recorded baselines: {below:?}");
}
