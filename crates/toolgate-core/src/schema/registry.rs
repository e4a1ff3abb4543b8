//! The config's `schemas`: a registry of offline schema documents, each under its URI, so a
//! tool schema's `$ref` to a known URI resolves without the network (nothing is ever fetched:
//! a `$ref` to any other remote URI stays `E_CONFIG`, naming it).
//!
//! Hostile configs are bounded here: at most [`MAX_SCHEMAS`] documents of at most
//! [`MAX_SCHEMA_BYTES`] together, each at most [`MAX_SCHEMA_DEPTH`] deep; and a reference cycle
//! that never consumes the instance (`A → $ref B → allOf → $ref A`), which a validator would
//! either loop on or silently read as `true`, is refused (see [`check_references`]).

use std::collections::HashSet;

use jsonschema::{Draft, Registry};
use referencing::{Resolver, ResourceRef};
use serde_json::Value;

use crate::error::GateError;

/// Most documents `schemas` may hold.
pub const MAX_SCHEMAS: usize = 256;
/// Most bytes (as compact JSON) all of `schemas` may hold together.
pub const MAX_SCHEMA_BYTES: usize = 4 << 20;
/// Deepest nesting of arrays and objects in one document of `schemas`.
pub const MAX_SCHEMA_DEPTH: usize = 100;
/// Longest chain of nested schemas (through `$ref`s, across documents) the reference check
/// follows; past it a schema is refused as too deep to compile safely.
pub const MAX_REF_DEPTH: usize = 128;
/// Most schema locations the reference check visits for one schema.
const MAX_VISITS: usize = 200_000;

/// The prepared registry of a gate's `schemas` (empty when the config has none).
#[derive(Debug, Default)]
pub struct SchemaRegistry {
    registry: Option<Registry<'static>>,
}

impl SchemaRegistry {
    /// Checks and prepares `schemas` (URI → document). Errors are `E_CONFIG` naming the URI:
    /// a URI that is not absolute or has a fragment, a document that is not an object or a
    /// boolean, too many, too large or too deep documents, a `$ref` that resolves nowhere, or a
    /// reference cycle that never consumes the instance.
    pub fn new<'a>(schemas: impl IntoIterator<Item = (&'a String, &'a Value)>) -> Result<SchemaRegistry, GateError> {
        let fail = |uri: &str, msg: String| GateError::Config(format!("config at `schemas` (`{uri}`): {msg}"));
        let mut docs: Vec<(String, Value)> = Vec::new();
        let mut bytes = 0usize;
        for (uri, doc) in schemas {
            if docs.len() == MAX_SCHEMAS {
                return Err(GateError::Config(format!("config at `schemas`: at most {MAX_SCHEMAS} documents")));
            }
            check_uri(uri).map_err(|m| fail(uri, m))?;
            if !matches!(doc, Value::Object(_) | Value::Bool(_)) {
                return Err(fail(uri, "a schema document is an object or a boolean".into()));
            }
            if depth(doc, MAX_SCHEMA_DEPTH + 1) > MAX_SCHEMA_DEPTH {
                return Err(fail(uri, format!("nested deeper than {MAX_SCHEMA_DEPTH} levels")));
            }
            bytes = bytes.saturating_add(serde_json::to_vec(doc).map(|v| v.len()).unwrap_or(usize::MAX));
            if bytes > MAX_SCHEMA_BYTES {
                return Err(GateError::Config(format!("config at `schemas`: the documents exceed {MAX_SCHEMA_BYTES} bytes together")));
            }
            docs.push((uri.clone(), doc.clone()));
        }
        if docs.is_empty() {
            return Ok(SchemaRegistry::default());
        }
        let uris: Vec<String> = docs.iter().map(|(u, _)| u.clone()).collect();
        // the drafts' meta-schemas beneath the documents, so a `$ref` to one resolves too
        let registry = referencing::SPECIFICATIONS
            .extend(docs)
            .and_then(|b| b.prepare())
            .map_err(|e| GateError::Config(format!("config at `schemas`: {}", describe(&e.to_string()))))?;
        let reg = SchemaRegistry { registry: Some(registry) };
        for uri in &uris {
            let r = reg.registry.as_ref().expect("set above");
            let resolver = r.resolver(referencing::uri::from_str(uri).map_err(|e| fail(uri, e.to_string()))?);
            let resolved = resolver.lookup("").map_err(|e| fail(uri, describe(&e.to_string())))?;
            let (contents, resolver, draft) = resolved.into_inner();
            check_references(contents, &resolver, draft).map_err(|m| fail(uri, m))?;
        }
        Ok(reg)
    }

    /// The prepared registry, when `schemas` is not empty.
    pub(crate) fn registry(&self) -> Option<&Registry<'static>> {
        self.registry.as_ref()
    }

    /// Whether `schemas` is empty.
    pub fn is_empty(&self) -> bool {
        self.registry.is_none()
    }
}

