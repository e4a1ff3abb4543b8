//! Gemini Live API (`ai.live.connect`, the BidiGenerateContent WebSocket): one
//! `LiveServerMessage` at a time. Field names follow googleapis/js-genai `src/types.ts`
//! (`LiveServerMessage`, `LiveServerToolCall`, `LiveClientToolResponse`).
//!
//! Calls are `toolCall.functionCalls[]` (`id`, `name`, `args`); `serverContent.modelTurn` is a
//! Content and is read as one (its `executableCode` parts are provider-executed); a message of
//! any other kind (`setupComplete`, `toolCallCancellation`, `usageMetadata`, `goAway` …) holds
//! no call. A message holding more than one kind (a `toolCall` beside `serverContent`) is read
//! whole: both are gated. Refusals are answered as ONE `LiveClientMessage`
//! `{ toolResponse: { functionResponses: [{ id, name, response: { error } }] } }` (a call that
//! arrived empty has no name to answer: its message follows as a `clientContent` user turn).

use serde_json::{json, Map, Value};

use super::shape::{self, index, key};
use super::{Call, Dialect, Refusal};
use crate::error::GateError;

const D: Dialect = Dialect::Gemini;

/// Members only a `LiveServerMessage` has (camelCase; snake_case is read too).
const LIVE_KEYS: [&str; 10] = [
    "toolCall",
    "tool_call",
    "serverContent",
    "server_content",
    "toolCallCancellation",
    "tool_call_cancellation",
    "setupComplete",
    "setup_complete",
    "goAway",
    "go_away",
];

/// Whether `m` is a Live server message (and not a `generateContent` response or a Content).
pub(super) fn is_live(m: &Map<String, Value>) -> bool {
    !m.contains_key("candidates") && !m.contains_key("parts") && LIVE_KEYS.iter().any(|k| m.get(*k).is_some_and(|v| !v.is_null()))
}

/// `E_PAYLOAD` when `m` is both a response or content (`candidates`, `parts`) and a Live message:
/// a host reading the Live member would run calls the gate never read.
pub(super) fn refuse_mixed(m: &Map<String, Value>) -> Result<(), GateError> {
    let shape = ["candidates", "parts"].into_iter().find(|k| m.contains_key(*k));
    let live = LIVE_KEYS.iter().find(|k| m.get(**k).is_some_and(|v| !v.is_null()));
    match (shape, live) {
        (Some(s), Some(l)) => {
            Err(super::broken(D, &[], format!("both `{s}` and the Live message member `{l}`: the two would be read differently, so the payload is refused")))
        }
        _ => Ok(()),
    }
}

/// The `toolCall` member under either spelling (both is `E_PAYLOAD`).
fn tool_call(m: &Map<String, Value>) -> Result<Option<(&'static str, &Value)>, GateError> {
    super::member(&[], m, "toolCall", "tool_call")
}

/// Reads a Live server message: its tool calls, then its model turn's calls, in that order.
pub(super) fn read(m: &Map<String, Value>, r: &mut super::Reader) -> Result<(), GateError> {
    if let Some((k, tc)) = tool_call(m)? {
        let tp = key(&[], k);
        let t = shape::object(D, &tp, tc)?;
        if let Some((fk, list)) = super::member(&tp, t, "functionCalls", "function_calls")? {
            let lp = key(&tp, fk);
            for (i, fc) in shape::array(D, &lp, list)?.iter().enumerate() {
                r.call(index(&lp, i), fc)?;
            }
        }
    }
    if let Some((k, sc)) = super::member(&[], m, "serverContent", "server_content")? {
        let sp = key(&[], k);
        let s = shape::object(D, &sp, sc)?;
        if let Some((mk, turn)) = super::member(&sp, s, "modelTurn", "model_turn")? {
            r.content(turn, key(&sp, mk))?;
        }
    }
    Ok(())
}

/// Whether `payload` is a Live server message (its refusals are answered as a `toolResponse`).
pub(super) fn answers_live(payload: &Value) -> bool {
    payload.as_object().is_some_and(is_live)
}

/// The answers to a Live message's refused calls: ONE `LiveClientMessage` with a `toolResponse`
/// for the named calls, then, for calls that arrived empty (no name to answer), one
/// `clientContent` user turn holding their messages as text.
pub(super) fn feedback(refused: &[Refusal<'_>]) -> Vec<Value> {
    let (named, empty): (Vec<&Refusal<'_>>, Vec<&Refusal<'_>>) = refused.iter().partition(|r| !r.call.tool.is_empty());
    let mut out = Vec::with_capacity(2);
    if !named.is_empty() {
        let responses: Vec<Value> = named.iter().map(|r| function_response(r.call, shape::message_of(r.verdict))).collect();
        out.push(json!({ "toolResponse": { "functionResponses": responses } }));
    }
    if !empty.is_empty() {
        let parts: Vec<Value> = empty.iter().map(|r| json!({ "text": shape::message_of(r.verdict) })).collect();
        out.push(json!({ "clientContent": { "turns": [{ "role": "user", "parts": parts }], "turnComplete": true } }));
    }
    out
}

/// A `FunctionResponse` carrying a refusal: `{ id?, name, response: { error } }`.
pub(super) fn function_response(call: &Call, message: &str) -> Value {
    let mut fr = Map::with_capacity(3);
    if let Some(id) = &call.wire_id {
        fr.insert("id".into(), id.clone());
    }
    fr.insert("name".into(), Value::String(call.tool.clone()));
    fr.insert("response".into(), json!({ "error": message }));
    Value::Object(fr)
}
