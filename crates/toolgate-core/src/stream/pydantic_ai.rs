//! Pydantic AI model response stream (`ModelResponseStreamEvent`, pydantic/pydantic-ai
//! `pydantic_ai/messages.py`), one event at a time as its type adapter serializes it:
//! `PartStartEvent` (`event_kind: "part_start"`, `index`, `part`), `PartDeltaEvent`
//! (`"part_delta"`, `index`, `delta` tagged by `part_delta_kind`), `PartEndEvent` (`"part_end"`,
//! `index`, the complete `part`) and `FinalResultEvent` (`"final_result"`).
//!
//! A `tool-call` part is a call. Its `ToolCallPartDelta`s (`part_delta_kind: "tool_call"`) are
//! held: `args_delta` text is appended, `args_delta` objects are merged (as Pydantic AI applies
//! them; text and objects mixed in one call is `E_PAYLOAD`, as Pydantic AI raises). At its
//! `part_end` the call is decided (the complete part must say what the deltas said: its name, its
//! `tool_call_id` and its arguments) and, if allowed, released whole as `part_start` (with the
//! arguments to run) + `part_end`; a refused call is dropped. Parts are renumbered in the order
//! forwarded. A `tool_name_delta` or a `tool_call_id` that changes a call already started, a
//! second `part_start` for a call's index, a delta or end for a part never started or already
//! ended, and a stream that stops before every part's `part_end` are `E_PAYLOAD`. A
//! `final_result` naming a call is forwarded only once that call is released (dropped if it is
//! refused). Text, thinking, file, speech and compaction parts pass live; `builtin-tool-call`
//! parts (and their deltas) pass and are reported as provider-executed. Agent-level events (`function_tool_call` …) are not a model stream:
//! `E_PAYLOAD`. The assembled turn is a `ModelResponse` (`kind: "response"`, `parts`).

use ahash::AHashMap;
use serde_json::{json, Map, Value};

use super::event::Cx;
use super::{Assembled, Assembler, Slot};
use crate::dialect::shape::{id_or_index, key};
use crate::dialect::ProviderCall;
use crate::error::GateError;
use crate::json::parse::ParseError;
use crate::json::pointer::Seg;

/// Part kinds that pass as they are (`ModelResponsePart.part_kind`).
const PLAIN_PARTS: [&str; 7] = ["text", "thinking", "file", "speech", "compaction", "builtin-tool-call", "builtin-tool-return"];

/// The Pydantic AI stream assembler.
#[derive(Debug, Default)]
pub(crate) struct PydanticAiStream {
    /// Parts in the order started, and their positions by wire index.
    parts: Vec<Part>,
    by_wire: AHashMap<usize, usize>,
    /// The next forwarded part index.
    out_next: usize,
    /// `final_result` events waiting for their call's decision: (tracked call, event).
    finals: Vec<(usize, Value)>,
    events: usize,
}

#[derive(Debug)]
struct Part {
    wire: usize,
    /// The part as assembled so far (the complete part once ended).
    value: Value,
    /// Forwarded index (plain parts at their start, calls when released).
    out: Option<usize>,
    ended: bool,
    call: Option<CallPart>,
}

#[derive(Debug)]
struct CallPart {
    /// The tracked call.
    call: usize,
    name: String,
    id: Option<String>,
    args: Acc,
    /// A duplicate or prototype key in object arguments.
    problem: Option<ParseError>,
    /// The `part_start` event's other members (`previous_part_kind`), for the release.
    start: Map<String, Value>,
}

/// The arguments received so far: none yet, text (held by the tracked call), or an object.
#[derive(Debug)]
enum Acc {
    None,
    Text,
    Object(Map<String, Value>),
}

impl PydanticAiStream {
    /// The position of a started, not yet ended part.
    fn open_part(&self, cx: &Cx<'_>, ev: &Map<String, Value>) -> Result<usize, GateError> {
        let wire = cx.index(&[], ev, "index")?;
        let pos = self.by_wire.get(&wire).copied().ok_or_else(|| cx.err(&key(&[], "index"), format!("part {wire} was never started")))?;
        if self.parts.get(pos).is_some_and(|p| p.ended) {
            return Err(cx.err(&key(&[], "index"), format!("part {wire} already ended")));
        }
        Ok(pos)
    }

