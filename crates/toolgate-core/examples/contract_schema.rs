//! Prints the JSON Schema of the names the core answers with — `Outcome`, `Reason`, `FlagCode`,
//! `Dialect` and `CoreErrorCode` — derived from the core's own enums, so the TypeScript types
//! (`src-ts/contract-types.generated.ts`, written by `npm run gen:config`) cannot drift from them;
//! and under `constants` the numbers the hosts must agree with the core on (the audit log's line
//! bound): `cargo run -q -p toolgate-core --example contract_schema`.

use schemars::{json_schema, schema_for, JsonSchema};
use serde_json::{json, Map, Value};
use toolgate_core::{audit, Dialect, FlagCode, GateError, Outcome, Reason};

fn def<T: JsonSchema>() -> Value {
    let mut s = schema_for!(T).to_value();
    if let Some(o) = s.as_object_mut() {
        o.remove("$schema");
    }
    s
}

fn main() {
    let mut defs = Map::new();
    defs.insert("Outcome".into(), def::<Outcome>());
    defs.insert("Reason".into(), def::<Reason>());
    defs.insert("FlagCode".into(), def::<FlagCode>());
    defs.insert("Dialect".into(), def::<Dialect>());
    let codes = json_schema!({
        "title": "CoreErrorCode",
        "description": "The error codes the core raises (`ToolGateError.code`); the host adds its own.",
        "type": "string",
        "enum": GateError::CODES,
    });
    defs.insert("CoreErrorCode".into(), codes.to_value());
    let constants = json!({
        "AUDIT_MAX_LINE_BYTES": {
            "description": "The longest line a reader of an audit log reads, in bytes (newline excluded): `verify` and a writer resuming its chain. The core cuts every record to fit with the writer's `prev` and `mac` (docs/audit.md).",
            "const": audit::MAX_LINE_BYTES,
        },
    });
    println!("{}", serde_json::to_string_pretty(&json!({ "$defs": defs, "constants": constants })).expect("a schema is JSON"));
}
