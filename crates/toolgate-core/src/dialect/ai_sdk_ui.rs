//! The `ai-sdk-ui` dialect: Vercel AI SDK **UI messages** (`UIMessage` from `useChat`, `ai` 5 to
//! 7): a `UIMessage` (`role` + `parts`, no `content`), a list of them, or a chat request body
//! `{ messages: UIMessage[] }`. (`ModelMessage`s and results are the `ai-sdk` dialect; one payload
//! holds one kind.)
//!
//! Tool parts are static (`type: "tool-<name>"`) or dynamic (`type: "dynamic-tool"` with
//! `toolName`); each carries its own `state`, and a part is judged by its own state, never by
//! an id another part wrote (ids are the model's or the client's text):
//!
//! | state | what it is |
//! |---|---|
//! | `input-streaming` | not a call yet: left alone (the SDK never runs it) |
//! | `input-available`, `approval-requested`, `approval-responded` with `approved: true` | a call to decide |
//! | `approval-responded` with `approved: false`, `output-available`, `output-error`, `output-denied` | answered: not decided again |
//!
//! Parts with `providerExecuted: true` are reported, not gated. An empty or repeated `toolCallId`
//! among the tool parts (so an answer matched by id finds exactly one part), an unknown `state`, or a static part whose `toolName` member names another tool
//! than its `type` is `E_PAYLOAD`. A refused call is answered in the SDK's own shape: the part
//! itself in state `output-error` with `errorText` = the gate's message (what
//! `readUIMessageStream` makes of a `tool-input-error` chunk, and what `addToolOutput` records).

use ahash::AHashSet;
use serde_json::{Map, Value};

use super::shape::{self, broken, index, key, Path};
use super::sieve::Sieve;
use super::{Call, Codec, Dialect, Found, ProviderCall, Refusal, TurnOptions};
use crate::error::GateError;
use crate::json::pointer::Seg;
use crate::schema::types::type_name;

const D: Dialect = Dialect::AiSdkUi;

/// The UI messages codec.
pub struct AiSdkUi;

impl Codec for AiSdkUi {
    fn dialect(&self) -> Dialect {
        D
    }

    /// UI messages only: see [`is_ui_payload`].
    fn recognizes(&self, payload: &Value) -> bool {
        is_ui_payload(payload)
    }

    fn read(&self, payload: &Value, _opts: &TurnOptions) -> Result<Found, GateError> {
        read(payload)
    }

