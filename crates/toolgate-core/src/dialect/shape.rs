//! Reading payload shapes with errors that name the dialect and the JSON path — the one place
//! codecs turn "this is not what the API sends" into `E_PAYLOAD`.

use serde_json::{Map, Value};

use super::Dialect;
use crate::error::GateError;
use crate::json::pointer::{to_display, Seg};
use crate::schema::types::type_name;

/// A path under construction: the payload root plus steps.
pub type Path = Vec<Seg>;

/// `path` extended by one object key.
pub fn key(path: &[Seg], k: &str) -> Path {
    let mut p = Vec::with_capacity(path.len() + 1);
    p.extend_from_slice(path);
    p.push(Seg::Key(k.to_owned()));
    p
}

/// `path` extended by one array index.
pub fn index(path: &[Seg], i: usize) -> Path {
    let mut p = Vec::with_capacity(path.len() + 1);
    p.extend_from_slice(path);
    p.push(Seg::Index(i));
    p
}

/// Renders a payload path for a message: `choices[0].message.tool_calls[1]`, `(payload)` at
/// the root.
pub fn show(path: &[Seg]) -> String {
    if path.is_empty() {
        "(payload)".to_owned()
    } else {
        to_display(path)
    }
}

/// `E_PAYLOAD`: "{dialect} payload at `{path}`: {what}".
pub fn broken(d: Dialect, path: &[Seg], what: impl std::fmt::Display) -> GateError {
    GateError::Payload(format!("{d} payload at `{}`: {what}", show(path)))
}

/// The value as an object, or `E_PAYLOAD` naming what it is instead.
pub fn object<'v>(d: Dialect, path: &[Seg], v: &'v Value) -> Result<&'v Map<String, Value>, GateError> {
    v.as_object().ok_or_else(|| broken(d, path, format!("expected an object, got {}", type_name(v))))
}

/// The value as an array, or `E_PAYLOAD`.
pub fn array<'v>(d: Dialect, path: &[Seg], v: &'v Value) -> Result<&'v Vec<Value>, GateError> {
    v.as_array().ok_or_else(|| broken(d, path, format!("expected an array, got {}", type_name(v))))
}

/// A required string member, or `E_PAYLOAD` naming the member.
pub fn string<'v>(d: Dialect, path: &[Seg], m: &'v Map<String, Value>, k: &str) -> Result<&'v str, GateError> {
    match m.get(k) {
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(broken(d, &key(path, k), format!("expected a string, got {}", type_name(other)))),
        None => Err(broken(d, path, format!("missing `{k}`"))),
    }
}

/// An optional string member (absent or `null` is `None`); any other type is `E_PAYLOAD`.
pub fn opt_string<'v>(d: Dialect, path: &[Seg], m: &'v Map<String, Value>, k: &str) -> Result<Option<&'v str>, GateError> {
    match m.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(broken(d, &key(path, k), format!("expected a string, got {}", type_name(other)))),
    }
}

/// The `type` member of an object, if it is a string.
pub fn type_of(v: &Value) -> Option<&str> {
    v.get("type").and_then(Value::as_str)
}

/// A call id: the wire id when it is a non-empty string, else `"{index}"`.
pub fn id_or_index(id: Option<&str>, index: usize) -> String {
    match id {
        Some(s) if !s.is_empty() => s.to_owned(),
        _ => index.to_string(),
    }
}

/// Arguments that sit in place as a JSON value: absent is [`super::Args::Missing`].
pub fn args_value(m: &Map<String, Value>, k: &str) -> super::Args {
    match m.get(k) {
        None => super::Args::Missing,
        Some(v) => super::Args::Value(v.clone()),
    }
}

/// Arguments the wire holds as JSON text (OpenAI `arguments`, Responses `input`): a string is
/// that text; absent or `null` is the empty text (meaning `{}`, written back as the text `"{}"`
/// so the member keeps its wire type); any other value sent in its place is read as a value.
pub fn text_args(m: &Map<String, Value>, k: &str) -> super::Args {
    match m.get(k) {
        None | Some(Value::Null) => super::Args::Text(String::new()),
        Some(Value::String(s)) => super::Args::Text(s.clone()),
        Some(other) => super::Args::Value(other.clone()),
    }
}

/// Keeps the array elements whose name `keep` accepts. `name_of` reads an element's name;
/// an element it cannot name is `E_PAYLOAD` (a tool list of unknown shape is never guessed at).
pub fn retain_named(
    d: Dialect,
    path: &[Seg],
    tools: &mut Value,
    sieve: &mut super::sieve::Sieve<'_>,
    name_of: impl Fn(&Value) -> Option<&str>,
) -> Result<(), GateError> {
    if !tools.is_array() {
        return Err(broken(d, path, format!("expected an array of tools, got {}", type_name(tools))));
    }
    let Some(list) = tools.as_array_mut() else { return Ok(()) };
    for (i, t) in list.iter().enumerate() {
        if name_of(t).is_none() {
            return Err(broken(d, &index(path, i), "a tool definition without a name"));
        }
    }
    let keep = sieve.keep();
    sieve.retain(path, list, |_, t| name_of(t).is_some_and(keep));
    Ok(())
}

/// One text content item: `{"type":"text","text":…}` (Anthropic, MCP).
pub fn text_block(text: &str) -> Value {
    let mut m = Map::with_capacity(2);
    m.insert("type".into(), Value::String("text".into()));
    m.insert("text".into(), Value::String(text.to_owned()));
    Value::Object(m)
}

/// The model-readable message of a refusal (never empty).
pub fn message_of(v: &crate::verdict::Verdict) -> &str {
    v.message.as_deref().filter(|m| !m.is_empty()).unwrap_or("This tool call was refused; it was not run.")
}

/// Collects a conversation's pending calls into `found`. `per_message` holds, in order, what each
/// message holds (its calls and provider-executed items) and the wire ids it answers. A call is
/// pending unless a LATER message answers its wire id; a call without a wire id is never
/// answered. Provider-executed items are always reported.
pub fn keep_pending(per_message: Vec<(super::Found, Vec<&str>)>, found: &mut super::Found) {
    let mut answered: ahash::AHashSet<&str> = ahash::AHashSet::new();
    let mut kept: Vec<super::Found> = Vec::with_capacity(per_message.len());
    for (mut mine, answers) in per_message.into_iter().rev() {
        mine.calls.retain(|c| !c.wire_id.as_ref().and_then(Value::as_str).is_some_and(|id| answered.contains(id)));
        answered.extend(answers);
        kept.push(mine);
    }
    for mine in kept.into_iter().rev() {
        found.calls.extend(mine.calls);
        found.provider_executed.extend(mine.provider_executed);
    }
}
