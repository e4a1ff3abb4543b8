//! Vercel AI SDK stream parts, at both levels: a provider's `doStream` parts
//! (`LanguageModelV3StreamPart`: `text-delta` has `delta`, `tool-call.input` is JSON text,
//! `finish.finishReason` is `{ unified, raw }`) and `streamText`'s `fullStream` parts
//! (`TextStreamPart`: `text-delta` has `text`, `tool-call.input` is the parsed value,
//! `finishReason` a string, with `start-step` / `finish-step` around each step).
//!
//! A call is complete at its `tool-call` part, whose `input` is authoritative (the
//! `tool-input-start` / `-delta` / `-end` parts before it only preview it). An allowed call is
//! released as start + one delta + end (when the stream previewed it) and the `tool-call` part
//! with its repaired input; a refused call is dropped with every later part naming its id
//! (`tool-result`, `tool-error` …). `finishReason` `tool-calls` becomes `stop` when every call
//! of the step (for `finish`: of the stream) was dropped. Calls the provider ran
//! (`providerExecuted`) pass and are reported.
//!
//! The **UI message stream** (`toUIMessageStream` output) is the `ai-sdk-ui` dialect
//! (`ai_sdk_ui.rs`): a chunk only that protocol has is `E_PAYLOAD` here, naming it.

use ahash::{AHashMap, AHashSet};
use serde_json::{json, Map, Value};

use super::ai_sdk_ui::is_ui_chunk;
use super::event::Cx;
use super::{Assembled, Assembler, Slot};
use crate::dialect::shape::key;
use crate::dialect::ProviderCall;
use crate::error::GateError;
use crate::json::pointer::Seg;

/// The AI SDK stream assembler.
#[derive(Debug, Default)]
pub(crate) struct AiSdkStream {
    /// The assembled content parts, in order; text/reasoning parts by (stream id, kind).
    parts: Vec<Part>,
    texts: AHashMap<(String, &'static str), usize>,
    /// Previewed tool inputs (`tool-input-start` seen); those not yet called, by id; every id
    /// started.
    inputs: Vec<Input>,
    open_inputs: AHashMap<String, usize>,
    started: AHashSet<String>,
    /// Ids of calls the provider ran.
    provider_ids: AHashSet<String>,
    /// Ids of refused calls: parts naming them are dropped.
    dropped: AHashSet<String>,
    /// Tools the provider ran.
    provider: Vec<ProviderCall>,
    /// Gated calls and released ones, in this step and in the whole stream.
    step: (usize, usize),
    total: (usize, usize),
    finished: bool,
}

#[derive(Debug)]
struct Part {
    value: Map<String, Value>,
    /// For text/reasoning parts: the stream id they accumulate.
    text_id: Option<(String, &'static str)>,
    call: Option<usize>,
}

#[derive(Debug)]
struct Input {
    id: String,
    tool: String,
    /// `None` for a provider-executed call (passed through).
    call: Option<usize>,
    start: Map<String, Value>,
    /// The `tool-call` part arrived.
    closed: bool,
}

fn finish_reason_to_stop(ev: &mut Map<String, Value>) {
    match ev.get_mut("finishReason") {
        Some(Value::String(s)) if s == "tool-calls" => *s = "stop".into(),
        Some(Value::Object(m)) if m.get("unified").and_then(Value::as_str) == Some("tool-calls") => {
            m.insert("unified".into(), json!("stop"));
        }
        _ => {}
    }
}

impl AiSdkStream {
    fn text(&mut self, cx: &mut Cx<'_>, ev: &Map<String, Value>, kind: &'static str, piece: Option<&str>) -> Result<(), GateError> {
        let id = cx.str(&[], ev, "id")?.to_owned();
        let pos = match self.texts.get(&(id.clone(), kind)) {
            Some(&p) => p,
            None => {
                let mut value = Map::new();
                value.insert("type".into(), json!(kind));
                value.insert("text".into(), json!(""));
                cx.keep(id.len() + 32)?;
                self.parts.push(Part { value, text_id: Some((id.clone(), kind)), call: None });
                self.texts.insert((id, kind), self.parts.len() - 1);
                self.parts.len() - 1
            }
        };
        let Some(piece) = piece else { return Ok(()) };
        cx.keep(piece.len())?;
        if let Some(Value::String(s)) = self.parts.get_mut(pos).and_then(|p| p.value.get_mut("text")) {
            s.push_str(piece);
        }
        Ok(())
    }

