//! The context an assembler handles one event in: typed reads of the event with errors that name
//! the dialect, the event and the path; and the one place calls are fed and decided.

use std::fmt::Display;

use serde_json::{Map, Value};

use super::buffer::{OverBudget, Shared};
use crate::dialect::shape::{key, show};
use crate::dialect::{Args, Call, Dialect};
use crate::error::GateError;
use crate::gate::Gate;
use crate::json::parse::{parse_str, ParseError};
use crate::json::pointer::Seg;
use crate::schema::types::type_name;
use crate::verdict::{Reason, Verdict};

/// One event being handled (or, with `n == 0`, the end of the stream).
pub(crate) struct Cx<'a> {
    /// The gate deciding the calls.
    pub gate: &'a Gate,
    /// The stream's caller.
    pub who: crate::gate::who::Who<'a>,
    /// The stream's dialect.
    pub d: Dialect,
    /// The stream's shared state.
    pub sh: &'a mut Shared,
    /// 1-based number of this event among the stream's data events; 0 at the end.
    pub n: usize,
    /// The event's type (`content_block_delta` …), for messages.
    pub kind: String,
    /// The event's size in bytes (what forwarding it unchanged is charged).
    pub bytes: usize,
    /// Some integer in the event lies beyond the i64 range.
    pub big_integer: bool,
    /// Duplicate / prototype keys in the event, by path; a call whose value arguments hold one is
    /// refused, anywhere else the event is broken.
    pub problems: Vec<(Vec<Seg>, ParseError)>,
    /// When the event holds a key that looks like a member under case folding: the argument
    /// values claimed (see [`Cx::claim`]), where such keys are the arguments' own business.
    pub claimed: Option<Vec<Vec<Seg>>>,
}

