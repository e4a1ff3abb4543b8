//! A turn decided up to the plugged engines, kept for their answers: the engines' second step
//! without a second pass (docs/architecture.md, "The path of one turn").
//!
//! Engines live in the host, so a gate with engines decides a turn in two steps. The first,
//! [`Gate::guard_step`], parses the payload, reads its calls and runs each through the built-in
//! pipeline up to the engines' stage ([`Stage::Ask`]). When no call has a question for the
//! engines, that answer is final ([`TurnStep::Final`]). Otherwise the decided turn is kept
//! ([`TurnStep::Pending`]): the parsed payload, the calls the codec found, each call's decided
//! (repaired) arguments, and the gate and caller it was decided for. The host asks its engines
//! about [`PendingTurn::questions`], then [`PendingTurn::finish`] runs only what comes after
//! the engines — the rules again with the current time, the engines' answers, state (loop,
//! taint, rate limits), confirmation, receipt and record — for the calls that were asked. The
//! payload is not parsed again, no call is read or repaired again, and the second step decides
//! exactly the arguments the engines were shown.
//!
//! A call refused before the engines' stage keeps its refusal (it is recorded when the turn is
//! finished). The second step runs on the gate and for the caller of the first: neither can be
//! swapped in between.

use std::sync::Arc;

use serde_json::Value;

use crate::context::CallContext;
use crate::dialect::{Dialect, TurnOptions};
use crate::error::GateError;
use crate::gate::record::Origin;
use crate::gate::who::{EngineAnswer, Stage};
use crate::gate::Gate;
use crate::turn::{raw_of, DecidedCalls, DialectChoice, TurnReport};
use crate::verdict::{RulesAnswer, Verdict};

/// The first step's answer ([`Gate::guard_step`]).
#[derive(Debug)]
pub enum TurnStep {
    /// No call reached the engines: this is the turn's report, every call recorded.
    Final(TurnReport),
    /// Some calls wait for the engines' answers.
    Pending(PendingTurn),
}

/// A turn decided up to the engines' stage, waiting for their answers (see the module docs).
/// Holds the gate and the caller it was decided for; dropping it unfinished records nothing
/// and lets nothing run.
#[derive(Debug)]
pub struct PendingTurn {
    gate: Arc<Gate>,
    ctx: Arc<CallContext>,
    turn: DecidedCalls,
}

/// One call the engines are asked about: what the built-in pipeline decided for it so far.
#[derive(Debug, Clone, Copy)]
pub struct EngineQuestion<'a> {
    /// The call's position in the turn (the index its answer takes in [`PendingTurn::finish`]).
    pub index: usize,
    /// The call's id (wire id, or its position as text).
    pub call_id: &'a str,
    /// The tool called.
    pub tool: &'a str,
    /// The arguments the call runs with if allowed (repaired, as the engines must judge them).
    pub arguments: &'a Value,
    /// The action policy was asked about.
    pub action: Option<&'a str>,
    /// The resolved resource, when the tool declares one.
    pub resource: Option<&'a str>,
    /// What the built-in rules concluded.
    pub rules: RulesAnswer,
}

impl Gate {
    /// The first of the engines' two steps for a whole turn: [`Gate::guard_as`] at
    /// [`Stage::Ask`] for the caller `ctx`, answering the final report when no call reaches the
    /// engines and the decided turn otherwise. The same errors as [`Gate::guard_as`] (recorded
    /// as it records them).
    pub fn guard_step(self: &Arc<Self>, choice: DialectChoice, payload: &str, opts: &TurnOptions, ctx: Arc<CallContext>) -> Result<TurnStep, GateError> {
        let who = self.who(&ctx, Stage::Ask);
        let decided = self.decide_calls(choice, payload, opts, &who);
        let mut turn = self.audit_turn_error(choice, &who, decided)?;
        if turn.asks() {
            return Ok(TurnStep::Pending(PendingTurn { gate: Arc::clone(self), ctx, turn }));
        }
        self.record_held(&mut turn, &who);
        self.finish_turn(turn.dialect, turn.payload, turn.found, turn.verdicts).map(TurnStep::Final)
    }
}

impl PendingTurn {
    /// The dialect the turn was read in.
    pub fn dialect(&self) -> Dialect {
        self.turn.dialect
    }

    /// How many calls the turn holds (the length [`PendingTurn::finish`] expects).
    pub fn len(&self) -> usize {
        self.turn.verdicts.len()
    }

    /// True for a turn without calls (never pending: such a turn is final at the first step).
    pub fn is_empty(&self) -> bool {
        self.turn.verdicts.is_empty()
    }

    /// The calls the engines are asked about, in payload order. Every other call was refused
    /// before their stage.
    pub fn questions(&self) -> impl Iterator<Item = EngineQuestion<'_>> {
        self.turn.found.calls.iter().zip(&self.turn.verdicts).enumerate().filter_map(|(index, (call, v))| {
            let rules = v.engine_question?;
            Some(EngineQuestion {
                index,
                call_id: &call.call_id,
                tool: &call.tool,
                arguments: v.arguments.as_ref().unwrap_or(&Value::Null),
                action: v.action.as_deref(),
                resource: v.resource.as_deref(),
                rules,
            })
        })
    }

    /// The second step: `answers[i]` is the engines' answer for call `i` ([`EngineAnswer::Unasked`]
    /// for a call without a question; a missing answer denies). Each asked call runs the rest of
    /// the pipeline with the current time and state; every call is signed and recorded; the
    /// report is assembled as [`Gate::guard_as`] assembles it.
    pub fn finish(self, answers: &[EngineAnswer]) -> Result<TurnReport, GateError> {
        let PendingTurn { gate, ctx, turn } = self;
        let who = gate.who(&ctx, Stage::Answers(answers));
        let DecidedCalls { dialect, payload, found, verdicts, held, keep_raw } = turn;
        let verdicts: Vec<Verdict> = verdicts
            .into_iter()
            .zip(found.calls.iter().zip(&held))
            .enumerate()
            .map(|(i, (mut v, (call, held)))| {
                let who = who.at(i);
                let mut started = held.started;
                if v.engine_question.is_some() {
                    started = gate.decision_start();
                    v = gate.after_engines(&call.tool, v, &who);
                }
                let origin = Origin {
                    dialect: Some(dialect),
                    call_id: Some(&call.call_id),
                    tool: &call.tool,
                    raw: raw_of(&held.raw, call, keep_raw),
                    started,
                    step: None,
                };
                gate.finish(&who, origin, v)
            })
            .collect();
        gate.finish_turn(dialect, payload, found, verdicts)
    }
}