    fn input(&self, cx: &Cx<'_>, ev: &Map<String, Value>) -> Result<usize, GateError> {
        let id = cx.str(&[], ev, "id")?;
        self.open_inputs.get(id).copied().ok_or_else(|| cx.err(&key(&[], "id"), format!("tool input {id:?} was never started (or already called)")))
    }

    fn tool_call(&mut self, cx: &mut Cx<'_>, mut ev: Map<String, Value>) -> Result<(), GateError> {
        let id = cx.str(&[], &ev, "toolCallId")?.to_owned();
        let tool = cx.str(&[], &ev, "toolName")?.to_owned();
        let preview = self.open_inputs.remove(&id);
        if let Some(p) = preview {
            if self.inputs.get(p).is_some_and(|i| i.tool != tool) {
                return Err(cx.err(&key(&[], "toolName"), format!("tool call {id:?} names another tool than its input preview")));
            }
        }
        cx.keep(cx.bytes)?;
        if ev.get("providerExecuted") == Some(&Value::Bool(true)) {
            if let Some(i) = preview.and_then(|p| self.inputs.get_mut(p)) {
                i.closed = true;
            }
            self.provider_ids.insert(id.clone());
            self.provider.push(ProviderCall { call_id: id, tool, kind: "tool-call".into() });
            self.parts.push(Part { value: ev.clone(), text_id: None, call: None });
            return cx.pass(Value::Object(ev));
        }
        let call = match preview.and_then(|p| self.inputs.get_mut(p)) {
            Some(i) => {
                i.closed = true;
                i.call
            }
            None => None,
        };
        let call = match call {
            Some(c) => c,
            None => cx.open(&[], Some(&id), &tool, false)?,
        };
        let ip = [Seg::Key("input".into())];
        match ev.get("input") {
            Some(Value::String(s)) => cx.close_text(&ip, call, Some(s), false)?,
            Some(v) => {
                if let Some(t) = cx.sh.calls.get_mut(call) {
                    t.value_args = true;
                }
                let problem = cx.claim(&ip);
                cx.close_value(call, Some(v), problem)?;
            }
            None => cx.close_text(&ip, call, None, false)?,
        }
        self.step.0 += 1;
        self.total.0 += 1;
        self.parts.push(Part { value: ev.clone(), text_id: None, call: Some(call) });
        let Some(t) = cx.sh.call(call) else { return Ok(()) };
        let (Some(text), Some(verdict)) = (t.allowed_text(), t.verdict.as_ref()) else {
            self.dropped.insert(id);
            return Ok(());
        };
        let input = if t.value_args { verdict.arguments.clone().unwrap_or(Value::Null) } else { json!(text) };
        self.step.1 += 1;
        self.total.1 += 1;
        if let Some(start) = preview.and_then(|p| self.inputs.get(p)).map(|i| i.start.clone()) {
            cx.emit(Value::Object(start), 256)?;
            cx.emit(json!({ "type": "tool-input-delta", "id": id, "delta": text }), text.len() + 128)?;
            cx.emit(json!({ "type": "tool-input-end", "id": id }), 64)?;
        }
        ev.insert("input".into(), input);
        cx.emit(Value::Object(ev), text.len() + 256)
    }
}

impl Assembler for AiSdkStream {
    fn event(&mut self, cx: &mut Cx<'_>, ev: Value) -> Result<(), GateError> {
        let Value::Object(mut ev) = ev else { return Err(cx.err(&[], "expected a stream part object")) };
        if is_ui_chunk(&ev) {
            return Err(cx.err(&[], "a UI message stream chunk (`toUIMessageStream`); read UI message streams with dialect \"ai-sdk-ui\""));
        }
        let kind = cx.str(&[], &ev, "type")?.to_owned();
        match kind.as_str() {
            "text-start" | "reasoning-start" => {
                let k = if kind == "text-start" { "text" } else { "reasoning" };
                self.text(cx, &ev, k, None)?;
            }
            "text-delta" | "reasoning-delta" => {
                let k = if kind == "text-delta" { "text" } else { "reasoning" };
                let piece = match ["delta", "text", "textDelta"].iter().find(|f| ev.contains_key(**f)) {
                    Some(f) => cx.str(&[], &ev, f)?.to_owned(),
                    None => return Err(cx.err(&[], "missing `delta`")),
                };
                self.text(cx, &ev, k, Some(&piece))?;
            }
            "tool-input-start" => {
                let id = cx.str(&[], &ev, "id")?;
                let tool = cx.str(&[], &ev, "toolName")?;
                if !self.started.insert(id.to_owned()) {
                    return Err(cx.err(&key(&[], "id"), format!("tool input {id:?} started twice")));
                }
                cx.keep(cx.bytes)?;
                let provider = ev.get("providerExecuted") == Some(&Value::Bool(true));
                let call = if provider { None } else { Some(cx.open(&[], Some(id), tool, false)?) };
                self.open_inputs.insert(id.to_owned(), self.inputs.len());
                self.inputs.push(Input { id: id.to_owned(), tool: tool.to_owned(), call, start: ev.clone(), closed: false });
                if !provider {
                    return Ok(());
                }
            }
            "tool-input-delta" | "tool-input-end" => {
                let p = self.input(cx, &ev)?;
                if let Some(call) = self.inputs.get(p).and_then(|i| i.call) {
                    if kind == "tool-input-delta" {
                        cx.append(call, cx.str(&[], &ev, "delta")?)?;
                    }
                    return Ok(());
                }
            }
            "tool-call" => return self.tool_call(cx, ev),
            "tool-result" | "tool-error" | "tool-output-denied" | "tool-approval-request" | "tool-approval-response" => {
                let id = ev.get("toolCallId").or_else(|| ev.get("toolCall").and_then(|c| c.get("toolCallId"))).and_then(Value::as_str);
                if id.is_some_and(|id| self.dropped.contains(id)) {
                    return Ok(());
                }
                // results of calls the provider ran belong to the turn; the host's own results do not
                let provider = ev.get("providerExecuted") == Some(&Value::Bool(true)) || id.is_some_and(|id| self.provider_ids.contains(id));
                if kind == "tool-result" && provider {
                    cx.keep(cx.bytes)?;
                    self.parts.push(Part { value: ev.clone(), text_id: None, call: None });
                }
            }
            "start-step" => self.step = (0, 0),
            "finish-step" | "finish" => {
                let (calls, released) = if kind == "finish" { self.total } else { self.step };
                if calls > 0 && released == 0 {
                    finish_reason_to_stop(&mut ev);
                }
                self.finished |= kind == "finish";
            }
            _ => {} // stream-start, response-metadata, source, file, raw, error, abort …
        }
        cx.pass(Value::Object(ev))
    }

