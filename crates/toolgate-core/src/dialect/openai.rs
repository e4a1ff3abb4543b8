//! OpenAI Chat Completions: `choices[].message.tool_calls[]`, arguments as a JSON string;
//! refusals answered as `{ role: "tool", tool_call_id, content }` messages.

use serde_json::{json, Map, Value};

use super::shape::{self, broken, index, key, Path};
use super::sieve::Sieve;
use super::{Call, Codec, Dialect, Found, Refusal, TurnOptions};
use crate::error::GateError;
use crate::json::pointer::Seg;

/// The Chat Completions codec.
pub struct OpenAi;

const D: Dialect = Dialect::OpenAi;

impl Codec for OpenAi {
    fn dialect(&self) -> Dialect {
        D
    }

    fn recognizes(&self, payload: &Value) -> bool {
        match payload {
            Value::Object(m) => {
                m.get("object").and_then(Value::as_str) == Some("chat.completion")
                    || m.get("choices").is_some_and(Value::is_array)
                    || (m.contains_key("message") && m.contains_key("finish_reason"))
                    || is_message(payload)
            }
            Value::Array(list) => {
                !list.is_empty()
                    && list.iter().all(|m| m.get("role").is_some_and(Value::is_string))
                    && list.iter().any(|m| m.get("tool_calls").is_some() || m.get("role").and_then(Value::as_str) == Some("tool"))
            }
            _ => false,
        }
    }

    fn read(&self, payload: &Value, _opts: &TurnOptions) -> Result<Found, GateError> {
        let mut found = Found::default();
        match payload {
            Value::Array(list) => read_conversation(list, &mut found)?,
            Value::Object(m) if m.contains_key("choices") => {
                let at = key(&[], "choices");
                let choices = shape::array(D, &at, &m["choices"])?;
                for (i, choice) in choices.iter().enumerate() {
                    let p = index(&at, i);
                    let c = shape::object(D, &p, choice)?;
                    let msg = c.get("message").ok_or_else(|| broken(D, &p, "missing `message`"))?;
                    read_message(msg, key(&p, "message"), &mut found)?;
                }
            }
            Value::Object(m) if m.contains_key("message") && !m.contains_key("role") => {
                read_message(&m["message"], key(&[], "message"), &mut found)?;
            }
            Value::Object(_) => read_message(payload, Vec::new(), &mut found)?,
            other => {
                return Err(broken(D, &[], format!("expected a chat.completion, a message or a message list, got {}", crate::schema::types::type_name(other))))
            }
        }
        Ok(found)
    }

