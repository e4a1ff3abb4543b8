//! OpenAI Responses API: a Response (`object: "response"`, `output[]`), a bare output-item list,
//! an input-item list (a conversation), or one output item on its own (a `function_call` the host
//! took from `response.output` or from a `response.output_item.done` event). A single item that
//! also carries a Response's `output` or `object` is `E_PAYLOAD`: two readings of one payload.
//! Field names follow openai-node `resources/responses/responses.ts` (`ResponseOutputItem`,
//! `ResponseInputItem`, `Tool`).
//!
//! What is gated:
//! - `function_call` (`call_id`, `name`, `arguments` a JSON string): the tool is `name`, or
//!   `"{namespace}.{name}"` when the call names a `namespace` (a namespaced function never
//!   passes as a top-level tool of the same name).
//! - `custom_tool_call` (`input` is free text): gated as text arguments, so unless the text is a
//!   JSON object that fits a declared tool it is refused `bad_arguments` (fail closed).
//! - Built-ins the host runs itself (`computer_call`, `local_shell_call`, `shell_call`,
//!   `apply_patch_call`, a `tool_search_call` with `execution: "client"`, and any other
//!   `*_call` item carrying a `call_id`): gated under their item type as the tool name, with
//!   their action (`action`, `operation`, `arguments`) as the arguments. Undeclared, they are
//!   refused `unknown_tool`; nothing the host would execute passes unseen.
//!
//! Reported as provider-executed, never gated: `web_search_call`, `file_search_call`,
//! `code_interpreter_call`, `image_generation_call`, `mcp_call`, `mcp_approval_request` (the
//! server runs the call; a repaired argument could not reach it), `program`, a server-side
//! `tool_search_call`, and any other `*_call` item without a `call_id`.
//!
//! In a list (a conversation), a call is pending unless a later `*_output` item answers its
//! `call_id` (`local_shell_call_output` answers by `id`). A Response's `output` is one model
//! answer: an output item there answers nothing (a provider never answers its own calls), so
//! every call in it is decided — a host reading `output` runs no call the gate did not see.

#[path = "openai_responses_answer.rs"]
mod answer;

use ahash::AHashSet;
use serde_json::Value;

use super::shape::{self, broken, index, key, Path};
use super::sieve::Sieve;
use super::{Args, Call, Codec, Dialect, Found, ProviderCall, Refusal, TurnOptions};
use crate::error::GateError;
use crate::json::pointer::Seg;
use crate::schema::types::type_name;

/// The Responses API codec.
pub struct OpenAiResponses;

const D: Dialect = Dialect::OpenAiResponses;

/// Item types the server executes itself (the stream codec reads the same list).
pub(crate) const SERVER_ITEMS: [&str; 7] =
    ["web_search_call", "file_search_call", "code_interpreter_call", "image_generation_call", "mcp_call", "mcp_approval_request", "program"];

/// Built-in items the host executes: (item type, member holding the action).
pub(crate) const CLIENT_BUILTINS: [(&str, &str); 5] = [
    ("computer_call", "action"),
    ("local_shell_call", "action"),
    ("shell_call", "action"),
    ("apply_patch_call", "operation"),
    ("tool_search_call", "arguments"),
];

/// Every item type of the API (for recognition); `message` is recognized by its content parts.
const KNOWN_ITEMS: [&str; 30] = [
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "reasoning",
    "web_search_call",
    "file_search_call",
    "computer_call",
    "computer_call_output",
    "code_interpreter_call",
    "image_generation_call",
    "local_shell_call",
    "local_shell_call_output",
    "shell_call",
    "shell_call_output",
    "apply_patch_call",
    "apply_patch_call_output",
    "mcp_call",
    "mcp_list_tools",
    "mcp_approval_request",
    "mcp_approval_response",
    "tool_search_call",
    "tool_search_output",
    "program",
    "program_output",
    "additional_tools",
    "compaction",
    "compaction_trigger",
    "item_reference",
    "configuration_update",
];

impl Codec for OpenAiResponses {
    fn dialect(&self) -> Dialect {
        D
    }

    fn recognizes(&self, payload: &Value) -> bool {
        match payload {
            Value::Object(m) => {
                m.get("object").and_then(Value::as_str) == Some("response")
                    || (!m.contains_key("role") && m.get("output").and_then(Value::as_array).is_some_and(|o| o.iter().any(is_item)))
                    || is_single_call(payload)
            }
            Value::Array(list) => {
                !list.is_empty()
                    && list.iter().all(|it| it.get("type").is_some_and(Value::is_string) || it.get("role").is_some_and(Value::is_string))
                    && list.iter().any(is_item)
            }
            _ => false,
        }
    }

