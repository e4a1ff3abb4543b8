//! The config's `schemas`: a registry of offline schema documents, each under its URI, so a
//! tool schema's `$ref` to a known URI resolves without the network (nothing is ever fetched:
//! a `$ref` to any other remote URI stays `E_CONFIG`, naming it).
//!
//! Hostile configs are bounded here: at most [`MAX_SCHEMAS`] documents of at most
//! [`MAX_SCHEMA_BYTES`] together, each at most [`MAX_SCHEMA_DEPTH`] deep; and a reference cycle
//! that never consumes the instance (`A → $ref B → allOf → $ref A`), which a validator would
//! either loop on or silently read as `true`, is refused (`schema/references.rs`).

use jsonschema::Registry;
use serde_json::Value;

pub(crate) use super::references::{check_references, describe};
use crate::error::GateError;

/// Most documents `schemas` may hold.
pub const MAX_SCHEMAS: usize = 256;
/// Most bytes (as compact JSON) all of `schemas` may hold together.
pub const MAX_SCHEMA_BYTES: usize = 4 << 20;
/// Deepest nesting of arrays and objects in one document of `schemas`.
pub const MAX_SCHEMA_DEPTH: usize = 100;
pub use super::references::MAX_REF_DEPTH;

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
        !rest.is_empty() && s.chars().next().is_some_and(|c| c.is_ascii_alphabetic()) && s.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
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
