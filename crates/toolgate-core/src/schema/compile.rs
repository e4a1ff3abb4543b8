//! Compiles a tool's `inputSchema` once: the authoritative validator (the `jsonschema` crate,
//! linear-time regexes, formats checked, nothing fetched) and a repair plan — a small arena of
//! nodes the coercer walks, with `$ref`s resolved to node ids and one validator per
//! `anyOf`/`oneOf` branch so branch choice follows the real validation result.

use std::collections::HashMap;

use ahash::AHashMap;

use jsonschema::{PatternOptions, Registry, Validator};
use serde_json::{json, Value};

use super::registry::{check_references, describe, SchemaRegistry};
use super::types::TypeSet;
use crate::error::GateError;

/// Index of a node in the arena.
pub(crate) type NodeId = usize;

/// URI under which a tool's schema is registered while its branch validators are built.
const BASE: &str = "urn:toolgate:input-schema";

/// What a schema says about object members not named in `properties`/`patternProperties`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Additional {
    /// Allowed, unconstrained.
    #[default]
    Any,
    /// `additionalProperties: false`: repair prunes them.
    Forbid,
    /// Checked against this node.
    Schema(NodeId),
}

/// A string enum's lookup data for case and typo repair.
#[derive(Debug, Clone, Default)]
pub(crate) struct EnumInfo {
    /// Every allowed value, in schema order.
    pub values: Vec<Value>,
    /// Lower-cased string values with their index in `values`.
    pub lowered: Vec<(String, usize)>,
    /// Two string values differ only by case: no case repair.
    pub case_ambiguous: bool,
}

/// One `anyOf`/`oneOf` branch: its repair node and its exact validator.
#[derive(Debug, Clone)]
pub(crate) struct Branch {
    pub node: NodeId,
    pub validator: Validator,
}

/// One schema location, reduced to what repair needs.
#[derive(Debug, Clone, Default)]
pub(crate) struct Node {
    pub types: Option<TypeSet>,
    pub enum_info: Option<EnumInfo>,
    pub props: AHashMap<String, NodeId>,
    pub pattern_props: Vec<(regex::Regex, NodeId)>,
    pub additional: Additional,
    /// Absent-property defaults, in schema order.
    pub defaults: Vec<(String, Value)>,
    pub prefix_items: Vec<NodeId>,
    pub items: Option<NodeId>,
    pub any_of: Vec<Branch>,
    pub one_of: Vec<Branch>,
    pub all_of: Vec<NodeId>,
    pub reference: Option<NodeId>,
    pub default: Option<Value>,
}

/// A tool schema compiled for validation and repair.
#[derive(Debug, Clone)]
pub struct CompiledSchema {
    /// The authoritative validator of the whole schema.
    pub validator: Validator,
    pub(crate) nodes: Vec<Node>,
    pub(crate) root: NodeId,
    /// Some node injects defaults: a valid call may still change.
    pub(crate) has_defaults: bool,
}

fn options<'i>() -> jsonschema::ValidationOptions<'i> {
    jsonschema::options().with_pattern_options(PatternOptions::regex()).should_validate_formats(true)
}

impl CompiledSchema {
    /// Compiles `schema` for tool `tool`. Errors are `E_CONFIG` naming the tool and the
    /// schema location.
    pub fn compile(tool: &str, schema: &Value) -> Result<CompiledSchema, GateError> {
        CompiledSchema::compile_with(tool, schema, &SchemaRegistry::default())
    }

