//! The reference check run on every tool schema and every `schemas` document before it is used:
//! every `$ref` must resolve (nothing is fetched), no cycle of references may return to a schema
//! without descending into the value (a validator would loop on it, or — as `jsonschema` does —
//! read it as `true` and let everything through), and chains of schemas nested through `$ref`s
//! are bounded (a validator compiles them recursively).
//!
//! Two passes, both linear and neither recursive: the first walks every schema location
//! reachable from the root once (an explicit stack), noting each location's in-place successors
//! (`$ref`, `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`, `dependentSchemas`); the
//! second looks for a cycle among those in-place edges (a three-colour depth-first search).

use std::collections::HashMap;

use jsonschema::Draft;
use referencing::{Resolver, ResourceRef};
use serde_json::Value;

/// Longest chain of nested schemas (through `$ref`s, across documents) the check follows; past
/// it a schema is refused as too deep to compile safely.
pub const MAX_REF_DEPTH: usize = 128;
/// Most schema locations the check visits for one schema.
const MAX_VISITS: usize = 200_000;

/// Keywords whose subschema applies to the same value ("in place").
const IN_PLACE_ONE: [&str; 4] = ["not", "if", "then", "else"];
const IN_PLACE_MANY: [&str; 3] = ["allOf", "anyOf", "oneOf"];
const IN_PLACE_MAP: [&str; 2] = ["dependentSchemas", "dependencies"];
/// Keywords whose subschema applies to a part of the value.
const CONSUMING_ONE: [&str; 8] =
    ["additionalProperties", "additionalItems", "contains", "propertyNames", "unevaluatedItems", "unevaluatedProperties", "contentSchema", "items"];
const CONSUMING_MANY: [&str; 2] = ["prefixItems", "items"];
const CONSUMING_MAP: [&str; 2] = ["properties", "patternProperties"];
/// Maps of subschemas applied only when referenced, walked for their own references.
const HELD_MAP: [&str; 2] = ["$defs", "definitions"];

/// A schema location: the identity of its value in the document that holds it.
type Loc = *const Value;

/// One location still to visit.
struct Pending<'r> {
    schema: &'r Value,
    resolver: Resolver<'r>,
    draft: Draft,
    /// `resolver` is already at this schema's own base URI (a `$ref` target, or the root), so
    /// its `$id` is not applied again.
    entered: bool,
    depth: usize,
}

/// Checks `schema` (with `resolver` at its base URI, read in `draft`) and everything it
/// references. Errors say what is wrong: a `$ref` that resolves nowhere (naming it), an in-place
/// cycle, a chain deeper than [`MAX_REF_DEPTH`], more than 200 000 locations.
pub(crate) fn check_references<'r>(schema: &'r Value, resolver: &Resolver<'r>, draft: Draft) -> Result<(), String> {
    let in_place = walk(schema, resolver, draft)?;
    find_cycle(schema as Loc, &in_place)
}

/// Pass one: every reachable location once, with its in-place successors.
fn walk<'r>(root: &'r Value, resolver: &Resolver<'r>, draft: Draft) -> Result<HashMap<Loc, Vec<Loc>>, String> {
    let mut in_place: HashMap<Loc, Vec<Loc>> = HashMap::new();
    let mut todo = vec![Pending { schema: root, resolver: resolver.clone(), draft, entered: true, depth: 0 }];
    while let Some(p) = todo.pop() {
        let here = p.schema as Loc;
        if in_place.contains_key(&here) {
            continue;
        }
        if p.depth > MAX_REF_DEPTH {
            return Err(format!("schemas nested (through `$ref`) deeper than {MAX_REF_DEPTH} levels"));
        }
        if in_place.len() >= MAX_VISITS {
            return Err(format!("more than {MAX_VISITS} schema locations to check"));
        }
        let mut next: Vec<Loc> = Vec::new();
        if let Value::Object(o) = p.schema {
            let resolver = match ResourceRef::new(p.schema, p.draft).id() {
                Some(_) if !p.entered => p.resolver.in_subresource(ResourceRef::new(p.schema, p.draft)).map_err(|e| describe(&e.to_string()))?,
                _ => p.resolver,
            };
            let depth = p.depth + 1;
            let mut child = |s: &'r Value, is_in_place: bool, todo: &mut Vec<Pending<'r>>| {
                if is_in_place {
                    next.push(s as Loc);
                }
                todo.push(Pending { schema: s, resolver: resolver.clone(), draft: p.draft, entered: false, depth });
            };
            for k in IN_PLACE_ONE {
                if let Some(s) = o.get(k) {
                    child(s, true, &mut todo);
                }
            }
            for k in IN_PLACE_MANY {
                for s in o.get(k).and_then(Value::as_array).into_iter().flatten() {
                    child(s, true, &mut todo);
                }
            }
            for (keys, is_in_place) in [(&IN_PLACE_MAP[..], true), (&CONSUMING_MAP[..], false), (&HELD_MAP[..], false)] {
                for k in keys {
                    // `dependencies` values that are arrays are property lists, not schemas
                    for s in o.get(*k).and_then(Value::as_object).into_iter().flat_map(|m| m.values()).filter(|s| s.is_object() || s.is_boolean()) {
                        child(s, is_in_place, &mut todo);
                    }
                }
            }
            for k in CONSUMING_ONE {
                if let Some(s @ (Value::Object(_) | Value::Bool(_))) = o.get(k) {
                    child(s, false, &mut todo);
                }
            }
            for k in CONSUMING_MANY {
                for s in o.get(k).and_then(Value::as_array).into_iter().flatten() {
                    child(s, false, &mut todo);
                }
            }
            if let Some(Value::String(r)) = o.get("$ref") {
                // the drafts' own meta-schemas are built in (and have no cycles)
                if !is_meta_schema(&resolver, r) {
                    let resolved = resolver.lookup(r).map_err(|e| format!("`$ref` `{r}` resolves nowhere: {}", describe(&e.to_string())))?;
                    let (target, resolver, draft) = resolved.into_inner();
                    next.push(target as Loc);
                    todo.push(Pending { schema: target, resolver, draft, entered: true, depth });
                }
            }
        }
        in_place.insert(here, next);
    }
    Ok(in_place)
}

