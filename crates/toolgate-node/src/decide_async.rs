//! The async decisions (`checkAsAsync`, `confirmAsync`, `guardAsync`): the same functions as the
//! sync exports, run on libuv's thread pool so a decision waiting on a remote state store never
//! blocks the event loop. One decision path: each task calls the sync export's Rust function.

use std::panic::{catch_unwind, AssertUnwindSafe};

use napi::bindgen_prelude::AsyncTask;
use napi::{Env, Task};
use napi_derive::napi;

/// One decision to run off the event loop.
pub(crate) enum Op {
    CheckAs {
        handle: u32,
        tool: String,
        args: String,
        ctx: String,
    },
    Confirm {
        handle: u32,
        token: String,
        ctx: String,
        engine: Option<String>,
    },
    Guard {
        handle: u32,
        dialect: String,
        payload: String,
        options: String,
    },
    /// The second step of a turn decided up to the engines (`finishTurnAsync`).
    Finish {
        turn: toolgate_core::PendingTurn,
        answers: Vec<String>,
    },
    /// The second step of one call decided up to the engines (`finishCallAsync`).
    FinishCall {
        call: toolgate_core::PendingCall,
        answer: String,
    },
}

/// A decision task. It resolves to the sync export's answer, or to `\0CODE\nMESSAGE` when the
/// sync export would have thrown (a napi task can only reject with a status, not our codes; the
/// TypeScript side throws the `ToolGateError`). No answer of the sync exports starts with `\0`.
pub struct Decide(Option<Op>);

impl Decide {
    /// A task running `op` (`None`: a decision finished or released before, answered as that error).
    pub(crate) fn new(op: Option<Op>) -> Decide {
        Decide(op)
    }
}

impl Task for Decide {
    type Output = String;
    type JsValue = String;

    fn compute(&mut self) -> napi::Result<String> {
        let Some(op) = self.0.take() else { return Ok("\0E_CONFIG\nthis decision is not waiting for the engines (finished or released before)".into()) };
        let run = move || match op {
            Op::CheckAs { handle, tool, args, ctx } => super::check_as(handle, tool, args, ctx),
            Op::Confirm { handle, token, ctx, engine } => super::confirm(handle, token, ctx, engine),
            Op::Guard { handle, dialect, payload, options } => super::guard(handle, dialect, payload, options),
            Op::Finish { turn, answers } => super::pending_turn::finish(turn, answers),
            Op::FinishCall { call, answer } => super::pending_call::finish(call, answer),
        };
        Ok(match catch_unwind(AssertUnwindSafe(run)) {
            Ok(Ok(answer)) => answer,
            Ok(Err(e)) => format!("\0{}\n{}", e.status, e.reason),
            Err(_) => "\0E_PAYLOAD\ntoolgate could not process this call; nothing was allowed".into(),
        })
    }

    fn resolve(&mut self, _env: Env, output: String) -> napi::Result<String> {
        Ok(output)
    }
}

/// `checkAs` on the thread pool (see `check_as`); resolves to its wire, or to an error as NUL, code, LF, message.
#[napi]
pub fn check_as_async(handle: u32, tool: String, args: String, ctx: String) -> AsyncTask<Decide> {
    AsyncTask::new(Decide(Some(Op::CheckAs { handle, tool, args, ctx })))
}

/// `confirm` on the thread pool (see `confirm`); resolves to its answer, or to an error as NUL, code, LF, message.
#[napi]
pub fn confirm_async(handle: u32, token: String, ctx: String, engine: Option<String>) -> AsyncTask<Decide> {
    AsyncTask::new(Decide(Some(Op::Confirm { handle, token, ctx, engine })))
}

/// `guard` on the thread pool (see `guard`); resolves to its report, or to an error as NUL, code, LF, message.
#[napi]
pub fn guard_async(handle: u32, dialect: String, payload: String, options: String) -> AsyncTask<Decide> {
    AsyncTask::new(Decide(Some(Op::Guard { handle, dialect, payload, options })))
}