    /// [`CompiledSchema::compile`] with the config's offline `schemas`: a `$ref` to one of their
    /// URIs resolves to that document (never fetched); any other remote `$ref` is `E_CONFIG`
    /// naming it. A reference cycle that never descends into the arguments, and chains of
    /// nested schemas too deep to compile safely, are refused too (`schema/registry.rs`).
    pub fn compile_with(tool: &str, schema: &Value, schemas: &SchemaRegistry) -> Result<CompiledSchema, GateError> {
        let fail = |at: &str, msg: &str| {
            let at = if at.is_empty() { String::new() } else { format!(" at `{at}`") };
            GateError::Config(format!("tool `{tool}`: inputSchema{at}: {msg}"))
        };
        match schema {
            Value::Object(o) => {
                if let Some(t) = o.get("type") {
                    let admits_object = match t {
                        Value::String(s) => s == "object",
                        Value::Array(a) => a.iter().any(|x| x == "object"),
                        _ => true,
                    };
                    if !admits_object {
                        return Err(fail("/type", "a tool's arguments are an object, so the schema's type must include \"object\""));
                    }
                }
            }
            Value::Bool(_) => {}
            _ => return Err(fail("", "must be a JSON Schema object")),
        }
        let built = match schemas.registry() {
            Some(r) => options().with_registry(r).build(schema),
            None => options().build(schema),
        };
        let validator = built.map_err(|e| {
            let at = e.instance_path().to_string();
            fail(&at, &describe(&e.to_string()))
        })?;
        let registry = match schemas.registry() {
            Some(r) => r.add(BASE, schema.clone()).and_then(|b| b.prepare()),
            None => Registry::new().add(BASE, schema.clone()).and_then(|b| b.prepare()),
        }
        .map_err(|e| fail("", &describe(&e.to_string())))?;
        check_tool_references(&registry).map_err(|m| fail("", &m))?;
        let mut builder = Builder { root: schema, nodes: Vec::new(), by_pointer: HashMap::new(), registry: &registry, tool };
        let root = builder.node("", schema)?;
        let has_defaults = builder.nodes.iter().any(|n| !n.defaults.is_empty());
        Ok(CompiledSchema { validator, nodes: builder.nodes, root, has_defaults })
    }

    /// The root repair node.
    #[cfg(test)]
    pub(crate) fn root_node(&self) -> &Node {
        &self.nodes[self.root]
    }

    /// The root repair node's id.
    pub(crate) fn root_id(&self) -> NodeId {
        self.root
    }

    /// A node by id.
    pub(crate) fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id]
    }
}

/// The reference check of a tool schema registered under [`BASE`] in `registry`.
fn check_tool_references(registry: &Registry<'_>) -> Result<(), String> {
    let base = jsonschema::uri::from_str(BASE).map_err(|e| e.to_string())?;
    let resolved = registry.resolver(base).lookup("").map_err(|e| describe(&e.to_string()))?;
    let (contents, resolver, draft) = resolved.into_inner();
    check_references(contents, &resolver, draft)
}

struct Builder<'a> {
    root: &'a Value,
    nodes: Vec<Node>,
    by_pointer: HashMap<String, NodeId>,
    registry: &'a Registry<'a>,
    tool: &'a str,
}

