//! The `ai-sdk-ui` stream: the Vercel AI SDK **UI message stream** (`UIMessageChunk`, what
//! `toUIMessageStream` / `createUIMessageStream` produce and `useChat` / `readUIMessageStream`
//! consume). The `ai-sdk` stream refuses this protocol's own chunks (see [`is_ui_chunk`]).
//!
//! A call is complete at its `tool-input-available` chunk, whose `input` is authoritative; the
//! `tool-input-start` / `tool-input-delta` chunks before it only preview it and are held (never
//! forwarded as they came). An allowed call is released as start + one delta (when the stream
//! previewed it) + `tool-input-available` with the repaired input. A refused call never reaches
//! the client as `tool-input-available`: it is released as one `tool-input-error` chunk with
//! `errorText` = the gate's message (the client shows the part in state `output-error`, and
//! `onToolCall` never runs), and every later chunk naming it (outputs, approvals) is dropped.
//!
//! Ids are the model's text, so the stream fails closed (`E_PAYLOAD`) on a repeated or empty
//! `toolCallId`, a delta for an input never started, a `tool-input-available` naming another
//! tool (or another `dynamic` / `providerExecuted`) than its start, an output or approval for a
//! call never decided, and an unknown `tool-*` chunk. Deltas are counted, never buffered.
//! Calls the provider ran (`providerExecuted: true`) pass live and are reported. The assembled
//! turn is one assistant `UIMessage` whose gated tool parts stay `input-available` (as `guard`
//! reads them); an input never made available is not a call (left out, as `guard` leaves an
//! `input-streaming` part).

use ahash::AHashMap;
use serde_json::{json, Map, Value};

use super::event::Cx;
use super::{Assembled, Assembler, Slot};
use crate::dialect::shape::key;
use crate::dialect::ProviderCall;
use crate::error::GateError;
use crate::json::pointer::Seg;
use crate::schema::types::type_name;

/// Whether an event belongs only to the UI message stream protocol (not to `fullStream` nor to
/// a provider's `doStream`, checked against `TextStreamPart` and `LanguageModelV4StreamPart`):
/// the `ai-sdk` stream refuses such a chunk, naming `ai-sdk-ui`. (`tool-approval-request` with a
/// `toolCallId` is not one: a provider's stream has it too.)
pub(crate) fn is_ui_chunk(ev: &Map<String, Value>) -> bool {
    let has = |k: &str| ev.contains_key(k);
    match ev.get("type").and_then(Value::as_str) {
        Some("tool-input-available" | "tool-input-error" | "tool-output-available" | "tool-output-error" | "message-metadata" | "reset-step") => true,
        Some("tool-input-start" | "tool-input-delta") => has("toolCallId") && !has("id"),
        Some("tool-output-denied") => has("toolCallId") && !has("toolName"),
        Some("start") => has("messageId") || has("messageMetadata"),
        Some("error") => has("errorText"),
        Some(t) => t.starts_with("data-"),
        None => false,
    }
}

/// Where a tool call id stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stand {
    /// `tool-input-start` seen, not yet available: held, not a call yet.
    Open,
    /// Decided: released (allowed) or answered with `tool-input-error` (refused).
    Decided { allowed: bool },
    /// Run by the provider: passed and reported.
    Provider,
    /// Answered upstream with `tool-input-error` before it was ever a call.
    Answered,
}

#[derive(Debug)]
struct Tool {
    name: String,
    dynamic: bool,
    provider: bool,
    stand: Stand,
    /// The held `tool-input-start` chunk (released with an allowed call).
    start: Option<Map<String, Value>>,
    /// Index of the tool's part in the assembled message.
    part: Option<usize>,
}

#[derive(Debug)]
struct Part {
    value: Map<String, Value>,
    call: Option<usize>,
}