    fn part_start(&mut self, cx: &mut Cx<'_>, mut ev: Map<String, Value>) -> Result<(), GateError> {
        let wire = cx.index(&[], &ev, "index")?;
        let pp = key(&[], "part");
        let part = cx.member_obj(&[], &ev, "part")?.clone();
        let kind = cx.str(&pp, &part, "part_kind")?.to_owned();
        let again = self.by_wire.get(&wire).copied();
        if let Some(pos) = again {
            if self.parts.get(pos).is_some_and(|p| p.call.is_some()) || kind == "tool-call" {
                return Err(cx.err(&key(&[], "index"), format!("part {wire} started again: a tool call is never replaced mid-stream")));
            }
        }
        cx.keep(cx.bytes)?;
        if kind == "tool-call" {
            let name = cx.str(&pp, &part, "tool_name")?.to_owned();
            let id = cx.opt_str(&pp, &part, "tool_call_id")?.filter(|s| !s.is_empty()).map(str::to_owned);
            let call = cx.open(&pp, id.as_deref(), &name, false)?;
            let mut c = CallPart { call, name, id, args: Acc::None, problem: None, start: Map::new() };
            let ap = key(&pp, "args");
            Self::add_args(cx, &mut c, &ap, part.get("args"))?;
            ev.remove("part");
            ev.remove("index");
            c.start = ev;
            self.by_wire.insert(wire, self.parts.len());
            self.parts.push(Part { wire, value: Value::Object(part), out: None, ended: false, call: Some(c) });
            return Ok(()); // held until part_end
        }
        if !PLAIN_PARTS.contains(&kind.as_str()) {
            return Err(cx.err(&key(&pp, "part_kind"), format!("a part of kind {:?} is not read", kind.chars().take(40).collect::<String>())));
        }
        let out = match again.and_then(|pos| self.parts.get_mut(pos)) {
            Some(p) => {
                // Pydantic AI: a second start for an index replaces the part
                p.value = Value::Object(part);
                p.out
            }
            None => {
                let out = self.out_next;
                self.out_next += 1;
                self.by_wire.insert(wire, self.parts.len());
                self.parts.push(Part { wire, value: Value::Object(part), out: Some(out), ended: false, call: None });
                Some(out)
            }
        };
        ev.insert("index".into(), json!(out));
        cx.pass(Value::Object(ev))
    }

    /// Adds arguments (from a start's `args` or a delta's `args_delta`) to a call.
    fn add_args(cx: &mut Cx<'_>, c: &mut CallPart, path: &[Seg], v: Option<&Value>) -> Result<(), GateError> {
        match (v, &mut c.args) {
            (None | Some(Value::Null), _) => Ok(()),
            (Some(Value::String(s)), Acc::None | Acc::Text) => {
                c.args = Acc::Text;
                cx.append(c.call, s)
            }
            (Some(Value::Object(m)), Acc::None | Acc::Object(_)) => {
                if c.problem.is_none() {
                    c.problem = cx.claim(path);
                }
                cx.keep(serde_json::to_string(m).map_or(0, |t| t.len()))?;
                match &mut c.args {
                    Acc::Object(acc) => acc.extend(m.iter().map(|(k, v)| (k.clone(), v.clone()))),
                    _ => c.args = Acc::Object(m.clone()),
                }
                if let Some(t) = cx.sh.calls.get_mut(c.call) {
                    t.value_args = true;
                }
                Ok(())
            }
            (Some(Value::String(_) | Value::Object(_)), _) => Err(cx.err(path, "arguments given both as text and as an object in one call")),
            (Some(other), _) => Err(cx.err(path, format!("expected a string or an object, got {}", crate::schema::types::type_name(other)))),
        }
    }

    fn part_delta(&mut self, cx: &mut Cx<'_>, mut ev: Map<String, Value>) -> Result<(), GateError> {
        let pos = self.open_part(cx, &ev)?;
        let dp = key(&[], "delta");
        let delta = cx.member_obj(&[], &ev, "delta")?.clone();
        let kind = cx.str(&dp, &delta, "part_delta_kind")?.to_owned();
        let Some(p) = self.parts.get_mut(pos) else { return Ok(()) };
        if let Some(c) = p.call.as_mut() {
            if kind != "tool_call" {
                return Err(cx.err(&key(&dp, "part_delta_kind"), format!("a {kind:?} delta in a tool-call part")));
            }
            if cx.opt_str(&dp, &delta, "tool_name_delta")?.is_some_and(|s| !s.is_empty()) {
                return Err(cx.err(&key(&dp, "tool_name_delta"), format!("the name of call {:?} changed after it started", c.name)));
            }
            if let Some(id) = cx.opt_str(&dp, &delta, "tool_call_id")?.filter(|s| !s.is_empty()) {
                if c.id.as_deref() != Some(id) {
                    return Err(cx.err(&key(&dp, "tool_call_id"), format!("the id of call {:?} changed after it started", c.name)));
                }
            }
            return Self::add_args(cx, c, &key(&dp, "args_delta"), delta.get("args_delta"));
        }
        let piece = |k: &str| delta.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
        let grow = |v: &mut Value, k: &str, add: &str| {
            if let Some(m) = v.as_object_mut() {
                let mut s = m.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
                s.push_str(add);
                m.insert(k.to_owned(), Value::String(s));
            }
        };
        let added = match kind.as_str() {
            "text" | "thinking" => {
                let text = piece("content_delta");
                grow(&mut p.value, "content", &text);
                if let (Some(sig), Some(m)) = (delta.get("signature_delta").and_then(Value::as_str), p.value.as_object_mut()) {
                    m.insert("signature".into(), json!(sig));
                }
                text.len()
            }
            // audio, and the arguments of a tool the provider runs itself: passed, not gated
            "speech" => cx.bytes,
            "tool_call" if p.value.get("part_kind").and_then(Value::as_str) == Some("builtin-tool-call") => cx.bytes,
            other => return Err(cx.err(&key(&dp, "part_delta_kind"), format!("a {:?} delta is not read here", other.chars().take(40).collect::<String>()))),
        };
        let out = p.out;
        cx.keep(added)?;
        ev.insert("index".into(), json!(out));
        cx.pass(Value::Object(ev))
    }

