//! State every stream assembler shares: the calls it tracks (each decided exactly once), their
//! argument buffers, the queue of events safe to forward, and the byte budget bounding all of it.

use ahash::AHashSet;
use serde_json::Value;

use crate::verdict::Verdict;

/// One tool call seen in a stream, from its first fragment to its decision.
#[derive(Debug)]
pub(crate) struct Tracked {
    /// The wire id as a string, or the call's ordinal where the wire has none.
    pub call_id: String,
    /// The wire id exactly as sent, if any.
    pub wire_id: Option<String>,
    /// The tool the model asked for.
    pub tool: String,
    /// The argument text received so far (emptied once it overflows).
    pub text: String,
    /// The arguments grew past `limits.maxArgumentBytes`: refused, later fragments ignored.
    pub overflowed: bool,
    /// The dialect holds arguments as a JSON value in place (Anthropic `input`, Gemini `args`,
    /// AI SDK object input) rather than as a JSON string.
    pub value_args: bool,
    /// The decision, made once, when the call completed (or, for a call that never closed, at
    /// the end of the stream).
    pub verdict: Option<Verdict>,
}

impl Tracked {
    /// The arguments to run with, as JSON text, iff the call was allowed: the model's own text
    /// when it runs unchanged, else the arguments serialized (the rule of `TurnCall`).
    pub fn allowed_text(&self) -> Option<String> {
        let v = self.verdict.as_ref()?;
        let args = v.arguments.as_ref()?;
        if v.untouched && !self.value_args {
            return Some(self.text.clone());
        }
        Some(serde_json::to_string(args).unwrap_or_default())
    }
}

/// The shared, bounded state of one stream.
#[derive(Debug)]
pub(crate) struct Shared {
    /// Every call seen, in the order first seen.
    pub calls: Vec<Tracked>,
    /// Call ids seen, wire ids and the positions given to calls without one (a repeated id is a
    /// broken stream: the host answers each id once).
    ids: AHashSet<String>,
    /// Events safe to emit, with the bytes each is charged.
    out: Vec<(Value, usize)>,
    /// Bytes charged for queued events.
    queued: usize,
    /// Bytes retained for the assembled turn (text, arguments, envelopes).
    kept: usize,
    /// `Gate::max_payload_bytes()`: the bound on `queued + kept`.
    limit: usize,
    /// Calls decided by the event being handled (indexes into `calls`).
    pub completed: Vec<usize>,
}

/// Why a byte budget was exceeded: the bytes that would be held, and the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OverBudget {
    pub bytes: usize,
    pub limit: usize,
}

impl Shared {
    /// Empty state under `limit` buffered bytes.
    pub fn new(limit: usize) -> Shared {
        Shared { calls: Vec::new(), ids: AHashSet::new(), out: Vec::new(), queued: 0, kept: 0, limit, completed: Vec::new() }
    }

    fn check(&self, extra: usize) -> Result<(), OverBudget> {
        let bytes = self.kept.saturating_add(self.queued).saturating_add(extra);
        if bytes > self.limit {
            Err(OverBudget { bytes, limit: self.limit })
        } else {
            Ok(())
        }
    }

    /// Charges `n` retained bytes; refuses (charging nothing) past the limit.
    pub fn keep(&mut self, n: usize) -> Result<(), OverBudget> {
        self.check(n)?;
        self.kept += n;
        Ok(())
    }

    /// Returns `n` retained bytes (a buffer that was dropped).
    pub fn release(&mut self, n: usize) {
        self.kept = self.kept.saturating_sub(n);
    }

    /// Queues an event to forward, charged `weight` bytes until it is taken.
    pub fn emit(&mut self, v: Value, weight: usize) -> Result<(), OverBudget> {
        self.check(weight)?;
        self.queued += weight;
        self.out.push((v, weight));
        Ok(())
    }

    /// Takes every queued event, in order.
    /// How many events are queued (a mark for [`Shared::drop_after`]).
    pub fn queued_events(&self) -> usize {
        self.out.len()
    }