    fn feedback(&self, payload: &Value, refused: &[Refusal<'_>]) -> Vec<Value> {
        feedback(payload, refused)
    }

    /// The server's tool record (`ToolSet`, `{ [name]: tool }`), kept by key: UI messages name
    /// tools by the same keys.
    fn filter_tools(&self, tools: &mut Value, sieve: &mut Sieve<'_>) -> Result<(), GateError> {
        match tools {
            Value::Object(record) => {
                let keep = sieve.keep();
                sieve.retain_members(&[], record, |name, _| keep(name));
                Ok(())
            }
            other => Err(broken(D, &[], format!("expected a tool record (`ToolSet`: {{ [name]: tool }}), got {}", type_name(other)))),
        }
    }
}

/// The prefix of a static tool part's type (`tool-<name>`).
const STATIC_PREFIX: &str = "tool-";

/// A `UIMessage`: a string `role` of the three a UI message has and a `parts` array whose items
/// all carry a string `type` (which tells it from a Gemini `Content`), and no `content` member
/// (which tells it from a `ModelMessage`).
pub(super) fn is_ui_message(v: &Value) -> bool {
    let Value::Object(m) = v else { return false };
    matches!(m.get("role").and_then(Value::as_str), Some("system" | "user" | "assistant"))
        && !m.contains_key("content")
        && m.get("parts").and_then(Value::as_array).is_some_and(|parts| parts.iter().all(|p| shape::type_of(p).is_some()))
}

/// Whether the payload is UI messages: one, a non-empty list of only them, or `{ messages }`
/// holding a non-empty list of only them.
pub(super) fn is_ui_payload(payload: &Value) -> bool {
    let all = |list: &[Value]| !list.is_empty() && list.iter().all(is_ui_message);
    match payload {
        Value::Array(list) => all(list),
        Value::Object(m) if m.contains_key("messages") => m.get("messages").and_then(Value::as_array).is_some_and(|l| all(l)),
        other => is_ui_message(other),
    }
}

/// Whether a message of a list is a UI message rather than a `ModelMessage` (it has `parts`).
pub(super) fn looks_like_ui_message(v: &Value) -> bool {
    v.get("parts").is_some() && v.get("content").is_none()
}

/// How a tool part's state reads.
enum Kind {
    /// Not a call yet (`input-streaming`).
    Streaming,
    /// A call to decide.
    Pending,
    /// Answered.
    Answered,
}

/// Reads the pending calls of UI messages, in payload order.
fn read(payload: &Value) -> Result<Found, GateError> {
    let mut found = Found::default();
    let mut ids: AHashSet<&str> = AHashSet::new();
    match payload {
        Value::Array(list) => {
            for (i, msg) in list.iter().enumerate() {
                message(msg, index(&[], i), &mut found, &mut ids)?;
            }
        }
        Value::Object(m) if m.contains_key("messages") => {
            let lp = key(&[], "messages");
            for (i, msg) in shape::array(D, &lp, m.get("messages").unwrap_or(&Value::Null))?.iter().enumerate() {
                message(msg, index(&lp, i), &mut found, &mut ids)?;
            }
        }
        other => message(other, Vec::new(), &mut found, &mut ids)?,
    }
    Ok(found)
}

fn message<'v>(msg: &'v Value, path: Path, found: &mut Found, ids: &mut AHashSet<&'v str>) -> Result<(), GateError> {
    let m = shape::object(D, &path, msg)?;
    let role = shape::string(D, &path, m, "role")?;
    if !matches!(role, "system" | "user" | "assistant") {
        return Err(broken(D, &key(&path, "role"), format!("unknown UIMessage role {:?} (expected system, user or assistant)", clip(role))));
    }
    match (m.contains_key("content"), m.contains_key("parts")) {
        (true, true) => return Err(broken(D, &path, "a message with both `parts` (UIMessage) and `content` (ModelMessage); send one kind")),
        (true, false) => {
            return Err(broken(
                D,
                &path,
                "a ModelMessage (`content`), not a UIMessage (`parts`); read ModelMessages with dialect \"ai-sdk\" and send one kind per payload",
            ))
        }
        _ => {}
    }
    let pp = key(&path, "parts");
    let parts = shape::array(D, &pp, m.get("parts").ok_or_else(|| broken(D, &path, "missing `parts`"))?)?;
    for (i, part) in parts.iter().enumerate() {
        let p = index(&pp, i);
        let pm = shape::object(D, &p, part)?;
        let ty = shape::string(D, &p, pm, "type")?;
        if ty != "dynamic-tool" && !ty.starts_with(STATIC_PREFIX) {
            continue; // text, reasoning, files, sources, data, step-start …
        }
        if role != "assistant" {
            return Err(broken(D, &key(&p, "type"), format!("a tool part in a {role} message (tool parts belong to assistant messages)")));
        }
        tool_part(ty, pm, p, found, ids)?;
    }
    Ok(())
}

fn tool_part<'v>(ty: &'v str, m: &'v Map<String, Value>, p: Path, found: &mut Found, ids: &mut AHashSet<&'v str>) -> Result<(), GateError> {
    let tool = match ty.strip_prefix(STATIC_PREFIX) {
        Some(name) if ty != "dynamic-tool" => {
            if name.is_empty() {
                return Err(broken(D, &key(&p, "type"), "a tool part type without a tool name (`tool-`)"));
            }
            if let Some(other) = shape::opt_string(D, &p, m, "toolName")? {
                if other != name {
                    return Err(broken(D, &key(&p, "toolName"), format!("names tool {:?} but the part's type names {:?}", clip(other), clip(name))));
                }
            }
            name
        }
        _ => shape::string(D, &p, m, "toolName")?,
    };
    let id = shape::string(D, &p, m, "toolCallId")?;
    if id.is_empty() {
        return Err(broken(D, &key(&p, "toolCallId"), "an empty tool call id (a UI tool part is answered by its id)"));
    }
    if !ids.insert(id) {
        return Err(broken(D, &key(&p, "toolCallId"), format!("the tool call id {:?} appears on two tool parts", clip(id))));
    }
    let provider = match m.get("providerExecuted") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => return Err(broken(D, &key(&p, "providerExecuted"), format!("expected a boolean, got {}", type_name(other)))),
    };
    let kind = state_kind(m, &p)?;
    if matches!(kind, Kind::Streaming) {
        return Ok(());
    }
    if provider {
        let n = found.provider_executed.len();
        found.provider_executed.push(ProviderCall { call_id: shape::id_or_index(Some(id), n), tool: tool.to_owned(), kind: ty.to_owned() });
        return Ok(());
    }
    if matches!(kind, Kind::Pending) {
        found.calls.push(Call {
            call_id: shape::id_or_index(Some(id), found.calls.len()),
            wire_id: (!id.is_empty()).then(|| Value::String(id.to_owned())),
            tool: tool.to_owned(),
            args: shape::args_value(m, "input"),
            slot: key(&p, "input"),
            malformed: None,
        });
    }
    Ok(())
}