impl<'a> Builder<'a> {
    fn node(&mut self, pointer: &str, schema: &'a Value) -> Result<NodeId, GateError> {
        if let Some(&id) = self.by_pointer.get(pointer) {
            return Ok(id);
        }
        let id = self.nodes.len();
        self.nodes.push(Node::default());
        self.by_pointer.insert(pointer.to_string(), id);
        let Value::Object(o) = schema else {
            return Ok(id); // `true`/`false`: nothing to repair
        };
        let types = match o.get("type") {
            Some(Value::String(s)) => TypeSet::bit(s).map(TypeSet),
            Some(Value::Array(a)) => Some(TypeSet(a.iter().filter_map(|t| t.as_str().and_then(TypeSet::bit)).fold(0, |acc, b| acc | b))),
            _ => None,
        };
        let mut n = Node { types, ..Node::default() };
        if let Some(Value::Array(values)) = o.get("enum") {
            n.enum_info = Some(enum_info(values));
        }
        n.default = o.get("default").cloned();
        if let Some(Value::Object(props)) = o.get("properties") {
            for (k, sub) in props {
                let child = self.node(&format!("{pointer}/properties/{}", escape(k)), sub)?;
                n.props.insert(k.clone(), child);
            }
        }
        if let Some(Value::Object(pats)) = o.get("patternProperties") {
            for (pat, sub) in pats {
                let child = self.node(&format!("{pointer}/patternProperties/{}", escape(pat)), sub)?;
                // The validator already accepted this pattern under the same linear-time engine.
                if let Ok(re) = regex::Regex::new(pat) {
                    n.pattern_props.push((re, child));
                }
            }
        }
        match o.get("additionalProperties") {
            Some(Value::Bool(false)) => n.additional = Additional::Forbid,
            Some(sub @ Value::Object(_)) => n.additional = Additional::Schema(self.node(&format!("{pointer}/additionalProperties"), sub)?),
            _ => {}
        }
        match (o.get("prefixItems"), o.get("items")) {
            (Some(Value::Array(prefix)), items) => {
                for (i, sub) in prefix.iter().enumerate() {
                    n.prefix_items.push(self.node(&format!("{pointer}/prefixItems/{i}"), sub)?);
                }
                if let Some(sub @ (Value::Object(_) | Value::Bool(_))) = items {
                    n.items = Some(self.node(&format!("{pointer}/items"), sub)?);
                }
            }
            (None, Some(Value::Array(tuple))) => {
                // draft-07 tuple form
                for (i, sub) in tuple.iter().enumerate() {
                    n.prefix_items.push(self.node(&format!("{pointer}/items/{i}"), sub)?);
                }
                if let Some(sub) = o.get("additionalItems") {
                    n.items = Some(self.node(&format!("{pointer}/additionalItems"), sub)?);
                }
            }
            (_, Some(sub)) => n.items = Some(self.node(&format!("{pointer}/items"), sub)?),
            _ => {}
        }
        if let Some(Value::Array(subs)) = o.get("allOf") {
            for (i, sub) in subs.iter().enumerate() {
                n.all_of.push(self.node(&format!("{pointer}/allOf/{i}"), sub)?);
            }
        }
        n.any_of = self.branches(pointer, "anyOf", o.get("anyOf"))?;
        n.one_of = self.branches(pointer, "oneOf", o.get("oneOf"))?;
        if let Some(Value::String(r)) = o.get("$ref") {
            if let Some(target_ptr) = r.strip_prefix('#').and_then(decode_fragment) {
                if let Some(target) = self.root.pointer(&target_ptr) {
                    n.reference = Some(self.node(&target_ptr, target)?);
                }
            }
        }
        // Property defaults: the property's own `default`, else its `$ref` target's.
        if let Some(Value::Object(props)) = o.get("properties") {
            for k in props.keys() {
                let mut cur = n.props.get(k).copied();
                let mut hops = 0;
                while let Some(c) = cur {
                    // A node still being built (a cycle) has no default yet; that is fine.
                    let node = &self.nodes[c];
                    if let Some(d) = &node.default {
                        n.defaults.push((k.clone(), d.clone()));
                        break;
                    }
                    cur = node.reference;
                    hops += 1;
                    if hops > 32 {
                        break;
                    }
                }
            }
        }
        self.nodes[id] = n;
        Ok(id)
    }

    fn branches(&mut self, pointer: &str, keyword: &str, subs: Option<&'a Value>) -> Result<Vec<Branch>, GateError> {
        let Some(Value::Array(subs)) = subs else { return Ok(Vec::new()) };
        let mut out = Vec::with_capacity(subs.len());
        for (i, sub) in subs.iter().enumerate() {
            let at = format!("{pointer}/{keyword}/{i}");
            let node = self.node(&at, sub)?;
            let wrapper = json!({ "$ref": format!("{BASE}#{}", encode_fragment(&at)) });
            let validator = options()
                .with_registry(self.registry)
                .build(&wrapper)
                .map_err(|e| GateError::Config(format!("tool `{}`: inputSchema at `{at}`: {e}", self.tool)))?;
            out.push(Branch { node, validator });
        }
        Ok(out)
    }
}