    /// Drops the events queued after `mark` (what a failed event queued: nothing of it may be
    /// forwarded).
    pub fn drop_after(&mut self, mark: usize) {
        for (_, w) in self.out.drain(mark.min(self.out.len())..) {
            self.queued -= w;
        }
    }

    pub fn take(&mut self) -> Vec<Value> {
        self.queued = 0;
        std::mem::take(&mut self.out).into_iter().map(|(v, _)| v).collect()
    }

    /// Registers a new call. `Err` names the repeated id: a wire id seen before, or the id a
    /// call without one gets (its position) when another call carries it — ids are unique in a
    /// stream whoever wrote them, so no host can look one call's verdict up for another.
    pub fn open(&mut self, wire_id: Option<&str>, tool: &str, value_args: bool) -> Result<usize, String> {
        let wire_id = wire_id.filter(|s| !s.is_empty());
        let call_id = wire_id.map_or_else(|| self.calls.len().to_string(), str::to_owned);
        if !self.ids.insert(call_id.clone()) {
            return Err(call_id);
        }
        self.calls.push(Tracked {
            call_id,
            wire_id: wire_id.map(str::to_owned),
            tool: tool.to_owned(),
            text: String::new(),
            overflowed: false,
            value_args,
            verdict: None,
        });
        Ok(self.calls.len() - 1)
    }

    /// The call at `i` (every index the assemblers hold came from [`Shared::open`]).
    pub fn call(&self, i: usize) -> Option<&Tracked> {
        self.calls.get(i)
    }

    /// Records the one decision of call `i` and reports it as completed by this event. A call
    /// already decided keeps its first decision.
    pub fn decide(&mut self, i: usize, verdict: Verdict) {
        if let Some(t) = self.calls.get_mut(i) {
            if t.verdict.is_none() {
                t.verdict = Some(verdict);
                self.completed.push(i);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_counts_kept_and_queued_bytes_and_frees_taken_ones() {
        let mut s = Shared::new(10);
        s.keep(4).unwrap();
        s.emit(Value::Null, 6).unwrap();
        assert_eq!(s.keep(1), Err(OverBudget { bytes: 11, limit: 10 }));
        assert_eq!(s.take(), vec![Value::Null]);
        s.keep(6).unwrap();
        s.release(10);
        s.keep(10).unwrap();
    }

    #[test]
    fn ids_repeat_only_once_and_missing_ids_get_ordinals() {
        let mut s = Shared::new(100);
        assert_eq!(s.open(Some("a"), "t", false), Ok(0));
        assert_eq!(s.open(None, "t", false), Ok(1));
        assert_eq!(s.open(Some(""), "t", false), Ok(2));
        assert_eq!(s.calls[1].call_id, "1");
        assert_eq!(s.calls[2].call_id, "2");
        assert_eq!(s.open(Some("a"), "t", false), Err("a".to_owned()));
        // a position given to a call without an id never equals another call's id
        let mut s = Shared::new(100);
        assert_eq!(s.open(Some("1"), "t", false), Ok(0));
        assert_eq!(s.open(None, "t", false), Err("1".to_owned()));
        let mut s = Shared::new(100);
        assert_eq!(s.open(None, "t", false), Ok(0));
        assert_eq!(s.open(Some("0"), "t", false), Err("0".to_owned()));
    }

    #[test]
    fn a_call_is_decided_once() {
        let mut s = Shared::new(100);
        let i = s.open(Some("a"), "t", false).unwrap();
        s.decide(i, Verdict::rejected(crate::verdict::Reason::Invalid, "first".into()));
        s.decide(i, Verdict::rejected(crate::verdict::Reason::BadArguments, "second".into()));
        assert_eq!(s.completed, vec![i]);
        assert_eq!(s.calls[i].verdict.as_ref().and_then(|v| v.message.as_deref()), Some("first"));
    }
}