    fn ended(&self) -> Option<&'static str> {
        self.finished.then_some("finish")
    }

    fn finish(&mut self, cx: &mut Cx<'_>) -> Result<Assembled, GateError> {
        if !self.finished {
            let open: Vec<String> = self.inputs.iter().filter(|i| !i.closed).map(|i| format!("tool input {:?} (`{}`)", i.id, i.tool)).collect();
            let open = if open.is_empty() { String::new() } else { format!(" ({} never called)", open.join(", ")) };
            return Err(cx.cut(format!("without its `finish` part{open}")));
        }
        let mut slots = Vec::new();
        let mut content = Vec::with_capacity(self.parts.len());
        for p in &self.parts {
            let mut v = p.value.clone();
            if p.text_id.is_some() {
                v.retain(|k, _| k == "type" || k == "text" || k == "providerMetadata");
            }
            if let Some(call) = p.call {
                slots.push(Slot { call, slot: vec![Seg::Index(content.len()), Seg::Key("input".into())] });
            }
            content.push(Value::Object(v));
        }
        // previewed inputs never called in a finished stream: kept so they are refused and answered
        for i in self.inputs.iter().filter(|i| !i.closed) {
            let Some(call) = i.call else { continue };
            slots.push(Slot { call, slot: vec![Seg::Index(content.len()), Seg::Key("input".into())] });
            content.push(json!({ "type": "tool-call", "toolCallId": i.id, "toolName": i.tool, "input": cx.sh.call(call).map_or("", |t| t.text.as_str()) }));
        }
        Ok(Assembled { payload: Value::Array(content), calls: slots, provider_executed: std::mem::take(&mut self.provider) })
    }
}