/// The UI message stream assembler.
#[derive(Debug, Default)]
pub(crate) struct UiStream {
    parts: Vec<Part>,
    /// Open text / reasoning parts by (chunk id, kind).
    texts: AHashMap<(String, &'static str), usize>,
    tools: AHashMap<String, Tool>,
    /// Approval ids, to the call they ask about.
    approvals: AHashMap<String, String>,
    provider: Vec<ProviderCall>,
    message_id: Option<String>,
    /// Gated calls and released ones, in this step and in the whole stream.
    step: (usize, usize),
    total: (usize, usize),
    finished: bool,
}

fn bool_member(cx: &Cx<'_>, ev: &Map<String, Value>, k: &str) -> Result<bool, GateError> {
    match ev.get(k) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(other) => Err(cx.err(&key(&[], k), format!("expected a boolean, got {}", type_name(other)))),
    }
}

fn clip(s: &str) -> String {
    s.chars().take(60).collect()
}

impl UiStream {
    fn text(&mut self, cx: &mut Cx<'_>, ev: &Map<String, Value>, kind: &'static str, start: bool) -> Result<(), GateError> {
        let id = cx.str(&[], ev, "id")?.to_owned();
        if start {
            cx.keep(id.len() + 32)?;
            self.texts.insert((id, kind), self.parts.len());
            self.parts.push(Part { value: json_part(kind, String::new()), call: None });
            return Ok(());
        }
        let Some(&pos) = self.texts.get(&(id.clone(), kind)) else {
            return Err(cx.err(&key(&[], "id"), format!("a {kind} delta for part {:?}, which was never started", clip(&id))));
        };
        let piece = cx.str(&[], ev, "delta")?;
        cx.keep(piece.len())?;
        if let Some(Value::String(s)) = self.parts.get_mut(pos).and_then(|p| p.value.get_mut("text")) {
            s.push_str(piece);
        }
        Ok(())
    }

    fn id<'e>(cx: &Cx<'_>, ev: &'e Map<String, Value>) -> Result<&'e str, GateError> {
        let id = cx.str(&[], ev, "toolCallId")?;
        if id.is_empty() {
            return Err(cx.err(&key(&[], "toolCallId"), "an empty tool call id"));
        }
        Ok(id)
    }

    fn input_start(&mut self, cx: &mut Cx<'_>, ev: Map<String, Value>) -> Result<(), GateError> {
        let id = Self::id(cx, &ev)?.to_owned();
        let name = cx.str(&[], &ev, "toolName")?.to_owned();
        if self.tools.contains_key(&id) {
            return Err(cx.err(&key(&[], "toolCallId"), format!("the tool call id {:?} appears twice in one stream", clip(&id))));
        }
        let (dynamic, provider) = (bool_member(cx, &ev, "dynamic")?, bool_member(cx, &ev, "providerExecuted")?);
        cx.keep(cx.bytes)?;
        if provider {
            self.tools.insert(id, Tool { name, dynamic, provider, stand: Stand::Open, start: None, part: None });
            return cx.pass(Value::Object(ev));
        }
        self.tools.insert(id, Tool { name, dynamic, provider, stand: Stand::Open, start: Some(ev), part: None });
        Ok(())
    }

    fn input_delta(&mut self, cx: &mut Cx<'_>, ev: Map<String, Value>) -> Result<(), GateError> {
        let id = Self::id(cx, &ev)?;
        cx.str(&[], &ev, "inputTextDelta")?;
        match self.tools.get(id) {
            Some(t) if t.stand == Stand::Open && t.provider => cx.pass(Value::Object(ev)),
            Some(t) if t.stand == Stand::Open => Ok(()), // a preview: the available input decides
            _ => Err(cx.err(&key(&[], "toolCallId"), format!("an input delta for tool call {:?}, which is not an input being streamed", clip(id)))),
        }
    }

    fn part_type(name: &str, dynamic: bool) -> Map<String, Value> {
        let mut m = Map::new();
        if dynamic {
            m.insert("type".into(), json!("dynamic-tool"));
            m.insert("toolName".into(), json!(name));
        } else {
            m.insert("type".into(), json!(format!("tool-{name}")));
        }
        m
    }