/// A registry key: an absolute URI (a scheme, then something), no fragment but an empty one,
/// at most 2048 bytes, no whitespace or control characters.
fn check_uri(uri: &str) -> Result<(), String> {
    if uri.len() > 2048 {
        return Err("a URI of at most 2048 bytes".into());
    }
    if uri.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err("a URI holds no spaces or control characters".into());
    }
    let scheme_ok = uri.split_once(':').is_some_and(|(s, rest)| {
        !rest.is_empty()
            && s.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
            && s.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    });
    if !scheme_ok {
        return Err("expected an absolute URI (`https://example.com/address.json`, `urn:…`)".into());
    }
    if uri.split_once('#').is_some_and(|(_, f)| !f.is_empty()) {
        return Err("a document's URI has no fragment (`#…`); refer into it with `$ref: \"URI#/pointer\"`".into());
    }
    referencing::uri::from_str(uri.trim_end_matches('#')).map(|_| ()).map_err(|e| format!("not a URI ({e})"))
}

/// Nesting depth of `v`, counted up to `cap`.
fn depth(v: &Value, cap: usize) -> usize {
    let mut max = 0;
    let mut stack = vec![(v, 1usize)];
    while let Some((v, d)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match v {
            Value::Array(a) => Box::new(a.iter()),
            Value::Object(o) => Box::new(o.values()),
            _ => continue,
        };
        max = max.max(d);
        if d >= cap {
            return d;
        }
        stack.extend(children.map(|c| (c, d + 1)));
    }
    max
}

/// A resolution error, with the not-fetched case said plainly.
pub(crate) fn describe(msg: &str) -> String {
    if msg.contains("Resource '") && msg.contains("is not present in a registry") {
        format!("{msg} (remote schemas are never fetched: add the document to the config's `schemas`)")
    } else {
        msg.to_string()
    }
}

/// Whether `r` (against the resolver's base) names one of the drafts' meta-schemas.
fn is_meta_schema(resolver: &Resolver<'_>, r: &str) -> bool {
    let base = resolver.base_uri();
    let Ok(uri) = resolver.resolve_uri(&base.borrow(), r) else { return false };
    let s = uri.as_str();
    s.starts_with("https://json-schema.org/draft") || s.starts_with("http://json-schema.org/draft")
}

/// Keywords whose subschema applies to the same instance (evaluated "in place").
const IN_PLACE_ONE: [&str; 4] = ["not", "if", "then", "else"];
const IN_PLACE_MANY: [&str; 3] = ["allOf", "anyOf", "oneOf"];
/// Keywords whose subschema applies to a part of the instance.
const CONSUMING_ONE: [&str; 7] =
    ["additionalProperties", "additionalItems", "contains", "propertyNames", "unevaluatedItems", "unevaluatedProperties", "contentSchema"];
const CONSUMING_MAP: [&str; 2] = ["properties", "patternProperties"];
/// Maps of subschemas not applied by themselves (reached by `$ref`), walked for their own cycles.
const HELD_MAP: [&str; 2] = ["$defs", "definitions"];

/// One subschema to visit: where it is, the resolver of its base URI, its draft, and whether it
/// applies to the same instance as its parent.
struct Edge<'r> {
    schema: &'r Value,
    resolver: Resolver<'r>,
    draft: Draft,
    in_place: bool,
    /// Reached through `$ref`: the resolver is already at the target's own base URI.
    via_ref: bool,
}

