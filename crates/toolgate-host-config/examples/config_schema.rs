//! Prints the JSON Schema of the gate config, derived from the config types: the core's
//! (`toolgate_core::Config` and the types it holds) with the host blocks of this crate
//! ([`toolgate_host_config::HostBlocks`]) in place of the core's placeholders for them
//! (`#[derive(JsonSchema)]` on both).
//!
//! `cargo run -q -p toolgate-host-config --example config_schema`. Not run by hand: `npm run
//! gen:config` (`scripts/gen-config.mjs`) runs it, writes `schema/toolgate.config.schema.json`
//! from it (without the TypeScript-only `tsType` / `tsRequired` keywords) and generates
//! `src-ts/config-types.generated.ts` from it. It lives here, not in the core, because it is the
//! one place that sees both the core's types and the hosts'.
//!
//! The host blocks: each property of `HostBlocks` replaces the core's property of the same name
//! (the core states only "an object"), the types they name join `$defs`, and `$defs` are listed
//! in the order a schema walk first meets them, as schemars lists them for one type.
//!
//! Then things are tidied here, for every type at once:
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
    let mut schema = SchemaSettings::draft2020_12().into_generator().into_root_schema_for::<toolgate_core::Config>().to_value();
    let hosts = SchemaSettings::draft2020_12().into_generator().into_root_schema_for::<toolgate_host_config::HostBlocks>().to_value();
    with_host_blocks(&mut schema, hosts);
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

/// Puts each host block's property in place of the core's placeholder of the same name, adds the
/// types they name to `$defs`, and orders `$defs` as schemars would for one type. Panics when
/// the core has no placeholder for a host block, or when both name different types alike.
fn with_host_blocks(schema: &mut Value, hosts: Value) {
    let Value::Object(mut hosts) = hosts else { panic!("the host blocks' schema is an object") };
    let props = schema["properties"].as_object_mut().expect("the config schema has properties");
    for (key, block) in hosts.remove("properties").and_then(|p| p.as_object().cloned()).unwrap_or_default() {
        let slot = props.get_mut(&key).unwrap_or_else(|| panic!("the core's Config has no `{key}` placeholder for the host block"));
        *slot = block;
    }
    let Some(Value::Object(host_defs)) = hosts.remove("$defs") else { return };
    let defs = schema["$defs"].as_object_mut().expect("the config schema has $defs");
    for (name, def) in host_defs {
        if let Some(old) = defs.insert(name.clone(), def.clone()) {
            assert_eq!(old, def, "the core and the host blocks both define `{name}`");
        }
    }
    let mut order = Vec::new();
    first_refs(schema, schema, &mut order);
    let mut defs = std::mem::take(schema["$defs"].as_object_mut().expect("$defs"));
    let mut sorted: Map<String, Value> = order.iter().filter_map(|name| defs.remove(name).map(|d| (name.clone(), d))).collect();
    sorted.append(&mut defs);
    schema["$defs"] = Value::Object(sorted);
}

/// The `$defs` names `v` refers to, each where a walk in document order first meets it, the
/// definition walked there (schemars adds a definition when it first meets its type).
fn first_refs(root: &Value, v: &Value, order: &mut Vec<String>) {
    match v {
        Value::Object(o) => {
            for (k, child) in o {
                if k == "$defs" {
                    continue;
                }
                if let (true, Some(name)) = (k == "$ref", child.as_str().and_then(|r| r.strip_prefix("#/$defs/"))) {
                    if !order.iter().any(|n| n == name) {
                        order.push(name.to_string());
                        first_refs(root, &root["$defs"][name], order);
                    }
                } else {
                    first_refs(root, child, order);
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|c| first_refs(root, c, order)),
        _ => {}
    }
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
