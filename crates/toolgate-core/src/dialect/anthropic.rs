//! Anthropic Messages API: `content[]` blocks of type `tool_use` (`id`, `name`, `input`) mixed
//! with text; refusals answered as one user message of `tool_result` blocks with `is_error`.

use serde_json::{json, Value};

use super::shape::{self, broken, index, key, Path};
use super::sieve::Sieve;
use super::{Call, Codec, Dialect, Found, ProviderCall, Refusal, TurnOptions};
use crate::error::GateError;

/// The Messages API codec.
pub struct Anthropic;

const D: Dialect = Dialect::Anthropic;

/// Blocks the server ran itself: reported, never gated.
const SERVER_TOOL_BLOCKS: [&str; 2] = ["server_tool_use", "mcp_tool_use"];

impl Codec for Anthropic {
    fn dialect(&self) -> Dialect {
        D
    }

    fn recognizes(&self, payload: &Value) -> bool {
        let is_msg = |v: &Value| {
            v.get("type").and_then(Value::as_str) == Some("message")
                || (v.get("role").is_some() && v.get("content").is_some_and(|c| c.as_array().is_some_and(|a| a.iter().any(|b| shape::type_of(b).is_some()))))
        };
        match payload {
            Value::Array(list) => !list.is_empty() && list.iter().all(|m| m.get("role").is_some()) && list.iter().any(is_msg),
            v => is_msg(v),
        }
    }

    fn read(&self, payload: &Value, _opts: &TurnOptions) -> Result<Found, GateError> {
        let mut found = Found::default();
        match payload {
            Value::Array(list) => read_conversation(list, &mut found)?,
            _ => read_message(payload, Vec::new(), &mut found)?,
        }
        Ok(found)
    }

    fn feedback(&self, _payload: &Value, refused: &[Refusal<'_>]) -> Vec<Value> {
        let blocks: Vec<Value> = refused
            .iter()
            .map(|r| {
                json!({
                    "type": "tool_result",
                    "tool_use_id": r.call.call_id,
                    "content": shape::message_of(r.verdict),
                    "is_error": true,
                })
            })
            .collect();
        vec![json!({ "role": "user", "content": blocks })]
    }

    fn filter_tools(&self, tools: &mut Value, sieve: &mut Sieve<'_>) -> Result<(), GateError> {
        let (path, list) = super::openai::tool_list(D, tools);
        shape::retain_named(D, &path, list, sieve, |t| t.get("name").and_then(Value::as_str))
    }
}

/// A message list: pending calls are `tool_use` blocks no later `tool_result` answers.
fn read_conversation(list: &[Value], found: &mut Found) -> Result<(), GateError> {
    let mut per = Vec::with_capacity(list.len());
    for (i, m) in list.iter().enumerate() {
        let p = index(&[], i);
        let obj = shape::object(D, &p, m)?;
        let mut mine = Found::default();
        if obj.get("role").and_then(Value::as_str) == Some("assistant") {
            read_message(m, p, &mut mine)?;
        }
        let answers = obj
            .get("content")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|b| shape::type_of(b) == Some("tool_result"))
            .filter_map(|b| b.get("tool_use_id").and_then(Value::as_str))
            .collect();
        per.push((mine, answers));
    }
    shape::keep_pending(per, found);
    Ok(())
}

fn read_message(msg: &Value, path: Path, found: &mut Found) -> Result<(), GateError> {
    let m = shape::object(D, &path, msg)?;
    let content = match m.get("content") {
        None => return Err(broken(D, &path, "missing `content`")),
        Some(Value::String(_)) => return Ok(()), // a text-only message
        Some(v) => shape::array(D, &key(&path, "content"), v)?,
    };
    for (i, block) in content.iter().enumerate() {
        let p = index(&key(&path, "content"), i);
        let b = shape::object(D, &p, block)?;
        let kind = shape::string(D, &p, b, "type")?;
        if kind == "tool_use" {
            let id = shape::string(D, &p, b, "id")?;
            let name = shape::string(D, &p, b, "name")?;
            found.calls.push(Call {
                call_id: shape::id_or_index(Some(id), found.calls.len()),
                wire_id: (!id.is_empty()).then(|| Value::String(id.to_owned())),
                tool: name.to_owned(),
                args: shape::args_value(b, "input"),
                slot: key(&p, "input"),
                malformed: None,
            });
        } else if SERVER_TOOL_BLOCKS.contains(&kind) {
            let id = shape::opt_string(D, &p, b, "id")?;
            found.provider_executed.push(ProviderCall {
                call_id: shape::id_or_index(id, i),
                tool: shape::opt_string(D, &p, b, "name")?.unwrap_or(kind).to_owned(),
                kind: kind.to_owned(),
            });
        }
    }
    Ok(())
}
