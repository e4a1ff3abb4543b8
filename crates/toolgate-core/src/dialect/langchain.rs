//! LangChain.js messages: an `AIMessage` (or `AIMessageChunk`) in object form (`tool_calls`,
//! `invalid_tool_calls`, `content`), in its serialized form (`JSON.stringify(message)`:
//! `{ lc: 1, type: "constructor", id: ["langchain_core", "messages", "AIMessage"], kwargs }`), as
//! a StoredMessage (`{ type: "ai", data }`), or a list of messages in any of these forms. Field
//! names follow @langchain/core `messages/ai.ts`, `messages/tool.ts` and `messages/base.ts`.
//!
//! Calls are `tool_calls[]` (`id`, `name`, `args` an object), or, in a message that has none,
//! the raw OpenAI calls of `additional_kwargs.tool_calls` (older integrations); a message with
//! both is read only when they agree (see `langchain_raw.rs`), else it is `E_PAYLOAD`. `invalid_tool_calls[]` (arguments
//! LangChain could not parse) are gated too and always refused `bad_arguments`, naming the
//! parse error, so the model is asked to send them again. In an `AIMessageChunk`, a call whose
//! raw `tool_call_chunks` text is not complete JSON is refused `bad_arguments` too: LangChain's
//! partial-JSON parser would have dropped the cut-off tail. `server_tool_call` (and Anthropic
//! `server_tool_use`) content blocks ran at the provider and are reported, not gated. In a
//! list, a call is pending unless a later ToolMessage answers its `tool_call_id`. Refusals are
//! one ToolMessage-shaped object per call (`new ToolMessage(obj)` accepts it): `type: "tool"`,
//! `content`, `tool_call_id` (only for a call with an id), `name`, `status: "error"`.

#[path = "langchain_raw.rs"]
mod raw;

use serde_json::{Map, Value};

use super::shape::{self, broken, index, key, Path};
use super::sieve::Sieve;
use super::{Args, Call, Codec, Dialect, Found, ProviderCall, Refusal, TurnOptions};
use crate::error::GateError;
use crate::schema::types::type_name;

/// The LangChain codec.
pub struct LangChain;

const D: Dialect = Dialect::LangChain;

/// Longest LangChain parse error quoted back to the model.
const MAX_ERROR_CHARS: usize = 200;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    Ai,
    Tool,
    Other,
}

/// One message: its role, the object holding its fields, and that object's path.
struct Msg<'v> {
    role: Role,
    fields: &'v Map<String, Value>,
    path: Path,
    /// Only LangChain spells it this way (not a Chat Completions or other dialect's message).
    distinct: bool,
}

impl Codec for LangChain {
    fn dialect(&self) -> Dialect {
        D
    }

    fn recognizes(&self, payload: &Value) -> bool {
        match payload {
            Value::Array(list) => {
                let msgs: Vec<Option<Msg<'_>>> = list.iter().map(|v| message(v, Vec::new()).ok().flatten()).collect();
                !msgs.is_empty() && msgs.iter().all(Option::is_some) && msgs.iter().flatten().any(|m| m.distinct)
            }
            v => message(v, Vec::new()).ok().flatten().is_some_and(|m| m.distinct),
        }
    }

    fn read(&self, payload: &Value, _opts: &TurnOptions) -> Result<Found, GateError> {
        let mut found = Found::default();
        match payload {
            Value::Array(list) => read_conversation(list, &mut found)?,
            v => match message(v, Vec::new())? {
                Some(m) if m.role == Role::Ai => read_ai(&m, &mut found)?,
                Some(_) => {} // a human, system or tool message alone holds no calls
                None => {
                    return Err(broken(D, &[], format!("expected an AIMessage (object, serialized or stored form) or a list of messages, got {}", what(v))))
                }
            },
        }
        for (n, c) in found.calls.iter_mut().enumerate() {
            if c.wire_id.is_none() {
                c.call_id = n.to_string();
            }
        }
        Ok(found)
    }