fn enum_info(values: &[Value]) -> EnumInfo {
    let mut lowered: Vec<(String, usize)> = Vec::new();
    let mut case_ambiguous = false;
    for (i, v) in values.iter().enumerate() {
        if let Value::String(s) = v {
            let l = s.to_lowercase();
            if lowered.iter().any(|(x, _)| *x == l) {
                case_ambiguous = true;
            }
            lowered.push((l, i));
        }
    }
    EnumInfo { values: values.to_vec(), lowered, case_ambiguous }
}

/// Escapes a key for a JSON Pointer segment.
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// Percent-decodes a URI fragment into a JSON Pointer; `None` unless it is a pointer.
fn decode_fragment(frag: &str) -> Option<String> {
    if !(frag.is_empty() || frag.starts_with('/')) {
        return None; // a plain-name anchor: left to the validator
    }
    let bytes = frag.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Percent-encodes a JSON Pointer for use as a URI fragment.
fn encode_fragment(pointer: &str) -> String {
    let mut out = String::with_capacity(pointer.len());
    for b in pointer.bytes() {
        if b.is_ascii_alphanumeric() || b"/~-._".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiles_refs_branches_and_defaults() {
        let s = json!({
            "type": "object",
            "$defs": { "units": { "type": "string", "enum": ["metric", "imperial"], "default": "metric" } },
            "properties": {
                "units": { "$ref": "#/$defs/units" },
                "days": { "type": "integer", "default": 3 },
                "filter": { "anyOf": [ { "type": "string" }, { "type": "null" } ] }
            }
        });
        let c = CompiledSchema::compile("weather", &s).unwrap();
        let root = c.root_node();
        assert_eq!(root.defaults.len(), 2);
        let filter = c.node(root.props["filter"]);
        assert_eq!(filter.any_of.len(), 2);
        assert!(filter.any_of[0].validator.is_valid(&json!("x")));
        assert!(!filter.any_of[0].validator.is_valid(&json!(null)));
    }

    #[test]
    fn recursive_refs_terminate() {
        let s = json!({ "type": "object", "properties": { "child": { "$ref": "#" } } });
        assert!(CompiledSchema::compile("tree", &s).is_ok());
    }

    #[test]
    fn bad_schemas_are_config_errors_naming_tool_and_place() {
        let e = CompiledSchema::compile("t", &json!({"type":"object","properties":{"a":{"type":"strin"}}})).unwrap_err();
        assert_eq!(e.code(), "E_CONFIG");
        assert!(e.to_string().contains("tool `t`"), "{e}");
        assert!(e.to_string().contains("/properties/a/type"), "{e}");
        let e = CompiledSchema::compile("t", &json!({"type":"string"})).unwrap_err();
        assert!(e.to_string().contains("object"), "{e}");
    }

    #[test]
    fn remote_and_file_refs_are_never_fetched() {
        for r in ["https://example.com/s.json", "file:///etc/passwd", "other.json#/x"] {
            let e = CompiledSchema::compile("t", &json!({"type":"object","properties":{"a":{"$ref": r}}}));
            assert!(e.is_err(), "{r} compiled");
        }
    }

    #[test]
    fn patterns_use_a_linear_time_engine() {
        // Backreferences and lookaround need backtracking; the linear engine refuses them.
        let e = CompiledSchema::compile("t", &json!({"type":"object","properties":{"a":{"type":"string","pattern":"(a)\\1"}}}));
        assert!(e.is_err());
        let ok = CompiledSchema::compile("t", &json!({"type":"object","properties":{"a":{"type":"string","pattern":"^(a+)+$"}}}));
        assert!(ok.is_ok());
    }

    #[test]
    fn fragments_round_trip() {
        assert_eq!(decode_fragment("/$defs/a%20b").as_deref(), Some("/$defs/a b"));
        assert_eq!(decode_fragment("anchor"), None);
        assert_eq!(encode_fragment("/properties/a b"), "/properties/a%20b");
    }
}
