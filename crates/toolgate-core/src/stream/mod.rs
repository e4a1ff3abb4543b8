//! Streaming guard: a model's streamed turn, event by event. Each tool call is decided once, the
//! moment its last fragment arrives (so a host can act on it before the stream ends); text is
//! forwarded live; a call is held until complete, then released whole with its repaired
//! arguments, or dropped if refused, with indexes and stop reasons rewritten so the forwarded
//! stream stays valid for the dialect's own consumers. At the end, the assembled turn is answered
//! by [`Gate::finish_turn`] with the verdicts already made, exactly as `guard` answers a whole
//! turn.
//!
//! One assembler per dialect (`openai`, `openai-responses`, `anthropic`, `ai-sdk`, `gemini`,
//! `ai-sdk-ui`, `pydantic-ai`),
//! behind one small `Assembler` trait; the shared state (calls, buffers, the forward queue, the byte budget)
//! lives in `buffer.rs`, event reading and call decisions in `event.rs`.

mod ai_sdk;
mod ai_sdk_ui;
mod anthropic;
mod buffer;
mod event;
mod gemini;
mod openai;
mod openai_responses;
mod pydantic_ai;

use serde_json::Value;

use crate::context::CallContext;
use crate::dialect::{Args, Call, Dialect, Found, ProviderCall};
use crate::error::GateError;
use crate::gate::who::Stage;
use crate::gate::Gate;
use crate::json::parse::{parse_payload, ParseError};
use crate::json::pointer::Seg;
use crate::schema::types::type_name;
use crate::turn::{TurnCall, TurnReport};

use buffer::Shared;
use event::Cx;

/// The dialects [`Gate::stream`] reads.
pub const STREAM_DIALECTS: [Dialect; 7] =
    [Dialect::OpenAi, Dialect::OpenAiResponses, Dialect::Anthropic, Dialect::AiSdk, Dialect::Gemini, Dialect::AiSdkUi, Dialect::PydanticAi];

/// Where one call sits in the assembled turn.
pub(crate) struct Slot {
    /// Index of the call in [`Shared::calls`].
    pub call: usize,
    /// Path from the assembled payload's root to the call's arguments member.
    pub slot: Vec<Seg>,
}

/// A whole turn rebuilt from a stream, in the dialect's non-streamed form.
pub(crate) struct Assembled {
    /// The turn (a chat.completion, an Anthropic message, a Response …).
    pub payload: Value,
    /// Every tracked call, in payload order.
    pub calls: Vec<Slot>,
    /// Tools the provider ran itself.
    pub provider_executed: Vec<ProviderCall>,
}