/// Walks `schema` (with `resolver` at its base URI) and everything it references, and refuses:
/// a `$ref` that resolves nowhere (naming it; remote URIs are never fetched), a cycle of
/// references that never consumes the instance, and chains of nested schemas deeper than
/// [`MAX_REF_DEPTH`] (which a validator would compile recursively). Bounded by a visit count.
pub(crate) fn check_references<'r>(schema: &'r Value, resolver: &Resolver<'r>, draft: Draft) -> Result<(), String> {
    let mut w = Walk { visits: 0, done: HashSet::new(), in_place_done: HashSet::new() };
    w.visit(schema, resolver.clone(), draft, true, 0, &mut Vec::new())
}

struct Walk {
    visits: usize,
    /// Fully visited locations (identity of the schema value).
    done: HashSet<*const Value>,
    /// Locations whose in-place closure is known to be free of cycles.
    in_place_done: HashSet<*const Value>,
}

impl Walk {
    /// `stack`: the locations evaluated in place on the same instance down to this one.
    /// `entered`: `resolver` is already at this schema's own base URI (a `$ref` target, or the
    /// document itself), so its `$id` is not applied again.
    fn visit<'r>(&mut self, schema: &'r Value, resolver: Resolver<'r>, draft: Draft, entered: bool, depth: usize, stack: &mut Vec<*const Value>) -> Result<(), String> {
        let here = schema as *const Value;
        if stack.contains(&here) {
            return Err("a cycle of references that never descends into the arguments (`$ref`, `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else` back to a schema already being applied to the same value); such a schema has no meaning".into());
        }
        if depth > MAX_REF_DEPTH {
            return Err(format!("schemas nested (through `$ref`) deeper than {MAX_REF_DEPTH} levels"));
        }
        let first = self.done.insert(here);
        if !first && self.in_place_done.contains(&here) {
            return Ok(());
        }
        self.visits += 1;
        if self.visits > MAX_VISITS {
            return Err(format!("more than {MAX_VISITS} schema locations to check"));
        }
        let Value::Object(o) = schema else { return Ok(()) };
        let resolver = match ResourceRef::new(schema, draft).id() {
            Some(_) if !entered => resolver.in_subresource(ResourceRef::new(schema, draft)).map_err(|e| describe(&e.to_string()))?,
            _ => resolver,
        };
        let mut edges: Vec<Edge<'r>> = Vec::new();
        if let Some(Value::String(r)) = o.get("$ref") {
            // the drafts' own meta-schemas are built in (and have no cycles)
            if !is_meta_schema(&resolver, r) {
                let resolved = resolver.lookup(r).map_err(|e| format!("`$ref` `{r}` resolves nowhere: {}", describe(&e.to_string())))?;
                let (target, resolver, draft) = resolved.into_inner();
                // jsonschema skips a schema's reference to itself; it is refused here all the same
                edges.push(Edge { schema: target, resolver, draft, in_place: true, via_ref: true });
            }
        }
        let one = |k: &str, in_place: bool, edges: &mut Vec<Edge<'r>>| {
            if let Some(s) = o.get(k) {
                edges.push(Edge { schema: s, resolver: resolver.clone(), draft, in_place, via_ref: false });
            }
        };
        for k in IN_PLACE_ONE {
            one(k, true, &mut edges);
        }
        for k in CONSUMING_ONE {
            one(k, false, &mut edges);
        }
        for k in IN_PLACE_MANY.iter().chain(["prefixItems"].iter()) {
            if let Some(Value::Array(a)) = o.get(*k) {
                let in_place = *k != "prefixItems";
                edges.extend(a.iter().map(|s| Edge { schema: s, resolver: resolver.clone(), draft, in_place, via_ref: false }));
            }
        }
        match o.get("items") {
            Some(Value::Array(a)) => edges.extend(a.iter().map(|s| Edge { schema: s, resolver: resolver.clone(), draft, in_place: false, via_ref: false })),
            Some(s) => edges.push(Edge { schema: s, resolver: resolver.clone(), draft, in_place: false, via_ref: false }),
            None => {}
        }
        for (k, in_place) in CONSUMING_MAP.iter().map(|k| (*k, false)).chain(HELD_MAP.iter().map(|k| (*k, false))).chain([("dependentSchemas", true), ("dependencies", true)]) {
            if let Some(Value::Object(m)) = o.get(k) {
                // `dependencies` values that are arrays are property lists, not schemas
                edges.extend(m.values().filter(|s| s.is_object() || s.is_boolean()).map(|s| Edge { schema: s, resolver: resolver.clone(), draft, in_place, via_ref: false }));
            }
        }
        stack.push(here);
        for e in edges {
            if e.in_place {
                self.visit(e.schema, e.resolver, e.draft, e.via_ref, depth + 1, stack)?;
            } else if !self.done.contains(&(e.schema as *const Value)) {
                // a new instance: the in-place chain starts afresh
                self.visit(e.schema, e.resolver, e.draft, e.via_ref, depth + 1, &mut Vec::new())?;
            }
        }
        stack.pop();
        self.in_place_done.insert(here);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn reg(pairs: &[(&str, Value)]) -> Result<SchemaRegistry, GateError> {
        let owned: Vec<(String, Value)> = pairs.iter().map(|(u, v)| (u.to_string(), v.clone())).collect();
        SchemaRegistry::new(owned.iter().map(|(u, v)| (u, v)))
    }

    #[test]
    fn empty_is_no_registry() {
        assert!(reg(&[]).unwrap().is_empty());
    }

    #[test]
    fn uris_must_be_absolute_without_fragment() {
        for bad in ["address.json", "", "#/x", "https://e.com/a.json#/defs", "1https://x", "https://e.com/a b"] {
            let e = reg(&[(bad, json!({}))]).unwrap_err();
            assert_eq!(e.code(), "E_CONFIG");
            assert!(e.to_string().contains("schemas"), "{e}");
        }
        assert!(reg(&[("https://e.com/a.json", json!({})), ("urn:x:y", json!(true))]).is_ok());
    }

    #[test]
    fn documents_are_bounded() {
        let many: Vec<(String, Value)> = (0..=MAX_SCHEMAS).map(|i| (format!("urn:s:{i}"), json!({}))).collect();
        let e = SchemaRegistry::new(many.iter().map(|(u, v)| (u, v))).unwrap_err();
        assert!(e.to_string().contains("at most"), "{e}");
        let mut deep = json!({});
        for _ in 0..MAX_SCHEMA_DEPTH + 1 {
            deep = json!({ "not": deep });
        }
        assert!(reg(&[("urn:deep", deep)]).unwrap_err().to_string().contains("deeper"));
        let big = json!({ "description": "x".repeat(MAX_SCHEMA_BYTES + 1) });
        assert!(reg(&[("urn:big", big)]).unwrap_err().to_string().contains("bytes"));
        assert!(reg(&[("urn:n", json!(3))]).is_err());
    }

    #[test]
    fn in_place_cycles_are_refused_across_documents() {
        let e = reg(&[("urn:a", json!({ "$ref": "urn:b" })), ("urn:b", json!({ "allOf": [{ "$ref": "urn:a" }] }))]).unwrap_err();
        assert!(e.to_string().contains("cycle"), "{e}");
        let e = reg(&[("urn:self", json!({ "anyOf": [{ "$ref": "#" }, { "type": "string" }] }))]).unwrap_err();
        assert!(e.to_string().contains("cycle"), "{e}");
        // a cycle through properties (a tree) is fine
        let ok = reg(&[("urn:tree", json!({ "type": "object", "properties": { "kids": { "type": "array", "items": { "$ref": "#" } } } }))]);
        assert!(ok.is_ok(), "{ok:?}");
    }

    #[test]
    fn unknown_references_are_named() {
        let e = reg(&[("urn:a", json!({ "properties": { "x": { "$ref": "https://evil.example/s.json" } } }))]).unwrap_err();
        assert!(e.to_string().contains("https://evil.example/s.json"), "{e}");
        assert!(e.to_string().contains("never fetched"), "{e}");
    }

    #[test]
    fn long_reference_chains_are_refused() {
        let mut defs = serde_json::Map::new();
        for i in 0..MAX_REF_DEPTH + 10 {
            defs.insert(format!("d{i}"), json!({ "properties": { "x": { "$ref": format!("#/$defs/d{}", i + 1) } } }));
        }
        defs.insert(format!("d{}", MAX_REF_DEPTH + 10), json!({ "type": "string" }));
        let e = reg(&[("urn:chain", json!({ "$defs": defs, "$ref": "#/$defs/d0" }))]).unwrap_err();
        assert!(e.to_string().contains("deeper"), "{e}");
    }
}
