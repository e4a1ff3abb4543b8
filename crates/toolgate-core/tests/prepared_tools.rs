//! Tool lists prepared once (`Gate::prepare_tools`) answer, for every caller, exactly what the
//! unprepared filter answers for the same text — including callers that alternate, callers whose
//! answers differ in one name only, more sets of answers than are remembered, and every
//! fixture under `__test__/fixtures/tool-lists/`.

use std::fs;
use std::path::PathBuf;

use serde_json::{json, Value};
use toolgate_core::tool_list::REMEMBERED_RUNS;
use toolgate_core::{CallContext, Dialect, Gate, Stage};

#[path = "common/fixtures.rs"]
mod fixtures;

fn root() -> PathBuf {
    fixtures::fixtures_root()
}

/// A gate whose callers see different tools: by role, by subject, and (Gemini) a capability.
fn policy_gate(max_payload_bytes: Option<u64>) -> Gate {
    let mut tools: Vec<Value> = (0..70).map(|i| json!({ "name": format!("t{i}") })).collect();
    tools.push(json!({ "name": "googleSearch" }));
    let mut config = json!({
        "version": 1,
        "tools": tools,
        "policy": { "rules": [
            { "id": "base", "effect": "allow", "tools": ["t1", "t2", "t3"] },
            { "id": "readers", "effect": "allow", "roles": ["reader"], "tools": ["t1*", "googleSearch"] },
            // one name apart from `readers`: t69 only
            { "id": "readers-plus", "effect": "allow", "roles": ["plus"], "tools": ["t69"] },
            { "id": "admins", "effect": "allow", "roles": ["admin"], "tools": ["*"] },
            { "id": "banned", "effect": "deny", "subjects": ["mallory"], "tools": ["*"] }
        ] }
    });
    if let Some(b) = max_payload_bytes {
        config["limits"] = json!({ "maxPayloadBytes": b });
    }
    Gate::from_json(&config.to_string()).unwrap()
}

fn openai_list() -> String {
    let defs: Vec<Value> = (0..72)
        .map(|i| {
            let name = if i == 71 { "undeclared".to_owned() } else { format!("t{i}") };
            json!({ "type": "function", "function": { "name": name, "parameters": { "type": "object", "properties": { "q": { "type": "string" } } } } })
        })
        .collect();
    Value::Array(defs).to_string()
}

fn callers() -> Vec<CallContext> {
    [
        r#"{}"#,
        r#"{"roles":["reader"]}"#,
        r#"{"roles":["reader","plus"]}"#,
        r#"{"roles":["admin"]}"#,
        r#"{"subject":"mallory","roles":["admin"]}"#,
        r#"{"roles":["plus"]}"#,
    ]
    .iter()
    .map(|c| CallContext::from_json(c).unwrap())
    .collect()
}

#[test]
fn alternating_callers_each_get_their_own_answer() {
    let gate = policy_gate(None);
    for (d, text) in [
        (Dialect::OpenAi, openai_list()),
        (
            Dialect::Gemini,
            json!([{ "functionDeclarations": [{ "name": "t1" }, { "name": "t69" }] }, { "googleSearch": {} }, { "functionDeclarations": [{ "name": "t5" }] }])
                .to_string(),
        ),
    ] {
        let prepared = gate.prepare_tools(d, &text).unwrap();
        let callers = callers();
        let mut distinct = std::collections::HashSet::new();
        // three rounds: the first makes each run, the others find it remembered
        for round in 0..3 {
            for c in &callers {
                let who = gate.who(c, Stage::Full);
                let want_text = gate.filter_tools_as(d, &text, &who).unwrap();
                let want_removed = gate.filter_tools_removals(d, &text, &who).unwrap();
                assert_eq!(&*gate.filter_prepared(&prepared, &who).unwrap(), want_text, "{d} round {round} {c:?}");
                assert_eq!(&*gate.filter_prepared_removals(&prepared, &who).unwrap(), &want_removed[..], "{d} round {round} {c:?}");
                distinct.insert(want_text);
            }
        }
        // the callers really see different lists (reader and reader+plus differ by t69 alone)
        assert!(distinct.len() >= 4, "{d}: {distinct:?}");
    }
}

