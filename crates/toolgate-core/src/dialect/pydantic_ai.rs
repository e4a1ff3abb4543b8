//! Pydantic AI: a `ModelResponse` as its type adapter serializes it (`kind: "response"`,
//! `parts[]` tagged by `part_kind`), or a message list (`ModelMessagesTypeAdapter`). Field names
//! follow pydantic/pydantic-ai `pydantic_ai/messages.py` and `tools.py` (`ToolDefinition`).
//!
//! Calls are `tool-call` parts (`tool_name`, `tool_call_id`, `args` a dict, a JSON string, or
//! null meaning `{}`). `builtin-tool-call` parts ran at the provider and are reported, not gated.
//! Output tools (structured output such as `final_result`) are tool calls on the wire too: they
//! pass only when declared. In a list, a call is pending unless a later request answers its
//! `tool_call_id` with a `tool-return` or `retry-prompt` part.
//!
//! Refusals are ONE `ModelRequest` of `retry-prompt` parts (`content`, `tool_name`,
//! `tool_call_id`). `timestamp` is left out: the core has no clock, and Pydantic AI fills it with
//! the current time when it validates the part (`default_factory`).

use serde_json::{json, Map, Value};

use super::shape::{self, broken, index, key, Path};
use super::sieve::Sieve;
use super::{Args, Call, Codec, Dialect, Found, ProviderCall, Refusal, TurnOptions};
use crate::error::GateError;
use crate::json::pointer::Seg;
use crate::schema::types::type_name;

/// The Pydantic AI codec.
pub struct PydanticAi;

const D: Dialect = Dialect::PydanticAi;

impl Codec for PydanticAi {
    fn dialect(&self) -> Dialect {
        D
    }

    fn recognizes(&self, payload: &Value) -> bool {
        let is_message =
            |v: &Value| matches!(v.get("kind").and_then(Value::as_str), Some("response" | "request")) && v.get("parts").is_some_and(Value::is_array);
        match payload {
            Value::Array(list) => !list.is_empty() && list.iter().all(is_message),
            v => is_message(v),
        }
    }

    fn read(&self, payload: &Value, _opts: &TurnOptions) -> Result<Found, GateError> {
        let mut found = Found::default();
        match payload {
            Value::Array(list) => read_messages(list, &mut found)?,
            // a request alone holds no calls
            Value::Object(m) => {
                if kind_of(&[], m)? == "response" {
                    read_response(m, Vec::new(), &mut found)?;
                }
            }
            other => return Err(broken(D, &[], format!("expected a ModelResponse (`kind: \"response\"`) or a list of messages, got {}", type_name(other)))),
        }
        for (n, c) in found.calls.iter_mut().enumerate() {
            if c.wire_id.is_none() {
                c.call_id = n.to_string();
            }
        }
        Ok(found)
    }

    fn feedback(&self, _payload: &Value, refused: &[Refusal<'_>]) -> Vec<Value> {
        let parts: Vec<Value> = refused
            .iter()
            .map(|r| {
                let mut p = Map::with_capacity(4);
                p.insert("part_kind".into(), Value::String("retry-prompt".into()));
                p.insert("content".into(), Value::String(shape::message_of(r.verdict).to_owned()));
                p.insert("tool_name".into(), Value::String(r.call.tool.clone()));
                if let Some(id) = &r.call.wire_id {
                    p.insert("tool_call_id".into(), id.clone());
                }
                Value::Object(p)
            })
            .collect();
        vec![json!({ "kind": "request", "parts": parts })]
    }

    /// `tools` is a list of `ToolDefinition` objects (by `name`), a `{ tools }` wrapper, or
    /// `ModelRequestParameters`: `function_tools` and `output_tools` by `name`, `builtin_tools`
    /// (provider capabilities with no function name) by their `kind`, kept only when a tool of
    /// that name is declared.
    fn filter_tools(&self, tools: &mut Value, sieve: &mut Sieve<'_>) -> Result<(), GateError> {
        let by_name = |t: &Value| t.get("name").and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_owned);
        match tools {
            Value::Array(_) => retain(&[], tools, sieve, &by_name),
            Value::Object(m) if ["function_tools", "output_tools", "builtin_tools"].iter().any(|k| m.contains_key(*k)) => {
                for (k, v) in m.iter_mut() {
                    let p = key(&[], k);
                    match k.as_str() {
                        "function_tools" | "output_tools" => retain(&p, v, sieve, &by_name)?,
                        "builtin_tools" => retain(&p, v, sieve, &|t: &Value| t.get("kind").and_then(Value::as_str).map(str::to_owned))?,
                        _ => {}
                    }
                }
                Ok(())
            }
            Value::Object(m) if m.contains_key("tools") => match m.get_mut("tools") {
                Some(list) => retain(&key(&[], "tools"), list, sieve, &by_name),
                None => Ok(()),
            },
            other => Err(broken(D, &[], format!("expected a list of ToolDefinition objects or ModelRequestParameters, got {}", type_name(other)))),
        }
    }
}