    fn input_available(&mut self, cx: &mut Cx<'_>, mut ev: Map<String, Value>) -> Result<(), GateError> {
        let id = Self::id(cx, &ev)?.to_owned();
        let name = cx.str(&[], &ev, "toolName")?.to_owned();
        let (dynamic, provider) = (bool_member(cx, &ev, "dynamic")?, bool_member(cx, &ev, "providerExecuted")?);
        let start = match self.tools.get_mut(&id) {
            None => None,
            Some(t) if t.stand == Stand::Open => {
                if t.name != name {
                    return Err(cx.err(
                        &key(&[], "toolName"),
                        format!("tool call {:?} names tool {:?}, but its input started as {:?}", clip(&id), clip(&name), clip(&t.name)),
                    ));
                }
                if t.dynamic != dynamic || t.provider != provider {
                    return Err(cx.err(&[], format!("tool call {:?} changes `dynamic` or `providerExecuted` between its start and its input", clip(&id))));
                }
                t.start.take()
            }
            Some(_) => return Err(cx.err(&key(&[], "toolCallId"), format!("the tool call id {:?} appears twice in one stream", clip(&id)))),
        };
        cx.keep(cx.bytes)?;
        let mut part = Self::part_type(&name, dynamic);
        part.insert("toolCallId".into(), json!(id));
        part.insert("state".into(), json!("input-available"));
        part.insert("input".into(), ev.get("input").cloned().unwrap_or(Value::Null));
        if provider {
            part.insert("providerExecuted".into(), json!(true));
            self.provider.push(ProviderCall { call_id: id.clone(), tool: name.clone(), kind: part_kind(&part) });
            self.parts.push(Part { value: part, call: None });
            self.tools.insert(id, Tool { name, dynamic, provider, stand: Stand::Provider, start: None, part: Some(self.parts.len() - 1) });
            return cx.pass(Value::Object(ev));
        }
        let call = cx.open(&[], Some(&id), &name, true)?;
        let problem = cx.claim(&[Seg::Key("input".into())]);
        cx.close_value(call, ev.get("input"), problem)?;
        self.step.0 += 1;
        self.total.0 += 1;
        if !ev.contains_key("input") {
            part.remove("input"); // absent stays absent: guard reads it as `{}` too
        }
        self.parts.push(Part { value: part, call: Some(call) });
        let part_at = Some(self.parts.len() - 1);
        let released = cx.sh.call(call).and_then(|t| Some((t.allowed_text()?, t.verdict.as_ref()?.arguments.clone()?)));
        let allowed = released.is_some();
        self.tools.insert(id.clone(), Tool { name: name.clone(), dynamic, provider, stand: Stand::Decided { allowed }, start: None, part: part_at });
        let Some((text, args)) = released else {
            let message = cx.sh.call(call).and_then(|t| t.verdict.as_ref()).map(|v| crate::dialect::shape::message_of(v).to_owned()).unwrap_or_default();
            let mut refusal = Map::new();
            refusal.insert("type".into(), json!("tool-input-error"));
            refusal.insert("toolCallId".into(), json!(id));
            refusal.insert("toolName".into(), json!(name));
            refusal.insert("input".into(), ev.remove("input").unwrap_or(Value::Null));
            for k in ["dynamic", "title", "toolMetadata", "providerMetadata"] {
                if let Some(v) = ev.remove(k) {
                    refusal.insert(k.into(), v);
                }
            }
            refusal.insert("errorText".into(), json!(message));
            let weight = cx.bytes + message.len() + 128;
            return cx.emit(Value::Object(refusal), weight);
        };
        self.step.1 += 1;
        self.total.1 += 1;
        if let Some(start) = start {
            cx.emit(Value::Object(start), 256)?;
            cx.emit(json!({ "type": "tool-input-delta", "toolCallId": id, "inputTextDelta": text }), text.len() + 128)?;
        }
        ev.insert("input".into(), args);
        cx.emit(Value::Object(ev), text.len() + 256)
    }