    fn feedback(&self, _payload: &Value, refused: &[Refusal<'_>]) -> Vec<Value> {
        refused.iter().map(|r| json!({ "role": "tool", "tool_call_id": r.call.call_id, "content": shape::message_of(r.verdict) })).collect()
    }

    fn filter_tools(&self, tools: &mut Value, sieve: &mut Sieve<'_>) -> Result<(), GateError> {
        let (path, list) = tool_list(D, tools);
        shape::retain_named(D, &path, list, sieve, chat_tool_name)
    }
}

/// The name of a Chat Completions tool definition: `function.name` (or `custom.name`).
fn chat_tool_name(t: &Value) -> Option<&str> {
    let kind = shape::type_of(t).unwrap_or("function");
    t.get(kind).and_then(|f| f.get("name")).and_then(Value::as_str)
}

/// A tool list or a request body holding one under `tools`.
pub(super) fn tool_list(_d: Dialect, tools: &mut Value) -> (Path, &mut Value) {
    if !matches!(tools, Value::Object(m) if m.contains_key("tools")) {
        return (Vec::new(), tools);
    }
    match tools {
        // `entry` finds the member seen above; it never inserts here
        Value::Object(m) => (key(&[], "tools"), m.entry("tools").or_insert(Value::Null)),
        other => (Vec::new(), other),
    }
}

/// A Chat Completions message: a role, and tool calls or plain (string or null) content. A
/// message whose content is a block list without `tool_calls` is left to the dialects whose
/// messages look like that.
fn is_message(v: &Value) -> bool {
    v.get("role").is_some_and(Value::is_string)
        && (v.get("tool_calls").is_some()
            || v.get("function_call").is_some()
            || v.get("tool_call_id").is_some()
            || matches!(v.get("content"), Some(Value::String(_) | Value::Null)))
}

/// A message list: the calls still pending are those of assistant messages no later `tool`
/// message answers.
fn read_conversation(list: &[Value], found: &mut Found) -> Result<(), GateError> {
    let mut per = Vec::with_capacity(list.len());
    for (i, m) in list.iter().enumerate() {
        let p = index(&[], i);
        let obj = shape::object(D, &p, m)?;
        let mut mine = Found::default();
        let mut answers = Vec::new();
        match obj.get("role").and_then(Value::as_str) {
            Some("assistant") => read_message(m, p, &mut mine)?,
            Some("tool") => answers.extend(obj.get("tool_call_id").and_then(Value::as_str)),
            _ => {}
        }
        per.push((mine, answers));
    }
    shape::keep_pending(per, found);
    Ok(())
}

fn read_message(msg: &Value, mut path: Path, found: &mut Found) -> Result<(), GateError> {
    let m = shape::object(D, &path, msg)?;
    let calls = match m.get("tool_calls") {
        None | Some(Value::Null) => return read_legacy_function_call(m, path, found),
        Some(v) => v,
    };
    // the paths are built by extending one prefix (each call's slot is kept; a path is only
    // read again for an error): a turn's calls cost a few small allocations, not one per segment
    let at_message = path.len();
    path.push(Seg::Key("tool_calls".to_owned()));
    let calls = shape::array(D, &path, calls)?;
    // clients differ on which of the two they run (some read `function_call` when `tool_calls`
    // is empty): a message carrying both is ambiguous, and refused whole
    if m.get("function_call").is_some_and(|v| !v.is_null()) {
        return Err(broken(
            D,
            &path[..at_message],
            "both `tool_calls` and the legacy `function_call`: clients differ on which they run, so the message is refused",
        ));
    }
    for (j, call) in calls.iter().enumerate() {
        let mut p = Vec::with_capacity(path.len() + 3);
        p.extend_from_slice(&path);
        p.push(Seg::Index(j));
        let c = shape::object(D, &p, call)?;
        let id = shape::opt_string(D, &p, c, "id")?;
        let kind = shape::opt_string(D, &p, c, "type")?.unwrap_or("function");
        // a call carrying a second body (`custom` beside `function`) would be checked as one
        // tool and run as another by clients that read the other member
        for other in ["function", "custom"] {
            if other != kind && c.get(other).is_some_and(|v| !v.is_null()) {
                return Err(broken(D, &p, format!("a `{kind}` call also carries `{other}`: clients differ on which they run, so the message is refused")));
            }
        }
        let body = c.get(kind).ok_or_else(|| broken(D, &p, format!("missing `{kind}`")))?;
        p.push(Seg::Key(kind.to_owned()));
        let f = shape::object(D, &p, body)?;
        let name = shape::string(D, &p, f, "name")?;
        let member = if kind == "function" { "arguments" } else { "input" };
        p.push(Seg::Key(member.to_owned()));
        found.calls.push(Call {
            call_id: shape::id_or_index(id, found.calls.len()),
            wire_id: id.filter(|s| !s.is_empty()).map(|s| Value::String(s.to_owned())),
            tool: name.to_owned(),
            args: shape::text_args(f, member),
            slot: p,
            malformed: None,
        });
    }
    Ok(())
}

/// The deprecated single `function_call` member (no id: the call id is its index).
fn read_legacy_function_call(m: &Map<String, Value>, path: Path, found: &mut Found) -> Result<(), GateError> {
    let Some(fc) = m.get("function_call").filter(|v| !v.is_null()) else { return Ok(()) };
    let fp = key(&path, "function_call");
    let f = shape::object(D, &fp, fc)?;
    let name = shape::string(D, &fp, f, "name")?;
    found.calls.push(Call {
        call_id: found.calls.len().to_string(),
        wire_id: None,
        tool: name.to_owned(),
        args: shape::text_args(f, "arguments"),
        slot: key(&fp, "arguments"),
        malformed: None,
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::pointer::to_pointer;

    fn read(payload: Value) -> Result<Found, GateError> {
        OpenAi.read(&payload, &TurnOptions::default())
    }

    #[test]
    fn each_call_keeps_its_own_slot_and_errors_name_their_own_path() {
        let call = |id: &str| json!({ "id": id, "type": "function", "function": { "name": "t", "arguments": "{}" } });
        let found = read(json!({ "choices": [{ "message": { "role": "assistant", "tool_calls": [call("a"), call("b")] } }] })).expect("read");
        let slots: Vec<String> = found.calls.iter().map(|c| to_pointer(&c.slot)).collect();
        assert_eq!(slots, ["/choices/0/message/tool_calls/0/function/arguments", "/choices/0/message/tool_calls/1/function/arguments"]);
        let err = |payload: Value| match read(payload) {
            Ok(_) => panic!("read a payload that should be refused"),
            Err(e) => e.to_string(),
        };
        let both = err(json!({ "choices": [{ "message": { "role": "assistant", "tool_calls": [], "function_call": { "name": "t" } } }] }));
        assert!(both.contains("`choices[0].message`: both"), "{both}");
        let missing = err(json!({ "choices": [{ "message": { "role": "assistant", "tool_calls": [call("a"), { "id": "b", "type": "function" }] } }] }));
        assert!(missing.contains("`choices[0].message.tool_calls[1]`: missing `function`"), "{missing}");
        let name = err(json!({ "choices": [{ "message": { "role": "assistant", "tool_calls": [{ "id": "a", "function": { "arguments": "{}" } }] } }] }));
        assert!(name.contains("`choices[0].message.tool_calls[0].function"), "{name}");
    }
}