    fn feedback(&self, _payload: &Value, refused: &[Refusal<'_>]) -> Vec<Value> {
        refused
            .iter()
            .map(|r| {
                let mut m = Map::with_capacity(5);
                m.insert("type".into(), Value::String("tool".into()));
                m.insert("content".into(), Value::String(shape::message_of(r.verdict).to_owned()));
                if let Some(id) = &r.call.wire_id {
                    m.insert("tool_call_id".into(), id.clone());
                }
                if !r.call.tool.is_empty() {
                    m.insert("name".into(), Value::String(r.call.tool.clone()));
                }
                m.insert("status".into(), Value::String("error".into()));
                Value::Object(m)
            })
            .collect()
    }

    /// JSON tool specs (`{ name, description, schema }`) or OpenAI-format definitions
    /// (`{ type: "function", function: { name } }`), as a list or under `tools`. Live tool
    /// instances are filtered by name in the TypeScript layer.
    fn filter_tools(&self, tools: &mut Value, sieve: &mut Sieve<'_>) -> Result<(), GateError> {
        let (path, list) = super::openai::tool_list(D, tools);
        shape::retain_named(D, &path, list, sieve, |t| {
            t.get("name").and_then(Value::as_str).or_else(|| t.get("function").and_then(|f| f.get("name")).and_then(Value::as_str))
        })
    }
}

fn what(v: &Value) -> &'static str {
    if v.is_object() {
        "an object that is no LangChain message"
    } else {
        type_name(v)
    }
}

/// Reads any of the three message forms; `Ok(None)` for an object that is no message at all.
fn message(v: &Value, path: Path) -> Result<Option<Msg<'_>>, GateError> {
    let Some(m) = v.as_object() else { return Ok(None) };
    if m.contains_key("lc") {
        if m.get("type").and_then(Value::as_str) != Some("constructor") {
            return Err(broken(D, &key(&path, "type"), "a serialized LangChain object that is not a constructor (not_implemented or secret)"));
        }
        let ids = shape::array(D, &key(&path, "id"), m.get("id").unwrap_or(&Value::Null))?;
        let class = match ids.last() {
            Some(Value::String(s)) => s.as_str(),
            _ => return Err(broken(D, &key(&path, "id"), "expected the class path as a list of strings")),
        };
        let kp = key(&path, "kwargs");
        let fields = shape::object(D, &kp, m.get("kwargs").unwrap_or(&Value::Null))?;
        let role = match class {
            "AIMessage" | "AIMessageChunk" => Role::Ai,
            "ToolMessage" | "ToolMessageChunk" => Role::Tool,
            _ => Role::Other,
        };
        return Ok(Some(Msg { role, fields, path: kp, distinct: true }));
    }
    let kind = m.get("type").and_then(Value::as_str);
    if let (Some(t), Some(Value::Object(data))) = (kind, m.get("data")) {
        if !m.contains_key("content") {
            return Ok(Some(Msg { role: role_of(t), fields: data, path: key(&path, "data"), distinct: true }));
        }
    }
    let lc_calls = m.get("tool_calls").and_then(Value::as_array).is_some_and(|c| c.iter().any(|t| t.get("args").is_some() && t.get("function").is_none()))
        || m.contains_key("invalid_tool_calls")
        || m.get("additional_kwargs").is_some_and(Value::is_object);
    let (role, distinct) = match (kind, m.get("role").and_then(Value::as_str)) {
        (Some(t), _) if MESSAGE_TYPES.contains(&t) => (role_of(t), !m.contains_key("role")),
        (_, Some(r)) => (role_of(r), lc_calls),
        (None, None) if lc_calls || m.get("tool_calls").is_some_and(Value::is_array) => (Role::Ai, lc_calls),
        _ => return Ok(None),
    };
    Ok(Some(Msg { role, fields: m, path, distinct }))
}

