//! The engines' two steps for a whole turn (`guard` / `guardAsync` on a gate with plugged
//! engines, `src-ts/gate.ts`): `guardStep` decides the turn up to the engines and answers either
//! the final report or the decided turn kept by handle (`toolgate_core::PendingTurn`, see
//! `pending.rs`) with the questions for the engines; the host asks them and calls `finishTurn`
//! (or `finishTurnAsync`, off the event loop, for remote state) with their answers, or
//! `releaseTurn` when asking them failed. The payload is parsed once, and the second step decides
//! exactly the arguments the engines were shown.

use napi::bindgen_prelude::AsyncTask;
use napi::Error;
use napi_derive::napi;
use toolgate_core::{DialectChoice, EngineAnswer, GateError, PendingTurn, TurnStep};

use crate::decide_async::{Decide, Op};
use crate::pending::{too_many, Pending};
use crate::{gate_of, guarded, turn_options};

/// Every turn waiting for the engines' answers, by handle.
static TURNS: Pending<PendingTurn> = Pending::new();

/// The first step of a turn on the gate `handle` (options as `guard` reads them, without
/// `engines`): the final report (`guard`'s wire, a JSON object) when no call reaches the engines,
/// else `?HANDLE \n QUESTIONS`: the handle the turn is kept by, and the calls put to the engines
/// (`toolgate_wire::questions`). Throws as `guard` throws, and `E_CONFIG` when 65,536 turns
/// already wait.
#[napi]
pub fn guard_step(handle: u32, dialect: String, payload: String, options: String) -> std::result::Result<String, Error<String>> {
    let gate = gate_of(handle)?;
    let step = guarded("payload", || {
        let choice: DialectChoice = dialect.parse()?;
        let args = turn_options(&options)?;
        gate.guard_step(choice, &payload, &args.opts, args.ctx)
    })?;
    match step {
        TurnStep::Final(report) => Ok(toolgate_wire::report_with_patches(&report)),
        TurnStep::Pending(turn) => {
            let questions = toolgate_wire::questions(&turn);
            let h = TURNS.insert(turn).ok_or_else(too_many)?;
            Ok(format!("?{h}\n{questions}"))
        }
    }
}

/// The second step of the turn `handle`: `answers[i]` (`allow`, `deny`, `delegate` or
/// `unasked`) is the engines' answer for call `i`. Answers the report as `guard` does;
/// `E_CONFIG` for a handle finished or released before, or an answer not one of those words.
#[napi]
pub fn finish_turn(handle: u32, answers: Vec<String>) -> std::result::Result<String, Error<String>> {
    let turn = TURNS
        .take(handle)
        .ok_or_else(|| Error::new("E_CONFIG".to_string(), "this turn is not waiting for the engines (finished or released before)".to_string()))?;
    finish(turn, answers)
}

/// [`finish_turn`] on libuv's thread pool (a gate whose state is remote); the turn is taken now.
/// Resolves to the report, or to an error as NUL, code, LF, message.
#[napi(ts_return_type = "Promise<string>")]
pub fn finish_turn_async(handle: u32, answers: Vec<String>) -> AsyncTask<Decide> {
    AsyncTask::new(Decide::new(TURNS.take(handle).map(|turn| Op::Finish { turn, answers })))
}

/// Drops the turn `handle` unfinished (asking the engines failed): nothing is recorded, nothing
/// runs. A handle finished or released before is ignored.
#[napi]
pub fn release_turn(handle: u32) {
    drop(TURNS.take(handle));
}

/// The second step of `turn` with the answers' words (see [`finish_turn`]).
pub(crate) fn finish(turn: PendingTurn, answers: Vec<String>) -> std::result::Result<String, Error<String>> {
    guarded("payload", move || {
        let answers = answers.iter().map(|a| a.parse()).collect::<Result<Vec<EngineAnswer>, GateError>>()?;
        Ok(toolgate_wire::report_with_patches(&turn.finish(&answers)?))
    })
}