fn state_kind(m: &Map<String, Value>, p: &[Seg]) -> Result<Kind, GateError> {
    Ok(match shape::string(D, p, m, "state")? {
        "input-streaming" => Kind::Streaming,
        "input-available" | "approval-requested" => Kind::Pending,
        "output-available" | "output-error" | "output-denied" => Kind::Answered,
        "approval-responded" => {
            let ap = key(p, "approval");
            let approval = shape::object(D, &ap, m.get("approval").ok_or_else(|| broken(D, p, "state approval-responded without `approval`"))?)?;
            match approval.get("approved") {
                Some(Value::Bool(true)) => Kind::Pending,
                Some(Value::Bool(false)) => Kind::Answered,
                Some(other) => return Err(broken(D, &key(&ap, "approved"), format!("expected a boolean, got {}", type_name(other)))),
                None => return Err(broken(D, &ap, "missing `approved`")),
            }
        }
        other => {
            return Err(broken(
                D,
                &key(p, "state"),
                format!("unknown tool part state {:?} (expected input-streaming, input-available, approval-requested, approval-responded, output-available, output-error or output-denied)", clip(other)),
            ))
        }
    })
}

/// One answer per refused call, in payload order: the call's own part in state `output-error`
/// with `errorText` = the gate's message (its `input` as sent; an `approval` kept only when it
/// was granted, as the SDK's `output-error` state allows). Replace the part with it (same
/// `toolCallId`), or pass `{ tool, toolCallId, state, errorText }` of it to `addToolOutput`.
fn feedback(payload: &Value, refused: &[Refusal<'_>]) -> Vec<Value> {
    refused
        .iter()
        .map(|r| {
            let part_path = &r.call.slot[..r.call.slot.len().saturating_sub(1)];
            let mut part = at(payload, part_path).and_then(Value::as_object).cloned().unwrap_or_default();
            part.remove("output");
            part.remove("preliminary");
            part.remove("rawInput");
            part.remove("inputEncoding");
            if part.get("approval").and_then(|a| a.get("approved")) != Some(&Value::Bool(true)) {
                part.remove("approval");
            }
            part.insert("state".into(), Value::String("output-error".into()));
            part.insert("errorText".into(), Value::String(shape::message_of(r.verdict).to_owned()));
            Value::Object(part)
        })
        .collect()
}

fn at<'v>(root: &'v Value, path: &[Seg]) -> Option<&'v Value> {
    path.iter().try_fold(root, |v, s| match s {
        Seg::Key(k) => v.get(k.as_str()),
        Seg::Index(i) => v.get(*i),
    })
}

fn clip(s: &str) -> String {
    s.chars().take(60).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tells_ui_messages_from_model_messages_and_gemini_contents() {
        assert!(is_ui_message(&json!({ "id": "m1", "role": "assistant", "parts": [{ "type": "text", "text": "hi" }] })));
        assert!(!is_ui_message(&json!({ "role": "model", "parts": [{ "text": "hi" }] })));
        assert!(!is_ui_message(&json!({ "role": "user", "parts": [{ "text": "hi" }] })));
        assert!(!is_ui_message(&json!({ "role": "assistant", "content": [] })));
        assert!(is_ui_payload(&json!({ "messages": [{ "role": "user", "parts": [] }] })));
        assert!(!is_ui_payload(&json!([])));
    }

    #[test]
    fn states_decide_what_is_a_call() {
        let msg = json!({ "id": "m", "role": "assistant", "parts": [
            { "type": "tool-search", "toolCallId": "a", "state": "input-streaming", "input": { "q": "x" } },
            { "type": "tool-search", "toolCallId": "b", "state": "input-available", "input": { "q": "x" } },
            { "type": "dynamic-tool", "toolName": "ping", "toolCallId": "c", "state": "output-available", "input": {}, "output": 1 },
            { "type": "tool-search", "toolCallId": "d", "state": "approval-responded", "input": {}, "approval": { "id": "ap", "approved": false } },
            { "type": "tool-search", "toolCallId": "e", "state": "approval-responded", "input": {}, "approval": { "id": "aq", "approved": true } }
        ] });
        let f = read(&msg).unwrap();
        let ids: Vec<&str> = f.calls.iter().map(|c| c.call_id.as_str()).collect();
        assert_eq!(ids, ["b", "e"]);
    }
}