    /// An upstream `tool-input-error`: the SDK refused the model's input itself; never a call.
    fn input_error(&mut self, cx: &mut Cx<'_>, ev: Map<String, Value>) -> Result<(), GateError> {
        let id = Self::id(cx, &ev)?.to_owned();
        let name = cx.str(&[], &ev, "toolName")?.to_owned();
        let dynamic = bool_member(cx, &ev, "dynamic")?;
        let provider = bool_member(cx, &ev, "providerExecuted")?;
        cx.str(&[], &ev, "errorText")?;
        match self.tools.get(&id) {
            None => {}
            Some(t) if t.stand == Stand::Open && t.name == name => {}
            Some(_) => {
                return Err(cx.err(
                    &key(&[], "toolCallId"),
                    format!("an input error for tool call {:?}, which was already made available or names another tool", clip(&id)),
                ))
            }
        }
        cx.keep(cx.bytes)?;
        let mut part = Self::part_type(&name, dynamic);
        part.insert("toolCallId".into(), json!(id));
        part.insert("state".into(), json!("output-error"));
        part.insert("input".into(), ev.get("input").cloned().unwrap_or(Value::Null));
        part.insert("errorText".into(), ev.get("errorText").cloned().unwrap_or_default());
        if provider {
            part.insert("providerExecuted".into(), json!(true));
            self.provider.push(ProviderCall { call_id: id.clone(), tool: name.clone(), kind: part_kind(&part) });
        }
        self.parts.push(Part { value: part, call: None });
        self.tools.insert(id, Tool { name, dynamic, provider, stand: Stand::Answered, start: None, part: Some(self.parts.len() - 1) });
        cx.pass(Value::Object(ev))
    }

    /// A chunk about a decided call (`tool-output-*`, `tool-approval-request`): passed for an
    /// allowed or provider-run call, dropped for a refused one (or one the SDK answered with
    /// `tool-input-error`), `E_PAYLOAD` for any other id.
    fn about_call(&mut self, cx: &mut Cx<'_>, ev: Map<String, Value>, kind: &str) -> Result<(), GateError> {
        let id = Self::id(cx, &ev)?.to_owned();
        let stand = self.tools.get(&id).map(|t| (t.stand, t.provider));
        match stand {
            // refused by the gate, or (not run by the provider) answered upstream with
            // `tool-input-error`: the client keeps that answer
            Some((Stand::Decided { allowed: false }, _) | (Stand::Answered, false)) => return Ok(()),
            Some((Stand::Decided { allowed: true }, _)) => {}
            Some((Stand::Provider | Stand::Answered, true)) => {
                cx.keep(cx.bytes)?;
                let part = self.tools.get(&id).and_then(|t| t.part).and_then(|p| self.parts.get_mut(p));
                if let Some(part) = part {
                    match kind {
                        "tool-output-available" => {
                            part.value.insert("state".into(), json!("output-available"));
                            part.value.insert("output".into(), ev.get("output").cloned().unwrap_or(Value::Null));
                        }
                        "tool-output-error" => {
                            part.value.insert("state".into(), json!("output-error"));
                            part.value.insert("errorText".into(), ev.get("errorText").cloned().unwrap_or_default());
                        }
                        _ => {}
                    }
                }
            }
            _ => return Err(cx.err(&key(&[], "toolCallId"), format!("a {kind} chunk for tool call {:?}, which was never decided", clip(&id)))),
        }
        if kind == "tool-approval-request" {
            let approval = cx.str(&[], &ev, "approvalId")?.to_owned();
            cx.keep(approval.len() + id.len() + 32)?;
            if self.approvals.insert(approval.clone(), id).is_some() {
                return Err(cx.err(&key(&[], "approvalId"), format!("the approval id {:?} appears twice in one stream", clip(&approval))));
            }
        }
        cx.pass(Value::Object(ev))
    }

    fn approval_response(&mut self, cx: &mut Cx<'_>, ev: Map<String, Value>) -> Result<(), GateError> {
        let approval = cx.str(&[], &ev, "approvalId")?;
        let Some(id) = self.approvals.get(approval) else {
            return Err(
                cx.err(&key(&[], "approvalId"), format!("an approval response for {:?}, which no approval request of this stream asked", clip(approval)))
            );
        };
        match self.tools.get(id).map(|t| t.stand) {
            Some(Stand::Decided { allowed: false }) => Ok(()),
            _ => cx.pass(Value::Object(ev)),
        }
    }
}