/// One dialect's stream reader. Implementations hold per-stream state; every method is total
/// over untrusted input (a broken event is `E_PAYLOAD`, never a panic).
pub(crate) trait Assembler: Send + Sync + std::fmt::Debug {
    /// Handles one parsed event: feeds and closes calls through `cx`, queues what is safe to
    /// forward.
    fn event(&mut self, cx: &mut Cx<'_>, ev: Value) -> Result<(), GateError>;

    /// OpenAI's `[DONE]` sentinel; other dialects have none.
    fn done(&mut self, cx: &mut Cx<'_>) -> Result<(), GateError> {
        Err(cx.err(&[], "`[DONE]` is not an event of this stream"))
    }

    /// The terminal event, once seen: any later event is refused.
    fn ended(&self) -> Option<&'static str>;

    /// Rebuilds the whole turn. A stream that stopped before its terminal event is `E_PAYLOAD`
    /// naming what was missing (and any call left open); calls that never closed in a stream
    /// that did end are left undecided here (the caller refuses them).
    fn finish(&mut self, cx: &mut Cx<'_>) -> Result<Assembled, GateError>;
}

/// A guarded stream (`ToolCallStream` in docs/api.md). Create it with [`Gate::stream`]; feed it every
/// event with [`GateStream::push`]; emit what [`GateStream::forward`] returns; finish with
/// [`GateStream::end`], passing the gate that made it each time. After any error the stream is
/// failed: every later `push` and `end` answers `E_PAYLOAD`.
///
/// Bounded: a call's arguments beyond `limits.maxArgumentBytes` are refused (`bad_arguments`) by
/// the fragment that crosses the limit, and its later fragments are dropped unread; everything
/// held (text and arguments kept for the assembled turn, events not yet taken by `forward`)
/// beyond `limits.maxPayloadBytes` is `E_PAYLOAD`.
#[derive(Debug)]
pub struct GateStream {
    dialect: Dialect,
    ctx: CallContext,
    asm: Box<dyn Assembler>,
    sh: Shared,
    events: usize,
    failed: Option<String>,
}

impl Gate {
    /// Starts a guarded stream in `d`. Dialects without a streaming form here are `E_DIALECT`
    /// naming the six supported.
    pub fn stream(&self, d: Dialect) -> Result<GateStream, GateError> {
        self.stream_as(d, CallContext::default())
    }

    /// [`Gate::stream`] for a caller: every call of the stream is decided for `ctx`, in order
    /// (loop and taint state move as calls complete). Plugged engines are not consulted in
    /// streams (their answers may be asynchronous); the host layer refuses to stream a gate
    /// that has them.
    pub fn stream_as(&self, d: Dialect, ctx: CallContext) -> Result<GateStream, GateError> {
        let asm: Box<dyn Assembler> = match d {
            Dialect::OpenAi => Box::<openai::OpenAiStream>::default(),
            Dialect::OpenAiResponses => Box::<openai_responses::ResponsesStream>::default(),
            Dialect::Anthropic => Box::<anthropic::AnthropicStream>::default(),
            Dialect::AiSdk => Box::<ai_sdk::AiSdkStream>::default(),
            Dialect::Gemini => Box::<gemini::GeminiStream>::default(),
            Dialect::PydanticAi => Box::<pydantic_ai::PydanticAiStream>::default(),
            Dialect::AiSdkUi => Box::<ai_sdk_ui::UiStream>::default(),
            other => {
                let names: Vec<&str> = STREAM_DIALECTS.iter().map(|d| d.as_str()).collect();
                return Err(GateError::Dialect(format!("{other} has no stream form; streams are read in {}", names.join(", "))));
            }
        };
        Ok(GateStream { dialect: d, ctx, asm, sh: Shared::new(self.max_payload_bytes()), events: 0, failed: None })
    }
}

/// What one pushed text holds.
enum Frame<'a> {
    /// Nothing to read: a blank line, an SSE comment, an `event:`/`id:`/`retry:` field only.
    Skip,
    /// OpenAI's `[DONE]`.
    Done,
    /// One event's JSON text.
    Data(std::borrow::Cow<'a, str>),
}

/// Reads one pushed text: a bare JSON event, or SSE lines (`data:` lines joined by `\n` as SSE
/// requires; other fields and comments ignored).
fn frame(text: &str) -> Frame<'_> {
    let t = text.trim_matches(|c| c == '\n' || c == '\r' || c == ' ' || c == '\t' || c == '\u{feff}');
    if t.is_empty() {
        return Frame::Skip;
    }
    if t == "[DONE]" {
        return Frame::Done;
    }
    if t.starts_with('{') || t.starts_with('[') {
        return Frame::Data(t.into());
    }
    let is_field = |l: &str| l.starts_with(':') || ["data:", "event:", "id:", "retry:"].iter().any(|f| l.starts_with(f)) || l.is_empty();
    if !t.lines().all(|l| is_field(l.trim_end_matches('\r'))) {
        return Frame::Data(t.into()); // neither JSON nor SSE: the parser names what it is
    }
    let data: Vec<&str> =
        t.lines().map(|l| l.trim_end_matches('\r')).filter_map(|l| l.strip_prefix("data:")).map(|l| l.strip_prefix(' ').unwrap_or(l)).collect();
    match data.as_slice() {
        [] => Frame::Skip,
        [one] if one.trim() == "[DONE]" => Frame::Done,
        [one] => Frame::Data((*one).into()),
        many => Frame::Data(many.join("\n").into()),
    }
}

impl GateStream {
    /// The dialect this stream reads.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    fn refuse_failed(&self) -> Result<(), GateError> {
        match &self.failed {
            Some(first) => Err(GateError::Payload(format!("{} stream: an earlier event failed ({first}); this stream accepts nothing more", self.dialect))),
            None => Ok(()),
        }
    }