#[test]
fn more_answer_sets_than_remembered_stay_exact() {
    // one subject per tool: each caller sees a different single tool, so there are more sets of
    // answers than the list remembers
    let n = REMEMBERED_RUNS + 8;
    let tools: Vec<Value> = (0..n).map(|i| json!({ "name": format!("t{i}") })).collect();
    let rules: Vec<Value> =
        (0..n).map(|i| json!({ "id": format!("r{i}"), "effect": "allow", "subjects": [format!("u{i}")], "tools": [format!("t{i}")] })).collect();
    let gate = Gate::from_json(&json!({ "version": 1, "tools": tools, "policy": { "rules": rules } }).to_string()).unwrap();
    let text = Value::Array((0..n).map(|i| json!({ "name": format!("t{i}"), "input_schema": { "type": "object" } })).collect()).to_string();
    let prepared = gate.prepare_tools(Dialect::Anthropic, &text).unwrap();
    for round in 0..2 {
        for i in (0..n).rev() {
            let c = CallContext::from_json(&format!(r#"{{"subject":"u{i}"}}"#)).unwrap();
            let who = gate.who(&c, Stage::Full);
            let got: Value = serde_json::from_str(&gate.filter_prepared(&prepared, &who).unwrap()).unwrap();
            assert_eq!(got, json!([{ "name": format!("t{i}"), "input_schema": { "type": "object" } }]), "round {round} u{i}");
        }
    }
}

#[test]
fn a_prepared_list_is_checked_like_an_unprepared_one() {
    let gate = policy_gate(None);
    // a key written twice, a nameless definition, the wrong shape: the same error at preparation
    for (d, text) in [
        (Dialect::OpenAi, r#"[{"type":"function","function":{"name":"t1","name":"t2"}}]"#),
        (Dialect::Anthropic, r#"[{"input_schema":{"type":"object"}}]"#),
        (Dialect::Mcp, r#"42"#),
        (Dialect::OpenAi, r#"[{"type":"function""#),
    ] {
        let want = gate.filter_tools(d, text).expect_err(text);
        let got = gate.prepare_tools(d, text).expect_err(text);
        assert_eq!((got.code(), got.to_string()), (want.code(), want.to_string()), "{text}");
    }
    // a gate with a smaller limit refuses a list another gate prepared
    let small = policy_gate(Some(64));
    let prepared = gate.prepare_tools(Dialect::OpenAi, &openai_list()).unwrap();
    let err = small.filter_prepared(&prepared, &small.anonymous()).expect_err("over the limit");
    assert_eq!(err.code(), "E_PAYLOAD");
    assert!(err.to_string().contains("limits.maxPayloadBytes"), "{err}");
    assert!(small.prepare_tools(Dialect::OpenAi, &openai_list()).is_err());
}

#[test]
fn every_tool_list_fixture_prepared_answers_as_unprepared() {
    let gate = Gate::from_json(&fs::read_to_string(root().join("dialects/tools.json")).unwrap()).unwrap();
    let mut count = 0;
    for (name, fx) in fixtures::load("tool-lists") {
        let d: Dialect = fx["dialect"].as_str().unwrap().parse().unwrap();
        let text = fx["tools"].to_string();
        let who = gate.anonymous();
        match (gate.filter_tools(d, &text), gate.prepare_tools(d, &text)) {
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{}", name),
            (Ok(want), Ok(prepared)) => {
                count += 1;
                for _ in 0..2 {
                    assert_eq!(&*gate.filter_prepared(&prepared, &who).unwrap(), want, "{}", name);
                    let removed = gate.filter_prepared_removals(&prepared, &who).unwrap();
                    assert_eq!(&removed[..], &gate.filter_tools_removals(d, &text, &who).unwrap()[..], "{}", name);
                }
            }
            (a, b) => panic!("{}: filter_tools {a:?}, prepare_tools {b:?}", name),
        }
    }
    assert!(count >= 10, "tool-list fixtures missing: {count}");
}
