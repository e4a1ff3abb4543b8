//! Every row of the coercion matrix, with its edge rules, at the root and nested.
#![allow(clippy::approx_constant)] // "3.14" is the repair table's own example (README "What gets repaired")

mod common;
use common::*;
use serde_json::json;

fn nested(inner: serde_json::Value) -> serde_json::Value {
    // the same field at depth 1 and inside an object inside an array
    json!({ "type": "object", "properties": {
        "x": inner.clone(),
        "deep": { "type": "array", "items": { "type": "object", "properties": { "x": inner } } }
    }})
}

#[test]
fn string_to_integer_only_from_clean_literals() {
    let g = gate(nested(json!({"type": "integer"})));
    let fl = repaired(&g, r#"{"x":"42","deep":[{"x":"-7"}]}"#, json!({"x":42,"deep":[{"x":-7}]}));
    assert_eq!(fl, vec![f("StringToInteger", "/x"), f("StringToInteger", "/deep/0/x")]);
    for bad in ["\"+5\"", "\"05\"", "\"1e3\"", "\"4.0\"", "\"ten\"", "3.7", "null", "\" 4\"", "\"99999999999999999999\""] {
        rejected(&g, &format!(r#"{{"deep":[{{"x":{bad}}}]}}"#));
    }
    passed(&g, r#"{"x":4.0}"#); // an integral float is an integer already
}

#[test]
fn string_to_float_from_json_number_literals() {
    let g = gate(nested(json!({"type": "number"})));
    let fl = repaired(&g, r#"{"x":"3.14","deep":[{"x":"1e3"},{"x":"-2"}]}"#, json!({"x":3.14,"deep":[{"x":1000},{"x":-2}]}));
    assert_eq!(fl, vec![f("StringToFloat", "/x"), f("StringToFloat", "/deep/0/x"), f("StringToFloat", "/deep/1/x")]);
    for bad in ["\"1e400\"", "\".5\"", "\"NaN\"", "\"Infinity\"", "\"0x10\"", "null", "\"\""] {
        rejected(&g, &format!(r#"{{"x":{bad}}}"#));
    }
}

#[test]
fn string_to_boolean_case_insensitive_only_true_false() {
    let g = gate(nested(json!({"type": "boolean"})));
    let fl = repaired(&g, r#"{"x":"False","deep":[{"x":"TRUE"}]}"#, json!({"x":false,"deep":[{"x":true}]}));
    assert_eq!(fl, vec![f("StringToBoolean", "/x"), f("StringToBoolean", "/deep/0/x")]);
    for bad in ["\"1\"", "\"yes\"", "0", "1", "null"] {
        rejected(&g, &format!(r#"{{"x":{bad}}}"#));
    }
}

#[test]
fn primitive_to_string() {
    let g = gate(nested(json!({"type": "string"})));
    let fl = repaired(&g, r#"{"x":123,"deep":[{"x":true},{"x":1.5}]}"#, json!({"x":"123","deep":[{"x":"true"},{"x":"1.5"}]}));
    assert_eq!(fl.len(), 3);
    assert!(fl.iter().all(|(c, _)| c == "PrimitiveToString"));
    rejected(&g, r#"{"x":null}"#); // null is never invented into a string
    rejected(&g, r#"{"x":{"a":1}}"#);
}

#[test]
fn scalar_wrapped_in_array_and_items_repaired() {
    let g = gate(nested(json!({"type": "array", "items": {"type": "integer"}})));
    let fl = repaired(&g, r#"{"x":"5","deep":[{"x":7}]}"#, json!({"x":[5],"deep":[{"x":[7]}]}));
    assert_eq!(fl, vec![f("WrappedScalarInArray", "/x"), f("StringToInteger", "/x/0"), f("WrappedScalarInArray", "/deep/0/x")]);
    let g = gate(nested(json!({"type": "array", "items": {"type": "string"}})));
    repaired(&g, r#"{"x":"rust"}"#, json!({"x":["rust"]}));
    rejected(&g, r#"{"x":null}"#);
}

#[test]
fn enum_case_normalized_unless_ambiguous() {
    let g = gate(nested(json!({"type": "string", "enum": ["active", "inactive", "archived"]})));
    let fl = repaired(&g, r#"{"x":"ACTIVE","deep":[{"x":"Archived"}]}"#, json!({"x":"active","deep":[{"x":"archived"}]}));
    assert_eq!(fl, vec![f("EnumCaseNormalized", "/x"), f("EnumCaseNormalized", "/deep/0/x")]);
    let amb = gate(nested(json!({"type": "string", "enum": ["On", "on", "off"]})));
    let v = rejected(&amb, r#"{"x":"ON"}"#);
    assert!(v.message.unwrap().contains("must be one of \"On\", \"on\", \"off\""));
}

#[test]
fn enum_fuzzy_matched_only_when_unique_within_one_edit() {
    let g = gate(nested(json!({"type": "string", "enum": ["active", "inactive", "archived"]})));
    let fl = repaired(&g, r#"{"x":"actve","deep":[{"x":"archivd"}]}"#, json!({"x":"active","deep":[{"x":"archived"}]}));
    assert_eq!(fl, vec![f("EnumFuzzyMatched", "/x"), f("EnumFuzzyMatched", "/deep/0/x")]);
    rejected(&g, r#"{"x":"actv"}"#); // two edits away
    let amb = gate(nested(json!({"type": "string", "enum": ["on", "off"]})));
    rejected(&amb, r#"{"x":"of"}"#); // one edit from both
}

#[test]
fn enum_match_of_a_long_string_costs_its_length_not_its_length_times_each_value() {
    // 400 values of ~22 characters, like time zones; a one-edit match needs lengths one apart,
    // so a megabyte argument is never run through an edit distance (that took ~10 s)
    let zones: Vec<String> = (0..400).map(|i| format!("Region_{i}/City_Name_{i}")).collect();
    let g = gate(nested(json!({"type": "string", "enum": zones})));
    let long = format!(r#"{{"x":"{}"}}"#, "x".repeat(1_000_000));
    let t = std::time::Instant::now();
    rejected(&g, &long);
    assert!(t.elapsed() < std::time::Duration::from_secs(2), "took {:?}", t.elapsed());
    // still one edit away, either way, and in characters (not bytes)
    repaired(&g, r#"{"x":"Region_7/City_Name7"}"#, json!({"x":"Region_7/City_Name_7"}));
    let accents = gate(nested(json!({"type": "string", "enum": ["café", "thé"]})));
    repaired(&accents, r#"{"x":"cafée"}"#, json!({"x":"café"}));
}

#[test]
fn unknown_properties_pruned_only_when_closed() {
    let closed = json!({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false});
    let g = gate(json!({"type":"object","properties":{"inner": closed},"additionalProperties":false}));
    let fl = repaired(&g, r#"{"inner":{"a":"x","b":1},"extra":true}"#, json!({"inner":{"a":"x"}}));
    assert_eq!(fl, vec![f("PrunedUnknownProperty", "/extra"), f("PrunedUnknownProperty", "/inner/b")]);
    let open = gate(json!({"type":"object","properties":{"a":{"type":"string"}}}));
    passed(&open, r#"{"a":"x","b":1}"#);
    let pat = gate(json!({"type":"object","patternProperties":{"^x-":{"type":"integer"}},"additionalProperties":false}));
    repaired(&pat, r#"{"x-a":"1","y":2}"#, json!({"x-a":1}));
}

#[test]
fn defaults_injected_for_every_absent_property_with_one() {
    let g = gate(json!({"type":"object","properties":{
        "units": {"type":"string","enum":["metric","imperial"],"default":"metric"},
        "opts": {"type":"object","properties":{"days":{"type":"integer","default":3}}},
        "city": {"type":"string"}
    },"required":["city"]}));
    let fl = repaired(&g, r#"{"city":"Oslo","opts":{}}"#, json!({"city":"Oslo","opts":{"days":3},"units":"metric"}));
    assert_eq!(fl, vec![f("InjectedDefaultValue", "/opts/days"), f("InjectedDefaultValue", "/units")]);
    // a default never stands in for a required value
    let v = rejected(&g, r#"{}"#);
    assert!(v.message.unwrap().contains("`city`: required field is missing."));
    passed(&g, r#"{"city":"Oslo","opts":{"days":1},"units":"imperial"}"#);
}

#[test]
fn defaults_through_refs() {
    let g = gate(json!({"type":"object","$defs":{"u":{"type":"string","default":"metric"}},"properties":{"units":{"$ref":"#/$defs/u"}}}));
    repaired(&g, "{}", json!({"units":"metric"}));
}

#[test]
fn stringified_json_unpacked_then_checked() {
    let g = gate(json!({"type":"object","properties":{
        "filter": {"type":"object","properties":{"limit":{"type":"integer"}}},
        "tags": {"type":"array","items":{"type":"string"}}
    }}));
    let fl = repaired(&g, r#"{"filter":"{\"limit\":\"5\"}","tags":"[\"a\",\"b\"]"}"#, json!({"filter":{"limit":5},"tags":["a","b"]}));
    assert_eq!(fl, vec![f("UnpackedStringifiedJson", "/filter"), f("StringToInteger", "/filter/limit"), f("UnpackedStringifiedJson", "/tags")]);
    // hostile embedded JSON is never unpacked
    let v = rejected(&g, r#"{"filter":"{\"limit\":1,\"limit\":2}"}"#);
    assert!(v.message.unwrap().contains("twice"));
    rejected(&g, r#"{"filter":"{\"__proto__\":{}}"}"#);
    // a string that is not JSON of the expected type is wrapped for arrays, refused for objects
    repaired(&g, r#"{"tags":"{\"a\":1}"}"#, json!({"tags":["{\"a\":1}"]}));
    rejected(&g, r#"{"filter":"[1]"}"#);
}

#[test]
fn root_forms() {
    let g = gate(json!({"type":"object","properties":{"a":{"type":"integer"}}}));
    let v = g.check("t", "");
    assert_eq!(v.outcome, toolgate_core::Outcome::Passed);
    assert_eq!(v.arguments, Some(json!({})));
    assert!(!v.untouched, "the caller's empty text is not runnable as is");
    let v = g.check("t", "null");
    assert_eq!(v.arguments, Some(json!({})));
    let fl = repaired(&g, r#""{\"a\":\"1\"}""#, json!({"a":1}));
    assert_eq!(fl, vec![f("UnpackedStringifiedJson", ""), f("StringToInteger", "/a")]);
    for bad in ["[1]", "1", "true", "\"hello\"", "\"[1]\""] {
        let v = rejected(&g, bad);
        assert_eq!(v.reason, Some(toolgate_core::Reason::BadArguments), "{bad}");
    }
}

#[test]
fn untouched_calls_keep_the_callers_text() {
    let g = gate(json!({"type":"object","properties":{"a":{"type":"integer"}}}));
    assert!(passed(&g, r#"{ "a" : 1 }"#).untouched);
}