    /// Feeds one event: an SSE `data:` line (with or without the `data: ` prefix; blank lines,
    /// comments and other SSE fields are ignored; `[DONE]` ends an OpenAI stream) or one event's
    /// JSON text. Returns the calls this event completed, each decided now, in the order they
    /// completed. A broken event, an event after the stream's end, or a stream past
    /// `limits.maxPayloadBytes` buffered is `E_PAYLOAD` (and fails the stream).
    pub fn push(&mut self, gate: &Gate, event: &str) -> Result<Vec<TurnCall>, GateError> {
        self.refuse_failed()?;
        let mark = self.sh.queued_events();
        let result = self.push_inner(gate, event);
        if let Err(e) = &result {
            // what the failed event queued (a call it completed, decided before the failure was
            // found) is in no answer the host got: none of it is forwarded
            self.sh.drop_after(mark);
            self.failed = Some(e.to_string());
            self.record_error(gate, e);
        }
        result
    }

    /// Records a stream refused as a whole (once: a failed stream refuses everything after).
    fn record_error(&self, gate: &Gate, e: &GateError) {
        if let Some(log) = gate.audit() {
            log.record_error(&self.ctx, Some(self.dialect.as_str()), e.code(), &e.to_string(), gate.now_ms());
        }
    }

    fn push_inner(&mut self, gate: &Gate, event: &str) -> Result<Vec<TurnCall>, GateError> {
        let data = match frame(event) {
            Frame::Skip => return Ok(Vec::new()),
            Frame::Done => None,
            Frame::Data(text) => Some(text),
        };
        self.events += 1;
        let (d, n) = (self.dialect, self.events);
        let parsed = match &data {
            None => None,
            Some(text) => {
                let parsed = parse_payload(text, gate.limits(), gate.max_payload_bytes()).map_err(|e| unreadable(d, n, &e))?;
                if !parsed.value.is_object() {
                    return Err(GateError::Payload(format!("{d} stream event #{n}: expected an event object, got {}", type_name(&parsed.value))));
                }
                Some(parsed)
            }
        };
        let kind = parsed.as_ref().map_or_else(|| "[DONE]".to_owned(), |p| event_kind(&p.value));
        if let Some(last) = self.asm.ended() {
            return Err(GateError::Payload(format!("{d} stream event #{n} ({kind}): an event after the stream ended (`{last}`)")));
        }
        self.sh.completed.clear();
        let bytes = data.as_ref().map_or(0, |t| t.len());
        let who = gate.who(&self.ctx, Stage::Full);
        let mut cx = Cx { gate, who, d, sh: &mut self.sh, n, kind, bytes, big_integer: false, problems: Vec::new(), claimed: None };
        match parsed {
            None => self.asm.done(&mut cx)?,
            Some(parsed) => {
                cx.big_integer = parsed.big_integer;
                cx.problems = parsed.problems;
                // a member spelled with other letter case (`Tool_Calls`): found once the
                // assembler has claimed the calls' argument values, where such keys are allowed
                let seen = parsed.case_keys.then(|| parsed.value.clone());
                if seen.is_some() {
                    cx.claimed = Some(Vec::new());
                }
                self.asm.event(&mut cx, parsed.value)?;
                if let Some((path, problem)) = cx.problems.first() {
                    return Err(cx.err(path, problem_text(problem)));
                }
                if let Some(value) = &seen {
                    let claimed = cx.claimed.take().unwrap_or_default();
                    if let Some((path, what)) = crate::dialect::members::find(value, &|p| claimed.iter().any(|c| c == p)) {
                        return Err(cx.err(&path, what));
                    }
                }
            }
        }
        Ok(self.sh.completed.iter().filter_map(|&i| self.sh.call(i)).filter_map(turn_call).collect())
    }

    /// Takes the events safe to emit now, in order: text as it arrived; each allowed call whole,
    /// once complete, with its repaired arguments; nothing of a refused call; indexes and
    /// finish/stop reasons rewritten to match what was forwarded. After a failed `push`, only
    /// what earlier, successful events queued.
    pub fn forward(&mut self) -> Vec<Value> {
        self.sh.take()
    }

    /// Finishes the stream: the whole turn, as `guard` would answer it, from the verdicts already
    /// made (a call that never closed in a stream that did end is refused now). `payload` is
    /// always present: the turn in the dialect's non-streamed form, repairs written back. A
    /// stream cut off before its terminal event is `E_PAYLOAD` naming what was missing.
    pub fn end(mut self, gate: &Gate) -> Result<TurnReport, GateError> {
        self.refuse_failed()?;
        let result = self.end_inner(gate);
        if let Err(e) = &result {
            self.record_error(gate, e);
        }
        result
    }

