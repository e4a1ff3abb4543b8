//! The config's `schemas`: offline documents a tool schema's `$ref` may name. A known URI
//! resolves without the network; everything else a hostile config can try fails closed at
//! build time (`E_CONFIG` naming the URI), and nothing panics.

mod common;
use common::*;
use serde_json::{json, Value};
use toolgate_core::{Gate, Outcome};

const ADDRESS: &str = "https://example.com/address.json";

fn address() -> Value {
    json!({
        "type": "object",
        "properties": { "city": { "type": "string" }, "zip": { "type": "integer" } },
        "required": ["city"],
        "additionalProperties": false
    })
}

fn tool_config(schema: Value, schemas: Value, destructive: bool) -> Value {
    json!({ "tools": [{ "name": "t", "destructive": destructive, "inputSchema": schema }], "schemas": schemas })
}

fn config_error(config: Value) -> String {
    match Gate::from_json(&config.to_string()) {
        Ok(_) => panic!("config compiled: {config}"),
        Err(e) => {
            assert_eq!(e.code(), "E_CONFIG", "{e}");
            e.to_string()
        }
    }
}

fn ship_to() -> Value {
    json!({ "type": "object", "properties": { "to": { "$ref": ADDRESS } }, "required": ["to"] })
}

#[test]
fn a_known_uri_resolves_offline_for_strict_tools() {
    let g = gate_with(tool_config(ship_to(), json!({ ADDRESS: address() }), true));
    passed(&g, r#"{"to":{"city":"Lyon","zip":69001}}"#);
    rejected(&g, r#"{"to":{"zip":69001}}"#);
    rejected(&g, r#"{"to":{"city":"Lyon","zip":"69001"}}"#); // strict: never repaired
    rejected(&g, r#"{"to":{"city":"Lyon","evil":true}}"#);
}

#[test]
fn repair_tools_validate_through_the_registry_too() {
    let g = gate_with(tool_config(ship_to(), json!({ ADDRESS: address() }), false));
    passed(&g, r#"{"to":{"city":"Lyon"}}"#);
    // nothing is let through that the registry's schema refuses
    let v = g.check("t", r#"{"to":{"zip":1}}"#);
    assert_eq!(v.outcome, Outcome::Rejected, "{v:?}");
}

#[test]
fn pointers_into_a_registry_document_resolve() {
    let doc = json!({ "$defs": { "zip": { "type": "string", "pattern": "^[0-9]{5}$" } } });
    let schema = json!({ "type": "object", "properties": { "zip": { "$ref": "urn:example:defs#/$defs/zip" } } });
    let g = gate_with(tool_config(schema, json!({ "urn:example:defs": doc }), true));
    passed(&g, r#"{"zip":"69001"}"#);
    rejected(&g, r#"{"zip":"6900"}"#);
}

#[test]
fn an_unknown_remote_ref_is_a_config_error_naming_it() {
    for uri in ["https://evil.example/s.json", "http://localhost:1234/integer.json", "file:///etc/passwd"] {
        let schema = json!({ "type": "object", "properties": { "a": { "$ref": uri } } });
        let e = config_error(tool_config(schema.clone(), json!({ ADDRESS: address() }), true));
        assert!(e.contains(uri), "{e}");
        // without any registry the same
        let e = config_error(json!({ "tools": [{ "name": "t", "inputSchema": schema }] }));
        assert!(e.contains(uri), "{e}");
    }
}

#[test]
fn a_registry_document_naming_an_unknown_uri_is_refused() {
    let doc = json!({ "properties": { "x": { "$ref": "https://evil.example/next.json" } } });
    let e = config_error(tool_config(json!({ "type": "object" }), json!({ "urn:a": doc }), true));
    assert!(e.contains("https://evil.example/next.json") && e.contains("schemas"), "{e}");
    assert!(e.contains("never fetched"), "{e}");
    // an unknown meta-schema is not fetched either
    let e = config_error(tool_config(json!({ "type": "object" }), json!({ "urn:b": { "$schema": "https://evil.example/meta" } }), true));
    assert!(e.contains("https://evil.example/meta"), "{e}");
}

#[test]
fn reference_cycles_that_never_consume_the_value_are_refused() {
    // across documents: a validator would loop, or read the schema as `true` (fail open)
    let schemas = json!({ "urn:a": { "$ref": "urn:b" }, "urn:b": { "anyOf": [{ "$ref": "urn:a" }] } });
    let e = config_error(tool_config(json!({ "type": "object", "properties": { "x": { "$ref": "urn:a" } } }), schemas, true));
    assert!(e.contains("cycle"), "{e}");
    // inside a tool's own schema
    for schema in [
        json!({ "type": "object", "allOf": [{ "$ref": "#" }] }),
        json!({ "type": "object", "$defs": { "a": { "$ref": "#/$defs/b" }, "b": { "not": { "$ref": "#/$defs/a" } } }, "properties": { "x": { "$ref": "#/$defs/a" } } }),
        json!({ "type": "object", "properties": { "x": { "$ref": "#/properties/x" } } }),
    ] {
        let e = config_error(json!({ "tools": [{ "name": "t", "inputSchema": schema }] }));
        assert!(e.contains("cycle") && e.contains("tool `t`"), "{e}");
    }
    // recursion through a property (a tree) is fine
    let tree = json!({ "type": "object", "properties": { "kids": { "type": "array", "items": { "$ref": "#" } } } });
    let g = gate(tree);
    passed(&g, r#"{"kids":[{"kids":[]}]}"#);
}

#[test]
fn registry_keys_and_documents_are_checked() {
    for (uri, doc) in [("address.json", json!({})), ("https://e.com/a.json#/x", json!({})), ("urn:x", json!(5)), ("urn:y", json!([]))] {
        let e = config_error(tool_config(json!({ "type": "object" }), json!({ uri: doc }), true));
        assert!(e.contains("schemas"), "{e}");
    }
    let e = config_error(json!({ "tools": [], "schemas": [] }));
    assert!(e.contains("schemas"), "{e}");
}

#[test]
fn the_registry_is_bounded() {
    let mut many = serde_json::Map::new();
    for i in 0..=256 {
        many.insert(format!("urn:s:{i}"), json!({ "type": "string" }));
    }
    assert!(config_error(tool_config(json!({ "type": "object" }), Value::Object(many), true)).contains("at most 256"));
    let big = json!({ "urn:big": { "description": "x".repeat(5 << 20) } });
    assert!(config_error(tool_config(json!({ "type": "object" }), big, true)).contains("bytes"));
    // a long chain of references, each through a property: refused before any recursive compile
    let mut defs = serde_json::Map::new();
    for i in 0..400 {
        defs.insert(format!("d{i}"), json!({ "type": "object", "properties": { "x": { "$ref": format!("urn:chain#/$defs/d{}", i + 1) } } }));
    }
    defs.insert("d400".into(), json!({ "type": "string" }));
    let schema = json!({ "type": "object", "properties": { "x": { "$ref": "urn:chain#/$defs/d0" } } });
    let e = config_error(tool_config(schema, json!({ "urn:chain": { "$defs": defs } }), true));
    assert!(e.contains("deeper"), "{e}");
}