/// Pass two: a cycle among the in-place edges reachable from `root`, found without recursion.
fn find_cycle(root: Loc, in_place: &HashMap<Loc, Vec<Loc>>) -> Result<(), String> {
    #[derive(Clone, Copy, PartialEq)]
    enum Colour {
        /// On the current path.
        Grey,
        /// Finished: no cycle through it.
        Black,
    }
    let mut colour: HashMap<Loc, Colour> = HashMap::with_capacity(in_place.len());
    let none: Vec<Loc> = Vec::new();
    // every location is a start: a cycle may sit below a consuming keyword
    let starts = std::iter::once(root).chain(in_place.keys().copied());
    for start in starts {
        if colour.contains_key(&start) {
            continue;
        }
        colour.insert(start, Colour::Grey);
        let mut path: Vec<(Loc, usize)> = vec![(start, 0)];
        while let Some((node, i)) = path.last_mut() {
            let succ = in_place.get(node).unwrap_or(&none);
            if *i == succ.len() {
                colour.insert(*node, Colour::Black);
                path.pop();
                continue;
            }
            let next = succ[*i];
            *i += 1;
            match colour.get(&next) {
                Some(Colour::Grey) => {
                    return Err("a cycle of references that never descends into the arguments (`$ref`, `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else` back to a schema already being applied to the same value); such a schema has no meaning".into());
                }
                Some(Colour::Black) => {}
                None => {
                    colour.insert(next, Colour::Grey);
                    path.push((next, 0));
                }
            }
        }
    }
    Ok(())
}

/// Whether `r` (against the resolver's base) names one of the drafts' meta-schemas.
fn is_meta_schema(resolver: &Resolver<'_>, r: &str) -> bool {
    let base = resolver.base_uri();
    let Ok(uri) = resolver.resolve_uri(&base.borrow(), r) else { return false };
    let s = uri.as_str();
    s.starts_with("https://json-schema.org/draft") || s.starts_with("http://json-schema.org/draft")
}

/// A resolution error, with the not-fetched case said plainly.
pub(crate) fn describe(msg: &str) -> String {
    if msg.contains("Resource '") && msg.contains("is not present in a registry") {
        format!("{msg} (remote schemas are never fetched: add the document to the config's `schemas`)")
    } else {
        msg.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(schema: Value) -> Result<(), String> {
        let registry = referencing::Registry::new().add("urn:t", schema).and_then(|b| b.prepare()).map_err(|e| e.to_string())?;
        let resolved = registry.resolver(referencing::uri::from_str("urn:t").unwrap()).lookup("").map_err(|e| e.to_string())?;
        let (contents, resolver, draft) = resolved.into_inner();
        check_references(contents, &resolver, draft)
    }

    #[test]
    fn in_place_cycles_anywhere_are_found() {
        assert!(check(json!({ "allOf": [{ "$ref": "#" }] })).unwrap_err().contains("cycle"));
        // below a consuming keyword, entered from outside the cycle
        let s = json!({ "properties": { "a": { "$ref": "#/$defs/x" } }, "$defs": { "x": { "anyOf": [{ "$ref": "#/$defs/y" }] }, "y": { "not": { "$ref": "#/$defs/x" } } } });
        assert!(check(s).unwrap_err().contains("cycle"));
        // a tree is not a cycle; nor is a diamond
        assert!(check(json!({ "properties": { "kids": { "items": { "$ref": "#" } } } })).is_ok());
        let diamond = json!({ "allOf": [{ "$ref": "#/$defs/a" }, { "$ref": "#/$defs/a" }], "$defs": { "a": { "allOf": [{ "$ref": "#/$defs/b" }, { "$ref": "#/$defs/b" }] }, "b": { "type": "string" } } });
        assert!(check(diamond).is_ok());
    }

    #[test]
    fn wide_self_referencing_schemas_stay_linear() {
        // 20 000 properties that each refer back to the root: visited once each, not once per path
        let mut props = serde_json::Map::new();
        for i in 0..20_000 {
            props.insert(format!("p{i}"), json!({ "$ref": "#" }));
        }
        let started = std::time::Instant::now();
        assert!(check(json!({ "type": "object", "properties": props })).is_ok());
        assert!(started.elapsed() < std::time::Duration::from_secs(5), "{:?}", started.elapsed());
    }
}