/// Message types of `BaseMessage.type` / StoredMessage `type`.
const MESSAGE_TYPES: [&str; 8] = ["ai", "human", "tool", "system", "generic", "developer", "function", "remove"];

fn role_of(t: &str) -> Role {
    match t {
        "ai" | "assistant" | "AIMessageChunk" => Role::Ai,
        "tool" => Role::Tool,
        _ => Role::Other,
    }
}

/// A message list: pending calls are those no later ToolMessage answers.
fn read_conversation(list: &[Value], found: &mut Found) -> Result<(), GateError> {
    let mut per: Vec<(Found, Vec<&str>)> = Vec::with_capacity(list.len());
    for (i, v) in list.iter().enumerate() {
        let p = index(&[], i);
        let Some(m) = message(v, p.clone())? else {
            return Err(broken(D, &p, format!("expected a LangChain message, got {}", what(v))));
        };
        let mut mine = Found::default();
        let mut answers = Vec::new();
        match m.role {
            Role::Ai => read_ai(&m, &mut mine)?,
            Role::Tool => answers.extend(shape::opt_string(D, &m.path, m.fields, "tool_call_id")?),
            Role::Other => {}
        }
        per.push((mine, answers));
    }
    shape::keep_pending(per, found);
    Ok(())
}

fn read_ai(m: &Msg<'_>, found: &mut Found) -> Result<(), GateError> {
    let f = m.fields;
    if let Some(Value::Array(blocks)) = f.get("content") {
        for (i, b) in blocks.iter().enumerate() {
            let kind = shape::type_of(b).unwrap_or("");
            if kind == "server_tool_call" || kind == "server_tool_use" {
                let bp = index(&key(&m.path, "content"), i);
                let bo = shape::object(D, &bp, b)?;
                found.provider_executed.push(ProviderCall {
                    call_id: shape::id_or_index(shape::opt_string(D, &bp, bo, "id")?, found.provider_executed.len()),
                    tool: shape::opt_string(D, &bp, bo, "name")?.unwrap_or(kind).to_owned(),
                    kind: kind.to_owned(),
                });
            }
        }
    }
    let calls = list(f, "tool_calls", &m.path)?;
    let invalid = list(f, "invalid_tool_calls", &m.path)?;
    if calls.is_none() && invalid.is_none() && f.get("tool_call_chunks").and_then(Value::as_array).is_some_and(|c| !c.is_empty()) {
        return Err(broken(D, &m.path, "tool_call_chunks without tool_calls: concatenate the chunks into one AIMessageChunk first"));
    }
    if calls.is_none() && has_call_blocks(f) {
        return Err(broken(D, &m.path, "tool-call blocks in `content` but no `tool_calls`: the calls cannot be read"));
    }
    let (rp, raw) = raw::raw_calls(f, &m.path)?;
    if !raw.is_empty() {
        let (parsed, bad) = (calls.unwrap_or_default(), invalid.unwrap_or_default());
        if parsed.is_empty() && bad.is_empty() {
            return raw::read_raw(&rp, raw, &mut found.calls);
        }
        raw::check_agree(&rp, raw, parsed, bad)?;
    }
    let streamed = chunk_args(f);
    let cp = key(&m.path, "tool_calls");
    for (j, c) in calls.unwrap_or_default().iter().enumerate() {
        let p = index(&cp, j);
        let o = shape::object(D, &p, c)?;
        let name = shape::string(D, &p, o, "name")?;
        let id = shape::opt_string(D, &p, o, "id")?;
        let cut = id.and_then(|id| streamed.iter().find(|(cid, _)| cid == id)).is_some_and(|(_, text)| !complete_json(text));
        let malformed = cut.then(|| TRUNCATED.to_owned());
        found.calls.push(call(id, name, shape::args_value(o, "args"), key(&p, "args"), malformed));
    }
    let ip = key(&m.path, "invalid_tool_calls");
    for (j, c) in invalid.unwrap_or_default().iter().enumerate() {
        let p = index(&ip, j);
        let o = shape::object(D, &p, c)?;
        let name = shape::opt_string(D, &p, o, "name")?.unwrap_or("");
        let args = match o.get("args") {
            None | Some(Value::Null) => Args::Missing,
            Some(Value::String(s)) => Args::Text(s.clone()),
            Some(other) => Args::Value(other.clone()),
        };
        let error: String = shape::opt_string(D, &p, o, "error")?.unwrap_or("").chars().take(MAX_ERROR_CHARS).collect();
        let why = if error.is_empty() { String::new() } else { format!(" ({error})") };
        let text = format!("The arguments of this call could not be read{why}, so it was not run. Send the call again with its arguments as one JSON object.");
        found.calls.push(call(shape::opt_string(D, &p, o, "id")?, name, args, key(&p, "args"), Some(text)));
    }
    Ok(())
}