/// Keeps the tools whose name (`name_of`) `keep` accepts; a tool it cannot name is `E_PAYLOAD`.
fn retain(path: &[Seg], list: &mut Value, sieve: &mut Sieve<'_>, name_of: &dyn Fn(&Value) -> Option<String>) -> Result<(), GateError> {
    let tname = type_name(list);
    let arr = list.as_array_mut().ok_or_else(|| broken(D, path, format!("expected an array of tools, got {tname}")))?;
    let mut names = Vec::with_capacity(arr.len());
    for (i, t) in arr.iter().enumerate() {
        names.push(name_of(t).ok_or_else(|| broken(D, &index(path, i), "a tool definition without a name"))?);
    }
    let keep = sieve.keep();
    sieve.retain(path, arr, |i, _| keep(&names[i]));
    Ok(())
}

/// A message's `kind`: `"request"` or `"response"`, else `E_PAYLOAD`.
fn kind_of<'m>(path: &[Seg], m: &'m Map<String, Value>) -> Result<&'m str, GateError> {
    match shape::string(D, path, m, "kind")? {
        k @ ("request" | "response") => Ok(k),
        other => Err(broken(D, &key(path, "kind"), format!("expected \"request\" or \"response\", got {:?}", other.chars().take(40).collect::<String>()))),
    }
}

/// A message list: pending calls are those no later request answers.
fn read_messages(list: &[Value], found: &mut Found) -> Result<(), GateError> {
    let mut per_message: Vec<(Found, Vec<&str>)> = Vec::with_capacity(list.len());
    for (i, msg) in list.iter().enumerate() {
        let p = index(&[], i);
        let m = shape::object(D, &p, msg)?;
        let mut mine = Found::default();
        let mut ids = Vec::new();
        if kind_of(&p, m)? == "response" {
            read_response(m, p, &mut mine)?;
        } else {
            let pp = key(&p, "parts");
            let parts = shape::array(D, &pp, m.get("parts").unwrap_or(&Value::Null))?;
            for (j, part) in parts.iter().enumerate() {
                let partp = index(&pp, j);
                let po = shape::object(D, &partp, part)?;
                if matches!(po.get("part_kind").and_then(Value::as_str), Some("tool-return" | "retry-prompt")) {
                    if let Some(id) = shape::opt_string(D, &partp, po, "tool_call_id")? {
                        ids.push(id);
                    }
                }
            }
        }
        per_message.push((mine, ids));
    }
    shape::keep_pending(per_message, found);
    Ok(())
}

fn read_response(m: &Map<String, Value>, path: Path, found: &mut Found) -> Result<(), GateError> {
    let pp = key(&path, "parts");
    let parts = match m.get("parts") {
        Some(v) => shape::array(D, &pp, v)?,
        None => return Err(broken(D, &path, "missing `parts`")),
    };
    for (j, part) in parts.iter().enumerate() {
        let p = index(&pp, j);
        let po = shape::object(D, &p, part)?;
        match shape::string(D, &p, po, "part_kind")? {
            "tool-call" => {
                let name = shape::string(D, &p, po, "tool_name")?;
                let id = shape::opt_string(D, &p, po, "tool_call_id")?.filter(|s| !s.is_empty());
                let args = match po.get("args") {
                    None | Some(Value::Null) => Args::Missing,
                    Some(Value::String(s)) => Args::Text(s.clone()),
                    Some(v) => Args::Value(v.clone()),
                };
                found.calls.push(Call {
                    call_id: id.unwrap_or_default().to_owned(),
                    wire_id: id.map(|s| Value::String(s.to_owned())),
                    tool: name.to_owned(),
                    args,
                    slot: key(&p, "args"),
                    malformed: None,
                });
            }
            "builtin-tool-call" => {
                let id = shape::opt_string(D, &p, po, "tool_call_id")?;
                found.provider_executed.push(ProviderCall {
                    call_id: shape::id_or_index(id, found.provider_executed.len()),
                    tool: shape::opt_string(D, &p, po, "tool_name")?.unwrap_or("builtin-tool-call").to_owned(),
                    kind: "builtin-tool-call".into(),
                });
            }
            _ => {}
        }
    }
    Ok(())
}