    fn end_inner(&mut self, gate: &Gate) -> Result<TurnReport, GateError> {
        let d = self.dialect;
        self.sh.completed.clear();
        let who = gate.who(&self.ctx, Stage::Full);
        let mut cx = Cx { gate, who, d, sh: &mut self.sh, n: 0, kind: "end".into(), bytes: 0, big_integer: false, problems: Vec::new(), claimed: None };
        let assembled = self.asm.finish(&mut cx)?;
        cx.refuse_unfinished();
        let mut found = Found { calls: Vec::with_capacity(assembled.calls.len()), provider_executed: assembled.provider_executed };
        let mut verdicts = Vec::with_capacity(assembled.calls.len());
        for s in &assembled.calls {
            let args: Args = cx.args_of(s.call);
            let Some(t) = cx.sh.call(s.call) else { continue };
            let Some(v) = t.verdict.clone() else { continue };
            found.calls.push(Call {
                call_id: t.call_id.clone(),
                wire_id: t.wire_id.clone().map(Value::String),
                tool: t.tool.clone(),
                args,
                slot: s.slot.clone(),
                malformed: None,
            });
            verdicts.push(v);
        }
        if found.calls.len() != cx.sh.calls.len() {
            return Err(cx.err(&[], "the assembled turn lost track of a call"));
        }
        let payload = assembled.payload;
        let mut report = gate.finish_turn(d, payload.clone(), found, verdicts)?;
        report.payload.get_or_insert(payload);
        Ok(report)
    }
}

/// The report's per-call entry for a decided call (`None` while undecided).
fn turn_call(t: &buffer::Tracked) -> Option<TurnCall> {
    Some(TurnCall { call_id: t.call_id.clone(), tool: t.tool.clone(), verdict: t.verdict.clone()?, arguments_json: t.allowed_text() })
}

/// The event's type for messages: its `type` member, else `object`, else `chunk`.
fn event_kind(v: &Value) -> String {
    let name = v.get("type").or_else(|| v.get("object")).and_then(Value::as_str).unwrap_or("chunk");
    name.chars().take(60).collect()
}

fn unreadable(d: Dialect, n: usize, e: &ParseError) -> GateError {
    let what = match e {
        ParseError::TooLarge { bytes, limit } => format!("{bytes} bytes, over limits.maxPayloadBytes ({limit} bytes)"),
        ParseError::TooDeep { limit } => format!("nested deeper than {limit} levels"),
        ParseError::Syntax { detail, line, column } => format!("not valid JSON ({detail} at line {line}, column {column})"),
        other => other.to_string(),
    };
    GateError::Payload(format!("{d} stream event #{n}: {what}"))
}

fn problem_text(p: &ParseError) -> String {
    match p {
        ParseError::DuplicateKey { key } => format!("the key {key:?} appears twice in one object"),
        ParseError::ProtoKey { key } => format!("the key {key:?} is not allowed"),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(f: Frame<'_>) -> Option<String> {
        match f {
            Frame::Data(t) => Some(t.into_owned()),
            _ => None,
        }
    }

    #[test]
    fn frames_sse_lines_and_bare_json() {
        assert!(matches!(frame(""), Frame::Skip));
        assert!(matches!(frame(": keep-alive"), Frame::Skip));
        assert!(matches!(frame("event: ping"), Frame::Skip));
        assert!(matches!(frame("data: [DONE]"), Frame::Done));
        assert!(matches!(frame("[DONE]"), Frame::Done));
        assert_eq!(data(frame("data: {\"a\":1}\n")).as_deref(), Some("{\"a\":1}"));
        assert_eq!(data(frame("data:{\"a\":1}")).as_deref(), Some("{\"a\":1}"));
        assert_eq!(data(frame("event: x\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\n")).as_deref(), Some("{\"a\":\n1}"));
        assert_eq!(data(frame("  {\"a\":1}  ")).as_deref(), Some("{\"a\":1}"));
        assert_eq!(data(frame("hello")).as_deref(), Some("hello"));
    }

    #[test]
    fn unsupported_dialects_name_the_supported_ones() {
        let gate = Gate::from_json(r#"{"tools":[]}"#).unwrap();
        let e = gate.stream(Dialect::Mcp).unwrap_err();
        assert_eq!(e.code(), "E_DIALECT");
        assert!(e.to_string().contains("openai, openai-responses, anthropic, ai-sdk, gemini"), "{e}");
    }
}