impl Cx<'_> {
    /// Finishes call `i`'s verdict (receipt, audit record) and stores it.
    fn settle(&mut self, i: usize, verdict: Verdict) {
        let started = self.gate.decision_start();
        let Some(t) = self.sh.call(i) else { return };
        let keep = self.gate.audit().is_some_and(|a| a.includes_arguments());
        let raw = if keep { crate::audit::RawArgs::Text(&t.text) } else { crate::audit::RawArgs::None };
        let origin = crate::gate::record::Origin { dialect: Some(self.d), call_id: Some(&t.call_id), tool: &t.tool, raw, started, step: None };
        let verdict = self.gate.finish(&self.who.at(i), origin, verdict);
        self.sh.decide(i, verdict);
    }

    /// Refuses call `i` now (`bad_arguments`, `message` for the model): a call whose envelope
    /// arrived broken in a way its dialect answers per call (a Gemini `functionCall: null`).
    pub fn refuse(&mut self, i: usize, message: &str) {
        self.settle(i, Verdict::rejected(Reason::BadArguments, message.to_owned()));
    }

    /// `E_PAYLOAD`: "{dialect} stream event #{n} ({kind}) at `{path}`: {what}".
    pub fn err(&self, path: &[Seg], what: impl Display) -> GateError {
        if self.n == 0 {
            return GateError::Payload(format!("{} stream: {what}", self.d));
        }
        let at = if path.is_empty() { String::new() } else { format!(" at `{}`", show(path)) };
        GateError::Payload(format!("{} stream event #{} ({}){at}: {what}", self.d, self.n, self.kind))
    }

    /// `E_PAYLOAD` for a stream that stopped early: "{dialect} stream ended {what}".
    pub fn cut(&self, what: impl Display) -> GateError {
        GateError::Payload(format!("{} stream ended {what}; the stream was cut off or is incomplete", self.d))
    }

    fn over(&self, o: OverBudget) -> GateError {
        self.err(&[], format!("{} bytes buffered, over limits.maxPayloadBytes ({} bytes)", o.bytes, o.limit))
    }

    /// The value as an object.
    pub fn obj<'v>(&self, path: &[Seg], v: &'v Value) -> Result<&'v Map<String, Value>, GateError> {
        v.as_object().ok_or_else(|| self.err(path, format!("expected an object, got {}", type_name(v))))
    }

    /// A member that must be an object.
    pub fn member_obj<'v>(&self, path: &[Seg], m: &'v Map<String, Value>, k: &str) -> Result<&'v Map<String, Value>, GateError> {
        match m.get(k) {
            Some(v) => self.obj(&key(path, k), v),
            None => Err(self.err(path, format!("missing `{k}`"))),
        }
    }

    /// A required string member.
    pub fn str<'v>(&self, path: &[Seg], m: &'v Map<String, Value>, k: &str) -> Result<&'v str, GateError> {
        match m.get(k) {
            Some(Value::String(s)) => Ok(s),
            Some(v) => Err(self.err(&key(path, k), format!("expected a string, got {}", type_name(v)))),
            None => Err(self.err(path, format!("missing `{k}`"))),
        }
    }

    /// An optional string member (absent or `null` is `None`).
    pub fn opt_str<'v>(&self, path: &[Seg], m: &'v Map<String, Value>, k: &str) -> Result<Option<&'v str>, GateError> {
        match m.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(v) => Err(self.err(&key(path, k), format!("expected a string, got {}", type_name(v)))),
        }
    }

    /// A required index member: a non-negative integer below [`MAX_INDEX`].
    pub fn index(&self, path: &[Seg], m: &Map<String, Value>, k: &str) -> Result<usize, GateError> {
        match m.get(k) {
            None => Err(self.err(path, format!("missing `{k}`"))),
            Some(v) => v
                .as_u64()
                .filter(|&i| i < MAX_INDEX as u64)
                .map(|i| i as usize)
                .ok_or_else(|| self.err(&key(path, k), format!("expected an index (an integer from 0 to {}), got {v}", MAX_INDEX - 1))),
        }
    }

    /// Charges `n` bytes kept for the assembled turn.
    pub fn keep(&mut self, n: usize) -> Result<(), GateError> {
        self.sh.keep(n).map_err(|o| self.over(o))
    }

    /// Queues `v` to forward, charged `weight` bytes until taken.
    pub fn emit(&mut self, v: Value, weight: usize) -> Result<(), GateError> {
        self.sh.emit(v, weight).map_err(|o| self.over(o))
    }

    /// Queues this event (possibly rewritten) to forward, charged its own size.
    pub fn pass(&mut self, v: Value) -> Result<(), GateError> {
        let w = self.bytes;
        self.emit(v, w)
    }

    /// Registers a new call (`path` locates it, for a repeated id).
    pub fn open(&mut self, path: &[Seg], wire_id: Option<&str>, tool: &str, value_args: bool) -> Result<usize, GateError> {
        if self.sh.calls.len() >= crate::turn::MAX_TURN_CALLS {
            return Err(self.err(path, format!("more than {} tool calls in one stream", crate::turn::MAX_TURN_CALLS)));
        }
        self.sh.open(wire_id, tool, value_args).map_err(|id| self.err(path, format!("the call id {id:?} appears twice in one stream")))
    }

    /// Appends an argument fragment to call `i`. Past `limits.maxArgumentBytes` the call is
    /// refused (`bad_arguments`) now, its buffer dropped, and its later fragments ignored.
    pub fn append(&mut self, i: usize, fragment: &str) -> Result<(), GateError> {
        let limit = self.gate.limits().max_bytes;
        let Some(t) = self.sh.calls.get(i) else { return Ok(()) };
        if t.overflowed || t.verdict.is_some() {
            return Ok(());
        }
        let total = t.text.len().saturating_add(fragment.len());
        if total > limit {
            let held = t.text.len();
            let verdict = self.gate.refuse_arguments(&t.tool, &ParseError::TooLarge { bytes: total, limit }, &self.who);
            if let Some(t) = self.sh.calls.get_mut(i) {
                t.overflowed = true;
                t.text = String::new();
            }
            self.sh.release(held);
            self.settle(i, verdict);
            return Ok(());
        }
        self.keep(fragment.len())?;
        if let Some(t) = self.sh.calls.get_mut(i) {
            t.text.push_str(fragment);
        }
        Ok(())
    }

    /// Completes call `i` from its argument text: the fragments received, or `whole` where the
    /// wire repeats the complete text (Responses `.done`, AI SDK `tool-call`). With `must_match`,
    /// a `whole` that differs from fragments already received is a broken stream. Decides the
    /// call unless it was already decided.
    pub fn close_text(&mut self, path: &[Seg], i: usize, whole: Option<&str>, must_match: bool) -> Result<(), GateError> {
        let Some(t) = self.sh.calls.get(i) else { return Ok(()) };
        if t.verdict.is_some() {
            if let (Some(w), false, true) = (whole, t.overflowed, must_match) {
                if w != t.text {
                    return Err(self.err(path, format!("the complete arguments of call {:?} differ from those already decided", t.call_id)));
                }
            }
            return Ok(());
        }
        if let Some(w) = whole {
            if must_match && !t.text.is_empty() && w != t.text {
                return Err(self.err(path, format!("the complete arguments of call {:?} differ from the fragments streamed before", t.call_id)));
            }
            if w != t.text {
                let held = t.text.len();
                self.sh.release(held);
                if let Some(t) = self.sh.calls.get_mut(i) {
                    t.text.clear();
                }
                self.append(i, w)?;
                if self.sh.call(i).is_some_and(|t| t.verdict.is_some()) {
                    return Ok(()); // overflowed: refused by `append`
                }
            }
        }
        let Some(t) = self.sh.calls.get(i) else { return Ok(()) };
        let verdict = self.gate.decide_text(&t.tool, &t.text, &self.who.at(i));
        self.settle(i, verdict);
        Ok(())
    }

    /// Completes call `i` whose arguments arrived whole as a JSON value (`None`: no arguments
    /// member). Decided as `guard` decides a value in place: `problem` (a duplicate or prototype
    /// key found in it, see [`Cx::claim`]) refuses it, and so does a size beyond the limit.
    pub fn close_value(&mut self, i: usize, value: Option<&Value>, problem: Option<ParseError>) -> Result<(), GateError> {
        let Some(t) = self.sh.calls.get(i) else { return Ok(()) };
        if t.verdict.is_some() {
            return Ok(());
        }
        let text = value.map(|v| serde_json::to_string(v).unwrap_or_default()).unwrap_or_default();
        let tool = t.tool.clone();
        let verdict = match problem {
            Some(p) => self.gate.refuse_arguments(&tool, &p, &self.who),
            None => {
                let mut call = Call {
                    call_id: String::new(),
                    wire_id: None,
                    tool: tool.clone(),
                    args: value.map_or(Args::Missing, |v| Args::Value(v.clone())),
                    slot: Vec::new(),
                    malformed: None,
                };
                self.gate.check_call(&mut call, self.big_integer, true, &self.who.at(i))
            }
        };
        if verdict.reason == Some(Reason::BadArguments) && text.len() > self.gate.limits().max_bytes {
            if let Some(t) = self.sh.calls.get_mut(i) {
                t.overflowed = true;
            }
        } else {
            self.keep(text.len())?;
            if let Some(t) = self.sh.calls.get_mut(i) {
                t.text = text;
            }
        }
        self.settle(i, verdict);
        Ok(())
    }

    /// Takes the first parse problem under `path` (it belongs to the call whose value sits there).
    pub fn claim(&mut self, path: &[Seg]) -> Option<ParseError> {
        if let Some(claimed) = &mut self.claimed {
            claimed.push(path.to_vec());
        }
        let mut found = None;
        self.problems.retain(|(p, e)| {
            if p.starts_with(path) {
                found.get_or_insert_with(|| e.clone());
                false
            } else {
                true
            }
        });
        found
    }

    /// Refuses every call still undecided: it never completed before the stream ended.
    pub fn refuse_unfinished(&mut self) {
        for i in 0..self.sh.calls.len() {
            let Some(t) = self.sh.calls.get(i) else { continue };
            if t.verdict.is_some() {
                continue;
            }
            let verdict = if self.gate.declares(&t.tool) {
                Verdict::rejected(
                    Reason::BadArguments,
                    format!("The call to tool `{}` was cut off before its arguments were complete; it was not run. Send the call again, complete.", t.tool),
                )
            } else {
                self.gate.unknown(&t.tool, &self.who)
            };
            self.settle(i, verdict);
        }
    }

    /// The arguments of call `i` as a JSON value for the assembled turn: its text parsed, or `{}`
    /// where the text is empty or not JSON (refused calls only).
    pub fn value_of(&self, i: usize) -> Value {
        let text = self.sh.call(i).map_or("", |t| t.text.as_str());
        if text.trim().is_empty() {
            return Value::Object(Map::new());
        }
        parse_str(text, self.gate.limits()).unwrap_or_else(|_| Value::Object(Map::new()))
    }

    /// The arguments of call `i` for the assembled turn, in the form its dialect holds them.
    pub fn args_of(&self, i: usize) -> Args {
        match self.sh.call(i) {
            Some(t) if t.value_args => Args::Value(self.value_of(i)),
            Some(t) => Args::Text(t.text.clone()),
            None => Args::Missing,
        }
    }
}

/// The largest index (choice, tool call, content block, output item) a stream may use.
pub(crate) const MAX_INDEX: usize = 1 << 16;