    fn read(&self, payload: &Value, _opts: &TurnOptions) -> Result<Found, GateError> {
        match payload {
            Value::Array(list) => read_items(list, &[], true),
            Value::Object(m) if m.contains_key("type") => {
                // one output item on its own (`response.output[0]`, a `response.output_item.done`
                // event's `item`): a Response's own members beside it would be a second reading
                if let Some(k) = ["output", "object"].into_iter().find(|k| m.contains_key(*k)) {
                    return Err(broken(D, &[], format!("an item (`type`) that also holds the Response member `{k}`: the item and the Response would be read differently, so the payload is refused")));
                }
                read_single(payload)
            }
            Value::Object(m) if m.contains_key("output") || m.get("object").and_then(Value::as_str) == Some("response") => {
                let p = key(&[], "output");
                let output = m.get("output").ok_or_else(|| broken(D, &[], "missing `output`"))?;
                read_items(shape::array(D, &p, output)?, &p, false)
            }
            other => Err(broken(
                D,
                &[],
                format!("expected a Response (`object: \"response\"` with `output`), one output item or a list of items, got {}", describe(other)),
            )),
        }
    }

    fn feedback(&self, payload: &Value, refused: &[Refusal<'_>]) -> Vec<Value> {
        let mut out = Vec::with_capacity(refused.len());
        for r in refused {
            answer::answer(payload, r, &mut out);
        }
        out
    }

    fn filter_tools(&self, tools: &mut Value, sieve: &mut Sieve<'_>) -> Result<(), GateError> {
        let (path, list) = super::openai::tool_list(D, tools);
        answer::filter(D, &path, list, sieve)
    }
}

/// An object that can only be a Responses item (a typed item of the API, or a `message` whose
/// content parts are `input_*` / `output_*` / `refusal`).
fn is_item(v: &Value) -> bool {
    match shape::type_of(v) {
        Some("message") => v.get("content").and_then(Value::as_array).is_some_and(|parts| {
            parts.iter().any(|p| shape::type_of(p).is_some_and(|t| t.starts_with("input_") || t.starts_with("output_") || t == "refusal"))
        }),
        Some(t) => KNOWN_ITEMS.contains(&t),
        None => false,
    }
}

/// One call item on its own, not wrapped in a Response or a list: a `function_call` or
/// `custom_tool_call` (what `auto` recognizes; `read` takes any single item).
fn is_single_call(v: &Value) -> bool {
    matches!(shape::type_of(v), Some("function_call" | "custom_tool_call")) && v.get("call_id").is_some() && v.get("output").is_none()
}

/// Reads one item given as the whole payload (its path is the root).
fn read_single(item: &Value) -> Result<Found, GateError> {
    let mut found = Found::default();
    match classify(item, Vec::new(), 0)? {
        Entry::Call(mut c) => {
            if c.wire_id.is_none() {
                c.call_id = "0".to_owned();
            }
            found.calls.push(c);
        }
        Entry::Provider(p) => found.provider_executed.push(p),
        Entry::Answer(_) | Entry::Other => {}
    }
    Ok(found)
}

fn describe(v: &Value) -> &'static str {
    match v {
        Value::Object(_) => "an object without `output`",
        other => type_name(other),
    }
}

/// What one item is, read in payload order.
enum Entry<'v> {
    Call(Call),
    Provider(ProviderCall),
    /// An output item answering this call id.
    Answer(&'v str),
    Other,
}

