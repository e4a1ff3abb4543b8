//! `anyOf`/`oneOf`/`allOf`, `type` arrays, nullable unions and refs.

mod common;
use common::*;
use serde_json::json;

#[test]
fn untouched_branch_wins() {
    let g = gate(json!({"type":"object","properties":{"v":{"anyOf":[{"type":"string"},{"type":"integer"}]}}}));
    passed(&g, r#"{"v":"42"}"#); // validates as a string: not converted
}

#[test]
fn first_branch_that_validates_after_repair() {
    let g = gate(json!({"type":"object","properties":{"v":{"anyOf":[{"type":"integer"},{"type":"boolean"}]}}}));
    repaired(&g, r#"{"v":"7"}"#, json!({"v":7}));
    repaired(&g, r#"{"v":"true"}"#, json!({"v":true}));
    rejected(&g, r#"{"v":"maybe"}"#);
}

#[test]
fn closed_object_branches() {
    let a = json!({"type":"object","properties":{"kind":{"const":"file"},"path":{"type":"string"}},"required":["kind","path"],"additionalProperties":false});
    let b = json!({"type":"object","properties":{"kind":{"const":"url"},"url":{"type":"string"}},"required":["kind","url"],"additionalProperties":false});
    let g = gate(json!({"type":"object","properties":{"source":{"anyOf":[a, b]}},"required":["source"]}));
    passed(&g, r#"{"source":{"kind":"url","url":"https://x"}}"#);
    // the url branch validates only after pruning `note`; the file branch never does
    let fl = repaired(&g, r#"{"source":{"kind":"url","url":"https://x","note":1}}"#, json!({"source":{"kind":"url","url":"https://x"}}));
    assert_eq!(fl, vec![f("PrunedUnknownProperty", "/source/note")]);
    rejected(&g, r#"{"source":{"kind":"ftp"}}"#);
}

#[test]
fn nullable_unions() {
    let g = gate(json!({"type":"object","properties":{
        "a":{"anyOf":[{"type":"integer"},{"type":"null"}]},
        "b":{"type":["integer","null"]},
        "c":{"oneOf":[{"type":"string","enum":["x","y"]},{"type":"null"}]}
    }}));
    passed(&g, r#"{"a":null,"b":null,"c":null}"#);
    repaired(&g, r#"{"a":"1","b":"2","c":"X"}"#, json!({"a":1,"b":2,"c":"x"}));
    rejected(&g, r#"{"b":"null"}"#);
}

#[test]
fn type_arrays_pick_a_lossless_conversion() {
    let g = gate(json!({"type":"object","properties":{"v":{"type":["boolean","integer"]}}}));
    repaired(&g, r#"{"v":"1"}"#, json!({"v":1}));
    repaired(&g, r#"{"v":"false"}"#, json!({"v":false}));
    rejected(&g, r#"{"v":"1.5"}"#);
}

#[test]
fn all_of_applies_every_part() {
    let g = gate(json!({"type":"object","allOf":[
        {"properties":{"a":{"type":"integer"}}},
        {"properties":{"b":{"type":"boolean"}}}
    ]}));
    repaired(&g, r#"{"a":"1","b":"True"}"#, json!({"a":1,"b":true}));
}

#[test]
fn refs_defs_and_definitions() {
    let g = gate(json!({"type":"object",
        "$defs":{"n":{"type":"integer","minimum":1}},
        "definitions":{"s":{"type":"string"}},
        "properties":{"n":{"$ref":"#/$defs/n"},"s":{"$ref":"#/definitions/s"}}
    }));
    repaired(&g, r#"{"n":"3","s":4}"#, json!({"n":3,"s":"4"}));
    rejected(&g, r#"{"n":"0"}"#);
    let dangling =
        toolgate_core::Gate::from_json(r##"{"tools":[{"name":"t","inputSchema":{"type":"object","properties":{"a":{"$ref":"#/$defs/missing"}}}}]}"##);
    assert_eq!(dangling.unwrap_err().code(), "E_CONFIG");
}

#[test]
fn recursive_schemas_repair_at_depth() {
    let g = gate(json!({"type":"object","$defs":{"node":{"type":"object","properties":{
        "v":{"type":"integer"},"kids":{"type":"array","items":{"$ref":"#/$defs/node"}}}}},
        "properties":{"root":{"$ref":"#/$defs/node"}}}));
    repaired(&g, r#"{"root":{"v":"1","kids":[{"v":"2","kids":[{"v":"3"}]}]}}"#, json!({"root":{"v":1,"kids":[{"v":2,"kids":[{"v":3}]}]}}));
}

#[test]
fn draft07_schemas_compile_and_repair() {
    let g = gate(json!({"$schema":"http://json-schema.org/draft-07/schema#","type":"object",
        "definitions":{"p":{"type":"integer"}},
        "properties":{"p":{"$ref":"#/definitions/p"},"pair":{"type":"array","items":[{"type":"string"},{"type":"integer"}]}}}));
    repaired(&g, r#"{"p":"1","pair":[1,"2"]}"#, json!({"p":1,"pair":["1",2]}));
}

#[test]
fn formats_are_validated() {
    let g = gate(json!({"type":"object","properties":{"when":{"type":"string","format":"date"},"mail":{"type":"string","format":"email"}}}));
    passed(&g, r#"{"when":"2026-11-29","mail":"a@b.co"}"#);
    let v = rejected(&g, r#"{"when":"29/11/2026"}"#);
    assert!(v.message.unwrap().contains("must be a valid date"));
}
