//! Fuzzes `Gate::check` with arbitrary argument text against a handful of realistic schemas.
//!
//! Input layout: byte 0 picks the tool (`byte % 8`, so the ASCII digits `'0'`..`'7'` pick tools
//! 0..7 and seed files stay readable); the rest of the bytes, converted with
//! `String::from_utf8_lossy` (invalid UTF-8 becomes U+FFFD, as a host string with lone
//! surrogates would), is the arguments text.
//!
//! Oracle (a panic = a finding):
//! - `check` never panics;
//! - allowed (passed / repaired): `arguments` is `Some`, `message` and `reason` are `None`, it
//!   validates against the tool's schema as it is (an independent `jsonschema` validator built
//!   here from the same schema text), `passed` has no flags and `repaired` has some, an
//!   `untouched` verdict's arguments are exactly what the text parses to, and checking the
//!   returned arguments again gives `passed` with the same arguments (repair is idempotent);
//! - rejected: `arguments` is `None`, `message` is `Some` and non-empty, `reason` is `Some`.

#![no_main]

use std::sync::OnceLock;

use jsonschema::{PatternOptions, Validator};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use toolgate_core::{Gate, Outcome};

/// (name, destructive, inputSchema). Index = `data[0] % TOOLS.len()`; keep it at 8 entries so
/// `'0'`..`'7'` select 0..7.
const TOOLS: [(&str, bool, &str); 8] = [
    // 0: a search tool: integer with bounds + default, enums, arrays, closed object.
    (
        "search",
        false,
        r#"{"type":"object","properties":{
            "query":{"type":"string","minLength":1,"maxLength":200},
            "limit":{"type":"integer","minimum":1,"maximum":100,"default":10},
            "sort":{"type":"string","enum":["relevance","date","stars"],"default":"relevance"},
            "state":{"type":"string","enum":["open","closed","all"]},
            "tags":{"type":"array","items":{"type":"string"},"maxItems":10,"uniqueItems":true},
            "exact":{"type":"boolean"},
            "min_score":{"type":"number","minimum":0}
        },"required":["query"],"additionalProperties":false}"#,
    ),
    // 1: nested objects, $ref/$defs, anyOf of closed objects, oneOf, formats, nested defaults.
    (
        "create_event",
        false,
        r##"{"type":"object","$defs":{
            "point":{"type":"object","properties":{"lat":{"type":"number","minimum":-90,"maximum":90},"lon":{"type":"number","minimum":-180,"maximum":180}},"required":["lat","lon"],"additionalProperties":false},
            "address":{"type":"object","properties":{"street":{"type":"string"},"city":{"type":"string","minLength":1},"zip":{"type":"string","pattern":"^[0-9]{5}$"}},"required":["city"],"additionalProperties":false},
            "units":{"type":"string","enum":["metric","imperial"],"default":"metric"},
            "person":{"type":"object","properties":{"email":{"type":"string","format":"email"},"optional":{"type":"boolean","default":false}},"required":["email"],"additionalProperties":false}
        },"properties":{
            "title":{"type":"string","minLength":1},
            "where":{"anyOf":[{"$ref":"#/$defs/point"},{"$ref":"#/$defs/address"}]},
            "units":{"$ref":"#/$defs/units"},
            "attendees":{"type":"array","items":{"$ref":"#/$defs/person"}},
            "options":{"type":"object","properties":{
                "notify":{"type":"boolean","default":true},
                "repeat":{"oneOf":[{"type":"integer","minimum":1},{"type":"string","enum":["daily","weekly"]}]}
            }}
        },"required":["title","where"]}"##,
    ),
    // 2: nullable unions.
    (
        "set_limit",
        false,
        r#"{"type":"object","properties":{
            "limit":{"type":["integer","null"],"minimum":0},
            "ratio":{"type":["number","string"]},
            "enabled":{"type":["boolean","null"]},
            "note":{"type":["string","null"],"default":null},
            "ids":{"type":["array","null"],"items":{"type":"integer"}}
        },"required":["limit"]}"#,
    ),
    // 3: a destructive (strict) tool: validate only, never repair.
    (
        "delete_file",
        true,
        r#"{"type":"object","properties":{
            "path":{"type":"string","minLength":1},
            "recursive":{"type":"boolean","default":false},
            "confirm":{"const":true},
            "retries":{"type":"integer","minimum":0,"maximum":3}
        },"required":["path","confirm"],"additionalProperties":false}"#,
    ),
    // 4: a recursive schema through $defs.
    (
        "tree",
        false,
        r##"{"type":"object","$defs":{"node":{"type":"object","properties":{
            "name":{"type":"string"},
            "size":{"type":"integer","minimum":0,"default":0},
            "kind":{"type":"string","enum":["file","dir"]},
            "children":{"type":"array","items":{"$ref":"#/$defs/node"}}
        },"required":["name"],"additionalProperties":false}},
        "properties":{"root":{"$ref":"#/$defs/node"},"depth":{"type":"integer","maximum":10}},
        "required":["root"]}"##,
    ),
    // 5: a recursive anyOf expression language (closed branches).
    (
        "query",
        false,
        r##"{"type":"object","$defs":{"expr":{"anyOf":[
            {"type":"object","properties":{"and":{"type":"array","items":{"$ref":"#/$defs/expr"},"minItems":1}},"required":["and"],"additionalProperties":false},
            {"type":"object","properties":{"not":{"$ref":"#/$defs/expr"}},"required":["not"],"additionalProperties":false},
            {"type":"object","properties":{"field":{"type":"string"},"eq":{"type":["string","number","boolean"]}},"required":["field","eq"],"additionalProperties":false}
        ]}},"properties":{"filter":{"$ref":"#/$defs/expr"},"limit":{"type":"integer","default":50}},
        "required":["filter"]}"##,
    ),
    // 6: patternProperties, additionalProperties as a schema, prefixItems, allOf, const.
    (
        "patch_config",
        false,
        r#"{"type":"object","properties":{
            "version":{"const":1},
            "range":{"type":"array","prefixItems":[{"type":"integer"},{"type":"integer"}],"items":false},
            "labels":{"type":"object","patternProperties":{"^x-":{"type":"string"}},"additionalProperties":{"type":"number"}},
            "level":{"allOf":[{"type":"integer"},{"minimum":0},{"maximum":5}]},
            "mode":{"type":"string","enum":["Fast","fast","safe"]}
        },"required":["version"]}"#,
    ),
    // 7: root recursion via "$ref":"#", defaults at every level, a case-ambiguous enum.
    (
        "annotate",
        false,
        r##"{"type":"object","properties":{
            "label":{"type":"string","default":"untitled"},
            "tags":{"type":"array","items":{"type":"string","enum":["A","a","b"]}},
            "weight":{"type":"number","exclusiveMinimum":0},
            "child":{"$ref":"#"}
        },"additionalProperties":false}"##,
    ),
];