impl Assembler for UiStream {
    fn event(&mut self, cx: &mut Cx<'_>, ev: Value) -> Result<(), GateError> {
        let Value::Object(mut ev) = ev else { return Err(cx.err(&[], "expected a chunk object")) };
        let kind = cx.str(&[], &ev, "type")?.to_owned();
        match kind.as_str() {
            "text-start" => self.text(cx, &ev, "text", true)?,
            "reasoning-start" => self.text(cx, &ev, "reasoning", true)?,
            "text-delta" => self.text(cx, &ev, "text", false)?,
            "reasoning-delta" => self.text(cx, &ev, "reasoning", false)?,
            "tool-input-start" => return self.input_start(cx, ev),
            "tool-input-delta" => return self.input_delta(cx, ev),
            "tool-input-available" => return self.input_available(cx, ev),
            "tool-input-error" => return self.input_error(cx, ev),
            "tool-output-available" | "tool-output-error" | "tool-output-denied" | "tool-approval-request" => return self.about_call(cx, ev, &kind),
            "tool-approval-response" => return self.approval_response(cx, ev),
            "start" => {
                if let Some(id) = cx.opt_str(&[], &ev, "messageId")? {
                    cx.keep(id.len())?;
                    self.message_id = Some(id.to_owned());
                }
            }
            "start-step" => self.step = (0, 0),
            "reset-step" => {
                // the client drops the step's parts; inputs still open never become calls
                self.tools.retain(|_, t| t.stand != Stand::Open || t.provider);
            }
            "finish" => {
                if self.total.0 > 0 && self.total.1 == 0 && ev.get("finishReason").and_then(Value::as_str) == Some("tool-calls") {
                    ev.insert("finishReason".into(), json!("stop"));
                }
                self.finished = true;
            }
            t if t.starts_with("tool-") => {
                return Err(
                    cx.err(&key(&[], "type"), format!("an unknown tool chunk {:?}; a UI message stream's tool chunks are read, never passed unread", clip(t)))
                )
            }
            _ => {} // text-end, reasoning-end, finish-step, error, abort, data-*, sources, files, metadata …
        }
        cx.pass(Value::Object(ev))
    }

    fn ended(&self) -> Option<&'static str> {
        self.finished.then_some("finish")
    }

    /// The assembled turn: one assistant `UIMessage`.
    fn finish(&mut self, cx: &mut Cx<'_>) -> Result<Assembled, GateError> {
        if !self.finished {
            let mut open: Vec<String> =
                self.tools.iter().filter(|(_, t)| t.stand == Stand::Open).map(|(id, t)| format!("tool input {:?} (`{}`)", clip(id), clip(&t.name))).collect();
            open.sort();
            let open = if open.is_empty() { String::new() } else { format!(" ({} never made available)", open.join(", ")) };
            return Err(cx.cut(format!("without its `finish` chunk{open}")));
        }
        let mut slots = Vec::new();
        let mut parts = Vec::with_capacity(self.parts.len());
        for p in &self.parts {
            if let Some(call) = p.call {
                slots.push(Slot { call, slot: vec![Seg::Key("parts".into()), Seg::Index(parts.len()), Seg::Key("input".into())] });
            }
            parts.push(Value::Object(p.value.clone()));
        }
        let mut message = Map::new();
        if let Some(id) = &self.message_id {
            message.insert("id".into(), json!(id));
        }
        message.insert("role".into(), json!("assistant"));
        message.insert("parts".into(), Value::Array(parts));
        Ok(Assembled { payload: Value::Object(message), calls: slots, provider_executed: std::mem::take(&mut self.provider) })
    }
}

fn json_part(kind: &str, text: String) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("type".into(), json!(kind));
    m.insert("text".into(), Value::String(text));
    m
}

fn part_kind(part: &Map<String, Value>) -> String {
    part.get("type").and_then(Value::as_str).unwrap_or_default().to_owned()
}
