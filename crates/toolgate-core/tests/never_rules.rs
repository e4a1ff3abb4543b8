//! Never-rules, strict tools, hostile input and the messages a model gets back.

mod common;
use common::*;
use serde_json::json;
use toolgate_core::Reason;

fn search() -> toolgate_core::Gate {
    gate_with(json!({"tools":[
        {"name":"search_db","inputSchema":{"type":"object","properties":{
            "query":{"type":"string"},"limit":{"type":"integer","minimum":1},
            "status":{"type":"string","enum":["active","inactive","archived"]}},
            "required":["query"],"additionalProperties":false}},
        {"name":"delete_file","destructive":true,"inputSchema":{"type":"object","properties":{
            "path":{"type":"string"},"force":{"type":"boolean","default":false}},"required":["path"],"additionalProperties":false}},
        {"name":"read_file","inputSchema":{"type":"object","properties":{"path":{"type":"string"}}}}
    ]}))
}

#[test]
fn no_lossy_truncation_no_guessing_no_invention() {
    let g = search();
    for args in [r#"{"query":"x","limit":3.7}"#, r#"{"query":"x","status":"act"}"#, r#"{"limit":5}"#, r#"{"query":"x","limit":null}"#] {
        let v = g.check("search_db", args);
        assert_eq!(v.reason, Some(Reason::Invalid), "{args}: {v:?}");
    }
}