struct Fixture {
    gate: Gate,
    /// Independent validators, one per tool, same index as `TOOLS`.
    validators: Vec<Validator>,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let tools: Vec<Value> = TOOLS
            .iter()
            .map(|(name, destructive, schema)| {
                let schema: Value = serde_json::from_str(schema).expect("fixture schema is JSON");
                serde_json::json!({ "name": name, "destructive": destructive, "inputSchema": schema })
            })
            .collect();
        let config = serde_json::json!({ "version": 1, "tools": tools }).to_string();
        let gate = Gate::from_json(&config).expect("fixture config compiles");
        let validators = TOOLS
            .iter()
            .map(|(_, _, schema)| {
                let schema: Value = serde_json::from_str(schema).unwrap();
                // Same engine options as the core (linear-time regexes, formats asserted), so a
                // disagreement is a repair bug, not a configuration difference.
                jsonschema::options().with_pattern_options(PatternOptions::regex()).should_validate_formats(true).build(&schema).expect("fixture schema builds")
            })
            .collect();
        Fixture { gate, validators }
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else { return };
    let idx = selector as usize % TOOLS.len();
    let tool = TOOLS[idx].0;
    let args = String::from_utf8_lossy(rest);
    let fx = fixture();

    let v = fx.gate.check(tool, &args);
    if !v.allowed() {
        assert_eq!(v.outcome, Outcome::Rejected);
        assert!(v.arguments.is_none(), "rejected verdict carries arguments: {v:?}");
        assert!(v.message.as_deref().is_some_and(|m| !m.is_empty()), "rejected without a message: {v:?}");
        assert!(v.reason.is_some(), "rejected without a reason: {v:?}");
        return;
    }

    let arguments = v.arguments.as_ref().expect("allowed verdict without arguments");
    assert!(v.message.is_none() && v.reason.is_none(), "allowed verdict with message/reason: {v:?}");
    assert!(arguments.is_object(), "allowed arguments are not an object: {arguments}");
    match v.outcome {
        Outcome::Passed => assert!(v.flags.is_empty(), "passed with flags: {v:?}"),
        Outcome::Repaired => assert!(!v.flags.is_empty(), "repaired without flags: {v:?}"),
        Outcome::Rejected | Outcome::Denied | Outcome::Confirm => unreachable!("an allowed verdict"),
    }
    assert!(
        fx.validators[idx].is_valid(arguments),
        "tool `{tool}` allowed arguments its schema rejects: {arguments}\nerrors: {:?}",
        fx.validators[idx].iter_errors(arguments).map(|e| e.to_string()).collect::<Vec<_>>()
    );
    if v.untouched {
        let as_sent: Value = serde_json::from_str(&args).expect("untouched arguments must be JSON as sent");
        assert_eq!(&as_sent, arguments, "untouched verdict whose arguments differ from the text sent");
    }

    // Idempotence: what the gate lets through passes again, unchanged.
    let text = serde_json::to_string(arguments).expect("arguments serialize");
    let again = fx.gate.check(tool, &text);
    assert_eq!(again.outcome, Outcome::Passed, "repair is not idempotent for `{tool}`: first {:?} -> {text}\nsecond: {again:?}", v.outcome);
    assert_eq!(again.arguments.as_ref(), Some(arguments), "second check changed the arguments for `{tool}`");
});
