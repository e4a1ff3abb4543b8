//! Vercel AI SDK (`ai` 7): `tool-call` parts (`toolCallId`, `toolName`, `input`) wherever the SDK
//! puts them — a `generateText` result (`steps[].content`), one step or its `content`, the
//! `toolCalls` list, an assistant `ModelMessage` or a message list, and the provider level
//! (`LanguageModelV3`/`V4` `doGenerate` result, `input` a JSON string). A call is pending unless a
//! later `tool-result` / `tool-error` part answers its id (or a later response denies its
//! approval); a provider-level call (`input` JSON text: the model's own answer) is answered only
//! from a later part list (a `role: "tool"` message), never by a result beside it in its own
//! `content` (see [`resolve`]). Parts with `providerExecuted: true` are reported, not gated.
//! Refusals are answered as one `role: "tool"` `ModelMessage` of `tool-result` parts with
//! `output: { type: "error-text", value }`.
//! UI messages (`UIMessage.parts` from `useChat`) are the `ai-sdk-ui` dialect (`ai_sdk_ui.rs`).

use ahash::AHashMap;
use serde_json::{json, Map, Value};

use super::ai_sdk_ui;
use super::shape::{self, broken, index, key, Path};
use super::sieve::Sieve;
use super::{Args, Call, Codec, Dialect, Found, ProviderCall, Refusal, TurnOptions};
use crate::error::GateError;
use crate::schema::types::type_name;

/// The AI SDK codec.
pub struct AiSdk;

const D: Dialect = Dialect::AiSdk;

impl Codec for AiSdk {
    fn dialect(&self) -> Dialect {
        D
    }

    /// AI SDK shapes only: a part list, message, message list, step, step list or result whose
    /// tool parts use the SDK's camelCase members (`toolCallId`, `approvalId`), a
    /// `generateText` result (`steps`), or a provider-level result (`content` + `finishReason`).
    fn recognizes(&self, payload: &Value) -> bool {
        match payload {
            Value::Object(m) if m.contains_key("role") => is_sdk_message(payload),
            Value::Object(m) => {
                if let Some(steps) = m.get("steps") {
                    return steps.as_array().is_some_and(|s| s.iter().all(is_step));
                }
                if let Some(Value::Array(content)) = m.get("content") {
                    return m.contains_key("finishReason") || content.iter().any(is_sdk_part);
                }
                if let Some(Value::Array(calls)) = m.get("toolCalls") {
                    return calls.iter().all(|c| shape::type_of(c) == Some("tool-call"));
                }
                m.get("messages").and_then(Value::as_array).is_some_and(|l| l.iter().any(is_sdk_message))
            }
            Value::Array(list) => {
                !list.is_empty()
                    && ((list.iter().all(|v| v.get("role").is_some()) && list.iter().any(is_sdk_message))
                        || (list.iter().all(|v| shape::type_of(v).is_some()) && list.iter().any(is_sdk_part))
                        || list.iter().all(is_step))
            }
            _ => false,
        }
    }

    fn read(&self, payload: &Value, _opts: &TurnOptions) -> Result<Found, GateError> {
        let mut parts: Vec<Part<'_>> = Vec::new();
        collect(payload, &mut parts)?;
        resolve(&parts)
    }