    fn part_end(&mut self, cx: &mut Cx<'_>, mut ev: Map<String, Value>) -> Result<(), GateError> {
        let pos = self.open_part(cx, &ev)?;
        let pp = key(&[], "part");
        let part = cx.member_obj(&[], &ev, "part")?.clone();
        let kind = cx.str(&pp, &part, "part_kind")?.to_owned();
        let Some(p) = self.parts.get_mut(pos) else { return Ok(()) };
        p.ended = true;
        let Some(c) = p.call.as_mut() else {
            if kind == "tool-call" {
                return Err(cx.err(&key(&pp, "part_kind"), "a part that started as no tool call ends as one"));
            }
            cx.keep(cx.bytes)?;
            p.value = Value::Object(part);
            ev.insert("index".into(), json!(p.out));
            return cx.pass(Value::Object(ev));
        };
        let same = kind == "tool-call"
            && part.get("tool_name").and_then(Value::as_str) == Some(c.name.as_str())
            && part.get("tool_call_id").and_then(Value::as_str).filter(|s| !s.is_empty()) == c.id.as_deref();
        if !same {
            return Err(cx.err(&pp, format!("the complete part does not name the call {:?} that streamed", c.name)));
        }
        let ap = key(&pp, "args");
        let whole = part.get("args").filter(|v| !v.is_null());
        match (&c.args, whole) {
            (Acc::Object(acc), Some(Value::Object(w))) if acc == w => {
                let (acc, problem) = (Value::Object(acc.clone()), c.problem.take());
                cx.close_value(c.call, Some(&acc), problem)?
            }
            (Acc::None, Some(Value::Object(w))) => {
                if let Some(t) = cx.sh.calls.get_mut(c.call) {
                    t.value_args = true;
                }
                let problem = cx.claim(&ap);
                cx.close_value(c.call, Some(&Value::Object(w.clone())), problem)?
            }
            (Acc::None | Acc::Text, Some(Value::String(w))) => cx.close_text(&ap, c.call, Some(w), true)?,
            (Acc::None | Acc::Text, None) => cx.close_text(&ap, c.call, None, false)?,
            _ => return Err(cx.err(&ap, format!("the complete arguments of call {:?} differ from those streamed", c.name))),
        }
        // the assembled part holds what the model sent: its own text, or the object
        p.value = Value::Object(part);
        let call = c.call;
        let start = c.start.clone();
        let next = ev.remove("next_part_kind");
        self.release(cx, pos, call, start, next)
    }

    /// Forwards a decided call whole if it is allowed (start with its arguments, then end), and
    /// the `final_result` events waiting for it.
    fn release(&mut self, cx: &mut Cx<'_>, pos: usize, call: usize, start: Map<String, Value>, next: Option<Value>) -> Result<(), GateError> {
        let Some(t) = cx.sh.call(call) else { return Ok(()) };
        let allowed = t.verdict.as_ref().is_some_and(|v| v.allowed());
        let args = match (t.value_args, t.verdict.as_ref().and_then(|v| v.arguments.clone())) {
            (true, Some(a)) => Some(a),
            (false, Some(_)) => t.allowed_text().map(Value::String),
            _ => None,
        };
        let mut waiting: Vec<Value> = Vec::new();
        self.finals.retain_mut(|(c, v)| {
            if *c == call {
                waiting.push(std::mem::take(v));
            }
            *c != call
        });
        let (Some(args), true) = (args, allowed) else { return Ok(()) };
        let Some(p) = self.parts.get_mut(pos) else { return Ok(()) };
        let out = self.out_next;
        self.out_next += 1;
        p.out = Some(out);
        let mut part = p.value.as_object().cloned().unwrap_or_default();
        part.insert("args".into(), args);
        let weight = serde_json::to_string(&part).map_or(256, |s| s.len() + 64);
        let mut s = start;
        s.insert("index".into(), json!(out));
        s.insert("part".into(), Value::Object(part.clone()));
        s.insert("event_kind".into(), json!("part_start"));
        cx.emit(Value::Object(s), weight)?;
        let mut e = Map::with_capacity(4);
        e.insert("index".into(), json!(out));
        e.insert("part".into(), Value::Object(part));
        if let Some(n) = next {
            e.insert("next_part_kind".into(), n);
        }
        e.insert("event_kind".into(), json!("part_end"));
        cx.emit(Value::Object(e), weight)?;
        for f in waiting {
            cx.emit(f, 128)?;
        }
        Ok(())
    }