/// Reads a list of items: gated calls still pending, and provider-executed items. In a
/// conversation (an item list, `answers`) a `*_output` item answers the calls before it; in a
/// Response's `output` (the model's own answer, which no provider fills with answers to its own
/// calls) nothing answers a call: every call there is decided.
fn read_items(list: &[Value], base: &[Seg], answers: bool) -> Result<Found, GateError> {
    let mut entries = Vec::with_capacity(list.len());
    let mut servers = 0usize;
    for (i, item) in list.iter().enumerate() {
        let e = classify(item, index(base, i), servers)?;
        if matches!(e, Entry::Provider(_)) {
            servers += 1;
        }
        entries.push(e);
    }
    // A call is answered by an output item after it: walk backwards collecting answers.
    let mut answered: AHashSet<&str> = AHashSet::new();
    let mut keep = Vec::with_capacity(entries.len());
    for e in entries.iter().rev() {
        keep.push(match e {
            Entry::Answer(id) => {
                if answers {
                    answered.insert(id);
                }
                true
            }
            Entry::Call(c) => !c.wire_id.as_ref().and_then(Value::as_str).is_some_and(|id| answered.contains(id)),
            _ => true,
        });
    }
    keep.reverse();
    let mut found = Found::default();
    for (e, kept) in entries.into_iter().zip(keep) {
        match e {
            Entry::Call(mut c) if kept => {
                if c.wire_id.is_none() {
                    c.call_id = found.calls.len().to_string();
                }
                found.calls.push(c);
            }
            Entry::Provider(p) => found.provider_executed.push(p),
            _ => {}
        }
    }
    Ok(found)
}

fn classify(item: &Value, p: Path, servers: usize) -> Result<Entry<'_>, GateError> {
    let m = shape::object(D, &p, item)?;
    let kind = match m.get("type") {
        Some(Value::String(s)) => s.as_str(),
        Some(other) => return Err(broken(D, &key(&p, "type"), format!("expected a string, got {}", type_name(other)))),
        None if m.contains_key("role") => return Ok(Entry::Other), // an easy input message
        None => return Err(broken(D, &p, "an item without `type` or `role`")),
    };
    match kind {
        "function_call" | "custom_tool_call" => {
            let name = shape::string(D, &p, m, "name")?;
            let id = shape::string(D, &p, m, "call_id")?;
            let tool = match shape::opt_string(D, &p, m, "namespace")? {
                Some(ns) if !ns.is_empty() => format!("{ns}.{name}"),
                _ => name.to_owned(),
            };
            let member = if kind == "function_call" { "arguments" } else { "input" };
            Ok(Entry::Call(call(id, tool, shape::text_args(m, member), key(&p, member))))
        }
        "tool_search_call" if m.get("execution").and_then(Value::as_str) != Some("client") => Ok(Entry::Provider(provider(&p, m, kind, servers)?)),
        t if SERVER_ITEMS.contains(&t) => Ok(Entry::Provider(provider(&p, m, kind, servers)?)),
        t => {
            if let Some((_, member)) = CLIENT_BUILTINS.iter().find(|(name, _)| *name == t) {
                let id = shape::opt_string(D, &p, m, "call_id")?.unwrap_or("");
                let member = if t == "computer_call" && !m.contains_key("action") && m.contains_key("actions") { "actions" } else { member };
                return Ok(Entry::Call(call(id, t.to_owned(), shape::args_value(m, member), key(&p, member))));
            }
            if t.ends_with("_output") {
                let by = if t == "local_shell_call_output" { "id" } else { "call_id" };
                return Ok(match shape::opt_string(D, &p, m, by)? {
                    Some(id) if !id.is_empty() => Entry::Answer(id),
                    _ => Entry::Other,
                });
            }
            if t.ends_with("_call") {
                // An item type this codec does not know: a `call_id` means the host must answer
                // (and so would run) it, which is gated; without one, the server ran it.
                return Ok(match shape::opt_string(D, &p, m, "call_id")? {
                    Some(id) => {
                        let member = ["arguments", "action", "input", "operation"].into_iter().find(|k| m.contains_key(*k)).unwrap_or("arguments");
                        Entry::Call(call(id, t.to_owned(), shape::args_value(m, member), key(&p, member)))
                    }
                    None => Entry::Provider(provider(&p, m, kind, servers)?),
                });
            }
            Ok(Entry::Other)
        }
    }
}

fn call(id: &str, tool: String, args: Args, slot: Path) -> Call {
    Call { call_id: id.to_owned(), wire_id: (!id.is_empty()).then(|| Value::String(id.to_owned())), tool, args, slot, malformed: None }
}

/// A server-side item: named by its `name` (MCP) or, where it has none, its type.
fn provider(p: &[Seg], m: &serde_json::Map<String, Value>, kind: &str, n: usize) -> Result<ProviderCall, GateError> {
    let id = match shape::opt_string(D, p, m, "id")? {
        Some(id) if !id.is_empty() => Some(id),
        _ => shape::opt_string(D, p, m, "call_id")?,
    };
    Ok(ProviderCall { call_id: shape::id_or_index(id, n), tool: shape::opt_string(D, p, m, "name")?.unwrap_or(kind).to_owned(), kind: kind.to_owned() })
}
