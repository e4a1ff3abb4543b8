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

/// `n` one-byte-argument calls to tool `nope` (unknown: each would be answered with its own
/// message) in one Anthropic message.
fn many_calls(n: usize) -> String {
    let blocks: Vec<String> = (0..n).map(|i| format!(r#"{{"type":"tool_use","id":"t{i}","name":"nope","input":{{}}}}"#)).collect();
    format!(r#"{{"type":"message","role":"assistant","content":[{}]}}"#, blocks.join(","))
}

#[test]
fn a_turn_of_more_calls_than_the_bound_is_refused_before_any_is_decided() {
    let g = gate();
    let ok = g.guard(DialectChoice::Is(Dialect::Anthropic), &many_calls(toolgate_core::MAX_TURN_CALLS), &Default::default()).expect("at the bound");
    assert_eq!(ok.calls.len(), toolgate_core::MAX_TURN_CALLS);
    // before: 15,000 calls in a 1 MB turn made ~30 MB of refusal messages
    let e = g.guard(DialectChoice::Is(Dialect::Anthropic), &many_calls(toolgate_core::MAX_TURN_CALLS + 1), &Default::default()).expect_err("past the bound");
    assert_eq!(e.code(), "E_PAYLOAD");
    assert!(e.to_string().contains("1025 tool calls in one turn; at most 1024"), "{e}");
    // a stream likewise: the call past the bound fails it
    let mut s = g.stream(Dialect::Anthropic).expect("stream");
    s.push(&g, r#"{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"model":"claude","stop_reason":null,"usage":{"input_tokens":1,"output_tokens":1}}}"#).expect("start");
    let mut failed = None;
    for i in 0..=toolgate_core::MAX_TURN_CALLS {
        let start = format!(r#"{{"type":"content_block_start","index":{i},"content_block":{{"type":"tool_use","id":"t{i}","name":"nope","input":{{}}}}}}"#);
        let stop = format!(r#"{{"type":"content_block_stop","index":{i}}}"#);
        if let Err(e) = s.push(&g, &start).and_then(|_| s.push(&g, &stop)) {
            failed = Some((i, e));
            break;
        }
    }
    let (i, e) = failed.expect("the stream fails");
    assert_eq!((i, e.code()), (toolgate_core::MAX_TURN_CALLS, "E_PAYLOAD"));
    assert!(e.to_string().contains("more than 1024 tool calls in one stream"), "{e}");
}
