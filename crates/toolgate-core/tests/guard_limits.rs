//! Limits hold for arguments that arrive as objects inside a turn (Anthropic `input`), exactly as
//! they do for argument text: too large or too deep refuses that call only.

use toolgate_core::{Dialect, DialectChoice, Gate, Outcome, Reason};

fn gate() -> Gate {
    Gate::from_json(r#"{"tools":[{"name":"ping"},{"name":"echo","inputSchema":{"type":"object"}}],"limits":{"maxArgumentBytes":200,"maxDepth":8}}"#).unwrap()
}

fn message(input_a: &str) -> String {
    format!(
        r#"{{"type":"message","role":"assistant","content":[{{"type":"tool_use","id":"t1","name":"echo","input":{input_a}}},{{"type":"tool_use","id":"t2","name":"ping","input":{{}}}}]}}"#
    )
}

fn guard(text: &str) -> toolgate_core::TurnReport {
    gate().guard(DialectChoice::Is(Dialect::Anthropic), text, &Default::default()).unwrap()
}

#[test]
fn an_object_argument_over_the_size_limit_refuses_that_call_only() {
    let big = format!(r#"{{"s":"{}"}}"#, "x".repeat(300));
    let r = guard(&message(&big));
    assert_eq!(r.calls[0].verdict.reason, Some(Reason::BadArguments));
    assert!(r.calls[0].verdict.message.as_deref().unwrap().contains("over the limit of 200 bytes"));
    assert_eq!(r.calls[1].verdict.outcome, Outcome::Passed);
    let fits = format!(r#"{{"s":"{}"}}"#, "x".repeat(100));
    assert_eq!(guard(&message(&fits)).calls[0].verdict.outcome, Outcome::Passed);
}

#[test]
fn an_object_argument_nested_too_deep_refuses_that_call_only() {
    let deep = format!("{}1{}", r#"{"a":"#.repeat(9), "}".repeat(9));
    let r = guard(&message(&deep));
    assert_eq!(r.calls[0].verdict.reason, Some(Reason::BadArguments));
    assert!(r.calls[0].verdict.message.as_deref().unwrap().contains("deeper than 8"));
    assert_eq!(r.calls[1].verdict.outcome, Outcome::Passed);
    let ok = format!("{}1{}", r#"{"a":"#.repeat(8), "}".repeat(8));
    assert_eq!(guard(&message(&ok)).calls[0].verdict.outcome, Outcome::Passed);
}

#[test]
fn a_turn_nested_far_beyond_the_limit_is_a_broken_payload() {
    let very = format!("{}1{}", r#"{"a":"#.repeat(40), "}".repeat(40));
    let err = gate().guard(DialectChoice::Is(Dialect::Anthropic), &message(&very), &Default::default()).unwrap_err();
    assert_eq!(err.code(), "E_PAYLOAD");
}

/// Chat Completions messages that clients read two ways are refused whole (E_PAYLOAD), never
/// decided one way and run another.
#[test]
fn ambiguous_chat_calls_are_refused() {
    let gate = toolgate_core::Gate::from_json(r#"{"tools":[{"name":"get_weather"},{"name":"delete_all"}]}"#).unwrap();
    let guard = |p: serde_json::Value| gate.guard(toolgate_core::DialectChoice::Is(toolgate_core::Dialect::OpenAi), &p.to_string(), &Default::default());
    let legacy_beside_empty = serde_json::json!({"role":"assistant","content":null,"tool_calls":[],
        "function_call":{"name":"delete_all","arguments":"{}"}});
    assert_eq!(guard(legacy_beside_empty).unwrap_err().code(), "E_PAYLOAD");
    let two_bodies = serde_json::json!({"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"custom",
        "custom":{"name":"get_weather","input":"x"},"function":{"name":"delete_all","arguments":"{}"}}]});
    assert_eq!(guard(two_bodies).unwrap_err().code(), "E_PAYLOAD");
    // the ordinary shapes still read
    let ok = serde_json::json!({"role":"assistant","content":null,"function_call":null,"tool_calls":[{"id":"c1","type":"function",
        "function":{"name":"get_weather","arguments":"{}"}}]});
    assert_eq!(guard(ok).unwrap().calls.len(), 1);
    let legacy = serde_json::json!({"role":"assistant","content":null,"function_call":{"name":"get_weather","arguments":"{}"}});
    assert_eq!(guard(legacy).unwrap().calls.len(), 1);
}