/// Refusal text for a streamed call whose raw arguments were cut off.
const TRUNCATED: &str = "The arguments of this call are incomplete (the stream was cut off), so it was not run. Send the call again with its arguments as one complete JSON object.";

/// An `AIMessageChunk`'s raw streamed arguments per call id: `tool_call_chunks` grouped by
/// `index` (else by `id`), their `args` strings concatenated. LangChain derives `tool_calls`
/// from these with a lenient partial-JSON parser that drops a cut-off tail (`{"a":1,"b":tr` →
/// `{"a":1}`), so a call whose raw text is not complete JSON is refused rather than run with
/// arguments the model never finished.
fn chunk_args(f: &Map<String, Value>) -> Vec<(String, String)> {
    let Some(chunks) = f.get("tool_call_chunks").and_then(Value::as_array) else { return Vec::new() };
    let mut groups: Vec<(String, String, String)> = Vec::new(); // (group key, id, args)
    for c in chunks {
        let id = c.get("id").and_then(Value::as_str).unwrap_or("");
        let group = match c.get("index") {
            Some(Value::Number(n)) => format!("#{n}"),
            Some(Value::String(s)) => format!("#{s}"),
            _ => format!("id:{id}"),
        };
        let args = c.get("args").and_then(Value::as_str).unwrap_or("");
        match groups.iter_mut().find(|g| g.0 == group) {
            Some(g) => {
                if g.1.is_empty() {
                    g.1 = id.to_owned();
                }
                g.2.push_str(args);
            }
            None => groups.push((group, id.to_owned(), args.to_owned())),
        }
    }
    groups.into_iter().filter(|g| !g.1.is_empty()).map(|g| (g.1, g.2)).collect()
}

/// Whether streamed argument text is whole: empty (meaning `{}`) or one complete JSON value.
fn complete_json(text: &str) -> bool {
    text.trim().is_empty() || serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok()
}

/// Whether `content` holds tool-call blocks (`tool_call`, Anthropic `tool_use`, Responses
/// `function_call`) that a message without `tool_calls` would leave unread.
fn has_call_blocks(f: &Map<String, Value>) -> bool {
    f.get("content")
        .and_then(Value::as_array)
        .is_some_and(|blocks| blocks.iter().any(|b| matches!(shape::type_of(b), Some("tool_call" | "tool_use" | "function_call"))))
}

/// An optional array member (absent or `null` is `None`).
fn list<'v>(f: &'v Map<String, Value>, k: &str, path: &[crate::json::pointer::Seg]) -> Result<Option<&'v [Value]>, GateError> {
    match f.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => shape::array(D, &key(path, k), v).map(|a| Some(a.as_slice())),
    }
}

fn call(id: Option<&str>, name: &str, args: Args, slot: Path, malformed: Option<String>) -> Call {
    let id = id.filter(|s| !s.is_empty());
    Call { call_id: id.unwrap_or_default().to_owned(), wire_id: id.map(|s| Value::String(s.to_owned())), tool: name.to_owned(), args, slot, malformed }
}