    /// One `role: "tool"` `ModelMessage` answering every refused call with a `tool-result` part
    /// whose `output` is `{ type: "error-text", value: message }` — what the SDK itself sends the
    /// model for a failed tool (`ToolResultPart` / `ToolResultOutput`; a `ModelMessage` has no
    /// `tool-error` part, that type exists only in results).
    fn feedback(&self, _payload: &Value, refused: &[Refusal<'_>]) -> Vec<Value> {
        let parts: Vec<Value> = refused
            .iter()
            .map(|r| {
                let id = r.call.wire_id.as_ref().and_then(Value::as_str).unwrap_or("");
                json!({
                    "type": "tool-result",
                    "toolCallId": id,
                    "toolName": r.call.tool,
                    "output": { "type": "error-text", "value": shape::message_of(r.verdict) },
                })
            })
            .collect();
        vec![json!({ "role": "tool", "content": parts })]
    }

    /// A tool record `{ [name]: tool }` (kept by key; the values are the host's own), or an array
    /// of provider-level tools (`{ type: "function", name, inputSchema }` and
    /// `{ type: "provider", id, name, args }`, kept by `name`).
    fn filter_tools(&self, tools: &mut Value, sieve: &mut Sieve<'_>) -> Result<(), GateError> {
        match tools {
            Value::Object(record) => {
                let keep = sieve.keep();
                sieve.retain_members(&[], record, |name, _| keep(name));
                Ok(())
            }
            Value::Array(list) => {
                for (i, t) in list.iter().enumerate() {
                    let p = index(&[], i);
                    let m = shape::object(D, &p, t)?;
                    match shape::opt_string(D, &p, m, "type")? {
                        None | Some("function" | "provider") => {}
                        Some(other) => return Err(broken(D, &key(&p, "type"), format!("unknown tool type {other:?} (expected \"function\" or \"provider\")"))),
                    }
                    shape::string(D, &p, m, "name")?;
                }
                shape::retain_named(D, &[], tools, sieve, |t| t.get("name").and_then(Value::as_str))
            }
            other => Err(broken(D, &[], format!("expected a tool record or an array of provider-level tools, got {}", type_name(other)))),
        }
    }
}

/// Tool part types whose members are the SDK's own spelling.
const TOOL_PARTS: [&str; 5] = ["tool-call", "tool-result", "tool-error", "tool-approval-request", "tool-approval-response"];

fn is_sdk_part(v: &Value) -> bool {
    shape::type_of(v).is_some_and(|t| TOOL_PARTS.contains(&t)) && (v.get("toolCallId").is_some() || v.get("approvalId").is_some())
}

fn is_sdk_message(v: &Value) -> bool {
    v.get("role").is_some_and(Value::is_string) && v.get("content").and_then(Value::as_array).is_some_and(|c| c.iter().any(is_sdk_part))
}

/// A step (`StepResult` as JSON): a `content` part list, no `role`, and a step's own members.
fn is_step(v: &Value) -> bool {
    v.get("content").is_some_and(Value::is_array) && v.get("role").is_none() && (v.get("stepNumber").is_some() || v.get("finishReason").is_some())
}

/// Gathers every part of the payload in order, with its path, validating the containers.
fn collect<'v>(payload: &'v Value, parts: &mut Vec<Part<'v>>) -> Result<(), GateError> {
    match payload {
        Value::Object(m) if m.contains_key("role") => message(payload, Vec::new(), parts),
        Value::Object(m) => {
            if let Some(steps) = m.get("steps") {
                let sp = key(&[], "steps");
                for (i, step) in shape::array(D, &sp, steps)?.iter().enumerate() {
                    step_content(step, index(&sp, i), parts)?;
                }
                Ok(())
            } else if m.contains_key("content") {
                step_content(payload, Vec::new(), parts)
            } else if let Some(calls) = m.get("toolCalls") {
                part_list(calls, key(&[], "toolCalls"), parts)?;
                match m.get("toolResults") {
                    None | Some(Value::Null) => Ok(()),
                    Some(results) => part_list(results, key(&[], "toolResults"), parts),
                }
            } else if let Some(messages) = m.get("messages") {
                message_list(messages, key(&[], "messages"), parts)
            } else {
                Err(broken(
                    D,
                    &[],
                    "expected a generateText result (`steps`), a step or provider result (`content`), `toolCalls`, a ModelMessage (`role`) or `messages`",
                ))
            }
        }
        Value::Array(list) => match list.first() {
            None => Ok(()),
            Some(first) if first.get("role").is_some() => message_list(payload, Vec::new(), parts),
            Some(first) if first.get("type").is_some() => part_list(payload, Vec::new(), parts),
            Some(_) => {
                for (i, step) in list.iter().enumerate() {
                    step_content(step, index(&[], i), parts)?;
                }
                Ok(())
            }
        },
        other => Err(broken(D, &[], format!("expected an AI SDK result, step, message or message list, got {}", type_name(other)))),
    }
}

fn step_content<'v>(step: &'v Value, path: Path, parts: &mut Vec<Part<'v>>) -> Result<(), GateError> {
    let m = shape::object(D, &path, step)?;
    let content = m.get("content").ok_or_else(|| broken(D, &path, "missing `content`"))?;
    part_list(content, key(&path, "content"), parts)
}

/// One part, with its path and the part list it sits in (one list per message, step, `content`,
/// `toolCalls` or `toolResults`; numbered in payload order).
struct Part<'v> {
    path: Path,
    list: usize,
    m: &'v Map<String, Value>,
}

fn part_list<'v>(list: &'v Value, path: Path, parts: &mut Vec<Part<'v>>) -> Result<(), GateError> {
    let n = parts.last().map_or(0, |p| p.list + 1);
    for (i, part) in shape::array(D, &path, list)?.iter().enumerate() {
        let p = index(&path, i);
        let m = shape::object(D, &p, part)?;
        shape::string(D, &p, m, "type")?;
        parts.push(Part { path: p, list: n, m });
    }
    Ok(())
}

fn message_list<'v>(list: &'v Value, path: Path, parts: &mut Vec<Part<'v>>) -> Result<(), GateError> {
    for (i, msg) in shape::array(D, &path, list)?.iter().enumerate() {
        message(msg, index(&path, i), parts)?;
    }
    Ok(())
}