    fn final_result(&mut self, cx: &mut Cx<'_>, ev: Map<String, Value>) -> Result<(), GateError> {
        let Some(name) = cx.opt_str(&[], &ev, "tool_name")?.map(str::to_owned) else {
            return cx.pass(Value::Object(ev)); // the final result is text
        };
        let id = cx.opt_str(&[], &ev, "tool_call_id")?.filter(|s| !s.is_empty());
        let call = self.parts.iter().filter_map(|p| p.call.as_ref()).find(|c| c.id.as_deref() == id && id.is_some());
        let Some(c) = call.filter(|c| c.name == name) else {
            return Err(cx.err(&[], format!("a final result naming no call of this stream ({:?})", name.chars().take(60).collect::<String>())));
        };
        let Some(t) = cx.sh.call(c.call) else { return Ok(()) };
        match &t.verdict {
            None => {
                cx.keep(cx.bytes)?;
                self.finals.push((c.call, Value::Object(ev)));
                Ok(())
            }
            Some(v) if v.allowed() => cx.pass(Value::Object(ev)),
            Some(_) => Ok(()), // its call was refused: no final result
        }
    }
}

impl Assembler for PydanticAiStream {
    fn event(&mut self, cx: &mut Cx<'_>, ev: Value) -> Result<(), GateError> {
        let Value::Object(ev) = ev else { return Err(cx.err(&[], "expected an event object")) };
        self.events += 1;
        let kind = cx.str(&[], &ev, "event_kind")?.to_owned();
        match kind.as_str() {
            "part_start" => self.part_start(cx, ev),
            "part_delta" => self.part_delta(cx, ev),
            "part_end" => self.part_end(cx, ev),
            "final_result" => self.final_result(cx, ev),
            other => Err(cx.err(
                &key(&[], "event_kind"),
                format!("{:?} is not a model response stream event (part_start, part_delta, part_end, final_result): stream the model's events through the gate, not the agent's", other.chars().take(40).collect::<String>()),
            )),
        }
    }

    fn ended(&self) -> Option<&'static str> {
        None // no terminal event: the host ends the stream; every part must have ended by then
    }

    fn finish(&mut self, cx: &mut Cx<'_>) -> Result<Assembled, GateError> {
        if self.events == 0 {
            return Err(cx.cut("before any event"));
        }
        let open: Vec<String> = self
            .parts
            .iter()
            .filter(|p| !p.ended)
            .map(|p| match &p.call {
                Some(c) => format!("part {} (tool call `{}`)", p.wire, c.name),
                None => format!("part {}", p.wire),
            })
            .collect();
        if !open.is_empty() {
            return Err(cx.cut(format!("before the `part_end` of {}", open.join(", "))));
        }
        let mut order: Vec<usize> = (0..self.parts.len()).collect();
        order.sort_by_key(|&i| self.parts[i].wire);
        let mut slots = Vec::new();
        let mut provider = Vec::new();
        let mut parts = Vec::with_capacity(order.len());
        for (pos, &i) in order.iter().enumerate() {
            let p = &self.parts[i];
            let mut v = p.value.clone();
            if let Some(c) = &p.call {
                if let (Some(m), Some(t)) = (v.as_object_mut(), cx.sh.call(c.call)) {
                    let args = if t.value_args { cx.value_of(c.call) } else { Value::String(t.text.clone()) };
                    m.insert("args".into(), args);
                }
                slots.push(Slot { call: c.call, slot: vec![Seg::Key("parts".into()), Seg::Index(pos), Seg::Key("args".into())] });
            } else if v.get("part_kind").and_then(Value::as_str) == Some("builtin-tool-call") {
                provider.push(ProviderCall {
                    call_id: id_or_index(v.get("tool_call_id").and_then(Value::as_str), provider.len()),
                    tool: v.get("tool_name").and_then(Value::as_str).unwrap_or("builtin-tool-call").to_owned(),
                    kind: "builtin-tool-call".into(),
                });
            }
            parts.push(v);
        }
        Ok(Assembled { payload: json!({ "kind": "response", "parts": parts }), calls: slots, provider_executed: provider })
    }
}
