//! Prints the JSON Schema of the gate config, derived from the config types
//! (`toolgate_core::Config` and the types it holds; `#[derive(JsonSchema)]`).
//!
//! `cargo run -q -p toolgate-core --example config_schema`. Not run by hand: `npm run gen:config`
//! (`scripts/gen-config.mjs`) runs it, writes `schema/toolgate.config.schema.json` from it (without
//! the TypeScript-only `tsType` / `tsRequired` keywords) and generates
//! `src-ts/config-types.generated.ts` from it.
//!
//! Two things are tidied here, for every type at once:
//! - `null`: serde reads `null` for an optional key as the key left out. The schema and the
//!   TypeScript types leave it out (a key is given a value or omitted), as they always did, so
//!   `Option` adds no `"null"` type and no `"default": null`.
//! - doc comments: lines are joined (a description is one paragraph of text, however rustfmt
//!   wrapped it); blank lines still part paragraphs.
//! - integer `format`s (`uint64`, `uint32`, …): schemars' names, not JSON Schema formats; the
//!   bounds they stand for are stated with `minimum` / `maximum`.

use schemars::generate::SchemaSettings;
use serde_json::{json, Map, Value};

fn main() {
    let schema = SchemaSettings::draft2020_12().into_generator().into_root_schema_for::<toolgate_core::Config>();
    let mut schema = schema.to_value();
    tidy(&mut schema);
    let obj = schema.as_object_mut().expect("the config schema is an object");
    // `$schema`, `$id` and `title` first, as editors show them
    let mut root = Map::new();
    root.insert("$schema".into(), obj.remove("$schema").unwrap_or(Value::Null));
    root.insert("$id".into(), json!("https://toolgate.dev/schema/toolgate.config.schema.json"));
    root.append(obj);
    let mut out = serde_json::to_string_pretty(&Value::Object(root)).expect("a schema serializes");
    out.push('\n');
    print!("{out}");
}

/// Drops `null` from optional keys and integer `format`s, joins description lines, at every depth.
fn tidy(v: &mut Value) {
    match v {
        Value::Object(o) => {
            if let Some(Value::Array(types)) = o.get_mut("type") {
                types.retain(|t| t != "null");
                if types.len() == 1 {
                    let only = types.remove(0);
                    o.insert("type".into(), only);
                }
            }
            if let Some(Value::String(d)) = o.get_mut("description") {
                *d = d.split("\n\n").map(|p| p.split('\n').map(str::trim).collect::<Vec<_>>().join(" ")).collect::<Vec<_>>().join("\n\n");
            }
            if o.get("default") == Some(&Value::Null) {
                o.remove("default");
            }
            if o.get("type").and_then(Value::as_str) == Some("integer") {
                o.remove("format");
            }
            // `anyOf: [X, {type: null}]` (an optional struct or enum) becomes X itself
            if let Some(Value::Array(any)) = o.get_mut("anyOf") {
                any.retain(|s| s.get("type").and_then(Value::as_str) != Some("null"));
                if any.len() == 1 {
                    let Some(Value::Object(only)) = any.pop() else { unreachable!("a subschema is an object") };
                    o.remove("anyOf");
                    for (k, val) in only {
                        o.entry(k).or_insert(val);
                    }
                }
            }
            for child in o.values_mut() {
                tidy(child);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(tidy),
        _ => {}
    }
}
