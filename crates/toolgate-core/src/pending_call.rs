//! One call decided up to the plugged engines, kept for their answer: `check` on a gate with
//! engines in two steps without reading the call twice (the single-call form of
//! [`crate::pending_turn`]). [`Gate::check_step`] runs the built-in pipeline up to the engines'
//! stage; a call refused before it is final ([`CallStep::Final`], recorded as `check_as` records
//! it). Otherwise the decided call is kept ([`CallStep::Pending`]) with the gate and the caller,
//! and [`PendingCall::finish`] runs only what comes after the engines, with the current time and
//! state: the arguments are not parsed, repaired or validated again, and what runs is what the
//! engines were shown.

use std::sync::Arc;

use crate::audit::RawArgs;
use crate::context::CallContext;
use crate::gate::record::Origin;
use crate::gate::who::{EngineAnswer, Stage};
use crate::gate::Gate;
use crate::verdict::Verdict;

/// The first step's answer ([`Gate::check_step`]).
#[derive(Debug)]
pub enum CallStep {
    /// Refused before the engines' stage: the final verdict, recorded.
    Final(Verdict),
    /// The call waits for the engines' answer.
    Pending(PendingCall),
}

/// A call decided up to the engines' stage (see the module docs). Dropping it unfinished records
/// nothing and lets nothing run.
#[derive(Debug)]
pub struct PendingCall {
    gate: Arc<Gate>,
    ctx: Arc<CallContext>,
    tool: String,
    verdict: Verdict,
    /// The arguments text as sent, kept only when audit records include arguments.
    raw: Option<String>,
}

impl Gate {
    /// The first of the engines' two steps for one call: [`Gate::check_as`] at [`Stage::Ask`] for
    /// the caller `ctx`.
    pub fn check_step(self: &Arc<Self>, tool: &str, args: &str, ctx: Arc<CallContext>) -> CallStep {
        let who = self.who(&ctx, Stage::Ask);
        let started = self.decision_start();
        let v = self.decide_text(tool, args, &who);
        let keep_raw = self.audit().is_some_and(|a| a.includes_arguments());
        if v.engine_question.is_none() {
            let raw = if keep_raw { RawArgs::Text(args) } else { RawArgs::None };
            let origin = Origin { dialect: None, call_id: ctx.call_id.as_deref(), tool, raw, started, step: None };
            return CallStep::Final(self.finish(&who, origin, v));
        }
        CallStep::Pending(PendingCall { gate: Arc::clone(self), ctx, tool: tool.to_owned(), verdict: v, raw: keep_raw.then(|| args.to_owned()) })
    }
}

impl PendingCall {
    /// What the first step decided: allowed so far, with the decided arguments, the policy facts
    /// (`action`, `resource`) and the rules' answer for the engines (`engine_question`).
    pub fn verdict(&self) -> &Verdict {
        &self.verdict
    }

    /// The second step: the rest of the pipeline with the engines' `answer`, the current time and
    /// state; the verdict signed and recorded as [`Gate::check_as`] does.
    pub fn finish(self, answer: EngineAnswer) -> Verdict {
        let PendingCall { gate, ctx, tool, verdict, raw } = self;
        let answers = [answer];
        let who = gate.who(&ctx, Stage::Answers(&answers));
        let started = gate.decision_start();
        let v = gate.after_engines(&tool, verdict, &who);
        let raw = raw.as_deref().map_or(RawArgs::None, RawArgs::Text);
        gate.finish(&who, Origin { dialect: None, call_id: ctx.call_id.as_deref(), tool: &tool, raw, started, step: None }, v)
    }
}