/// A `ModelMessage`: assistant and tool messages contribute their parts; system and user
/// messages hold no tool parts.
fn message<'v>(msg: &'v Value, path: Path, parts: &mut Vec<Part<'v>>) -> Result<(), GateError> {
    if ai_sdk_ui::looks_like_ui_message(msg) {
        return Err(broken(
            D,
            &path,
            "a UIMessage (`parts`), not a ModelMessage (`content`); read UI messages with dialect \"ai-sdk-ui\" and send one kind per payload",
        ));
    }
    let m = shape::object(D, &path, msg)?;
    let role = shape::string(D, &path, m, "role")?;
    let content = m.get("content").ok_or_else(|| broken(D, &path, "missing `content`"))?;
    match (role, content) {
        ("system" | "user", _) => Ok(()),
        ("assistant", Value::String(_)) => Ok(()), // text only
        ("assistant" | "tool", _) => part_list(content, key(&path, "content"), parts),
        (other, _) => Err(broken(D, &key(&path, "role"), format!("unknown role {other:?} (expected system, user, assistant or tool)"))),
    }
}

/// Where the answers to one call id sit: the last one, and the last one in another part list
/// than that one (enough to tell whether some answer after a call sits in a list of its own).
#[derive(Default)]
struct Answers {
    last: Option<(usize, usize)>,
    other: Option<(usize, usize)>,
}

impl Answers {
    /// Records an answer at part `at` of list `list` (called in payload order).
    fn add(&mut self, at: usize, list: usize) {
        if let Some(last) = self.last.filter(|l| l.1 != list) {
            self.other = Some(last);
        }
        self.last = Some((at, list));
    }

    /// Whether an answer follows the call at part `at` of list `list`; with `own_list` false, only
    /// an answer in another part list counts.
    fn answer(&self, at: usize, list: usize, own_list: bool) -> bool {
        let counts = |(a, l): (usize, usize)| a > at && (own_list || l != list);
        self.last.is_some_and(counts) || self.other.is_some_and(counts)
    }
}

/// Decides which `tool-call` parts are pending calls, which are provider-executed, and reads them.
///
/// A call is answered only by a part AFTER it (a `tool-result` / `tool-error` for its id, or a
/// denied approval of it). A provider-level call (`input` JSON text, as `doGenerate` returns it)
/// is the model's own answer: a result in its own part list does not answer it (only calls the
/// provider ran have results there, and those are reported, not gated), so it is decided; the
/// answer must sit in a later list (a `role: "tool"` message). Calls the SDK parsed (`input` a
/// value) are answered by a result after them in the same list too: a step's `content` holds the
/// results of the calls the SDK ran in it.
fn resolve(parts: &[Part<'_>]) -> Result<Found, GateError> {
    let mut approval_of: AHashMap<&str, &str> = AHashMap::new(); // approvalId -> toolCallId
    for p in parts {
        if p.m.get("type").and_then(Value::as_str) == Some("tool-approval-request") {
            let call = p.m.get("toolCallId").or_else(|| p.m.get("toolCall").and_then(|c| c.get("toolCallId"))).and_then(Value::as_str);
            if let (Some(a), Some(c)) = (p.m.get("approvalId").and_then(Value::as_str), call) {
                approval_of.insert(a, c);
            }
        }
    }
    let mut answered: AHashMap<&str, Answers> = AHashMap::new();
    for (at, p) in parts.iter().enumerate() {
        let m = p.m;
        let ids: [Option<&str>; 2] = match m.get("type").and_then(Value::as_str) {
            Some("tool-result" | "tool-error") => [m.get("toolCallId").and_then(Value::as_str), None],
            Some("tool-approval-response") if m.get("approved") == Some(&Value::Bool(false)) => [
                m.get("toolCall").and_then(|c| c.get("toolCallId")).and_then(Value::as_str),
                m.get("approvalId").and_then(Value::as_str).and_then(|a| approval_of.get(a).copied()),
            ],
            _ => [None, None],
        };
        for id in ids.into_iter().flatten() {
            answered.entry(id).or_default().add(at, p.list);
        }
    }
    let mut found = Found::default();
    for (at, Part { path: p, list, m }) in parts.iter().enumerate() {
        if m.get("type").and_then(Value::as_str) != Some("tool-call") {
            continue;
        }
        let id = shape::string(D, p, m, "toolCallId")?;
        let name = shape::string(D, p, m, "toolName")?;
        let provider_executed = match m.get("providerExecuted") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(other) => return Err(broken(D, &key(p, "providerExecuted"), format!("expected a boolean, got {}", type_name(other)))),
        };
        if provider_executed {
            let n = found.provider_executed.len();
            found.provider_executed.push(ProviderCall { call_id: shape::id_or_index(Some(id), n), tool: name.to_owned(), kind: "tool-call".into() });
        } else if !answered.get(id).is_some_and(|a| a.answer(at, *list, !m.get("input").is_some_and(Value::is_string))) {
            found.calls.push(Call {
                call_id: shape::id_or_index(Some(id), found.calls.len()),
                wire_id: (!id.is_empty()).then(|| Value::String(id.to_owned())),
                tool: name.to_owned(),
                args: match m.get("input") {
                    None => Args::Missing,
                    Some(Value::String(s)) => Args::Text(s.clone()), // provider level: JSON text
                    Some(v) => Args::Value(v.clone()),
                },
                slot: key(p, "input"),
                malformed: None,
            });
        }
    }
    Ok(found)
}