#[test]
fn destructive_tools_are_strict() {
    let g = search();
    let v = g.check("delete_file", r#"{"path":"a.txt","force":"true"}"#);
    assert_eq!(v.reason, Some(Reason::Invalid));
    let v = g.check("delete_file", r#"{"path":"a.txt","extra":1}"#);
    assert!(v.message.unwrap().contains("`extra`: unknown field"));
    // not even defaults: the arguments run exactly as sent
    let v = g.check("delete_file", r#"{"path":"a.txt"}"#);
    assert!(v.untouched);
    assert_eq!(v.arguments, Some(json!({"path":"a.txt"})));
    let v = g.check("delete_file", r#""{\"path\":\"a\"}""#);
    assert_eq!(v.reason, Some(Reason::BadArguments));
}

#[test]
fn rejection_message_is_for_the_model() {
    let g = search();
    let v = g.check("search_db", r#"{"limit":"ten","status":"paused","extra":{"x":1}}"#);
    let m = v.message.unwrap();
    assert_eq!(
        m,
        "Invalid arguments for tool `search_db`:\n\
         - `limit`: expected integer, got \"ten\".\n\
         - `status`: must be one of \"active\", \"inactive\", \"archived\"; got \"paused\".\n\
         - `query`: required field is missing.\n\
         Fix these arguments and call `search_db` again."
    );
    assert!(!m.contains("/properties"), "no schema paths");
}

#[test]
fn unknown_tools_get_suggestions() {
    let g = search();
    let v = g.check("serch_db", "{}");
    assert_eq!(v.reason, Some(Reason::UnknownTool));
    assert!(v.message.unwrap().starts_with("Unknown tool `serch_db`. Did you mean `search_db`?"));
    // exact names only: case, zero-width characters and homoglyphs are other names
    for name in ["Search_db", "search_db\u{200b}", "sеarch_db"] {
        assert_eq!(g.check(name, "{}").reason, Some(Reason::UnknownTool), "{name}");
    }
}

#[test]
fn hostile_inputs_are_bad_arguments() {
    let g = search();
    let deep = "{\"query\":".to_string() + &"[".repeat(70) + &"]".repeat(70) + "}";
    let cases = [
        r#"{"query":"a","query":"b"}"#.to_string(),
        r#"{"query":"a","\u0071uery":"b"}"#.to_string(),
        r#"{"query":"a","__proto__":{"admin":true}}"#.to_string(),
        r#"{"query":"a","constructor":{"prototype":{"x":1}}}"#.to_string(),
        r#"{"query":"x","limit":"#.to_string(),
        r#"{"query":"x","limit":1e999}"#.to_string(),
        r#"{"query":NaN}"#.to_string(),
        deep,
        format!(r#"{{"query":"{}"}}"#, "a".repeat(1 << 20)),
    ];
    for args in &cases {
        let v = g.check("search_db", args);
        assert_eq!(v.reason, Some(Reason::BadArguments), "{}: {v:?}", &args[..args.len().min(60)]);
        assert!(v.message.as_ref().unwrap().len() < 400, "bounded message");
    }
}

#[test]
fn integers_beyond_64_bits_are_refused() {
    let g = search();
    // integral floats beyond 64 bits: the same double everywhere, so a schema matter (`invalid`)
    for big in ["1e20", "-9300000000000000000"] {
        let v = g.check("search_db", &format!(r#"{{"query":"x","limit":{big}}}"#));
        assert_eq!(v.reason, Some(Reason::Invalid), "{big}");
        assert!(v.message.unwrap().contains("out of range"));
        let strict = gate_with(json!({"tools":[{"name":"t","destructive":true,"inputSchema":{"type":"object","properties":{"n":{"type":"integer"}}}}]}));
        let v = strict.check("t", &format!(r#"{{"n":{big}}}"#));
        assert_eq!(v.reason, Some(Reason::Invalid), "strict {big}");
    }
}

/// An integer literal beyond ±(2^53 − 1) is exact here but rounded by `JSON.parse` in a
/// JavaScript host or tool: a deny on one id would let its neighbour through. Refused.
#[test]
fn integers_a_javascript_tool_cannot_receive_exactly_are_refused() {
    let g = gate_with(json!({"tools":[{"name":"t"},{"name":"s","destructive":true}]}));
    for big in ["9007199254740992", "9007199254740993", "-9007199254740993", "18446744073709551615"] {
        for tool in ["t", "s"] {
            let v = g.check(tool, &format!(r#"{{"a":{{"id":{big}}}}}"#));
            assert_eq!(v.reason, Some(Reason::BadArguments), "{tool} {big}");
            assert!(v.message.as_ref().unwrap().contains("a.id"), "{v:?}");
        }
    }
    assert!(g.check("t", r#"{"id":9007199254740991,"n":-9007199254740991}"#).allowed());
    // inside a stringified object the model sent: unpacked, then checked
    assert_eq!(g.check("t", r#""{\"id\":9007199254740993}""#).reason, Some(Reason::BadArguments));
}

/// Keys equal under case folding in one object are refused unless the tool opts out.
#[test]
fn case_twin_keys_are_refused_unless_allowed() {
    let g = gate_with(json!({"tools":[{"name":"t"},{"name":"open","allowCaseTwinKeys":true}]}));
    for args in [r#"{"path":"reports/q3.csv","PATH":"../../etc/passwd"}"#, r#"{"x":[{"owner":"a","Owner":"b"}]}"#, r#"{"k":1,"\u212a":2}"#] {
        let v = g.check("t", args);
        assert_eq!(v.reason, Some(Reason::BadArguments), "{args}");
        assert!(v.message.unwrap().contains("letter case"));
        assert!(g.check("open", args).allowed(), "{args}");
    }
    let all_open = gate_with(json!({"allowCaseTwinKeys":true,"tools":[{"name":"t"},{"name":"closed","allowCaseTwinKeys":false}]}));
    assert!(all_open.check("t", r#"{"a":1,"A":2}"#).allowed());
    assert_eq!(all_open.check("closed", r#"{"a":1,"A":2}"#).reason, Some(Reason::BadArguments));
    // a default injected beside a twin the model sent is caught after the repair
    let d = gate_with(json!({"tools":[{"name":"t","inputSchema":{"type":"object","properties":{"limit":{"type":"integer","default":5}}}}]}));
    assert_eq!(d.check("t", r#"{"LIMIT":1000}"#).reason, Some(Reason::BadArguments));
}

#[test]
fn limits_are_configurable() {
    let g = gate_with(json!({"limits":{"maxDepth":3,"maxArgumentBytes":64},"tools":[{"name":"t"}]}));
    assert_eq!(g.check("t", r#"{"a":[[[1]]]}"#).reason, Some(Reason::BadArguments));
    assert!(g.check("t", r#"{"a":[1]}"#).allowed());
    assert_eq!(g.check("t", &format!(r#"{{"a":"{}"}}"#, "x".repeat(64))).reason, Some(Reason::BadArguments));
    let open = gate_with(json!({"allowProtoKeys":true,"tools":[{"name":"t"}]}));
    assert!(open.check("t", r#"{"__proto__":{"a":1}}"#).allowed());
}

#[test]
fn payload_size_is_bounded_by_its_own_limit() {
    let gate = toolgate_core::Gate::from_json(r#"{"tools":[{"name":"ping"}],"limits":{"maxPayloadBytes":64}}"#).unwrap();
    let small = r#"{"role":"assistant","content":null}"#;
    assert!(gate.guard(toolgate_core::DialectChoice::Auto, small, &Default::default()).is_ok());
    let big = format!(r#"{{"role":"assistant","content":"{}"}}"#, "x".repeat(100));
    let err = gate.guard(toolgate_core::DialectChoice::Auto, &big, &Default::default()).unwrap_err();
    assert_eq!(err.code(), "E_PAYLOAD");
    assert!(err.to_string().contains("limits.maxPayloadBytes"), "{err}");
}
