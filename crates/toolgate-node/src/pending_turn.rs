//! The engines' two steps for a whole turn (`guard` / `guardAsync` on a gate with plugged
//! engines, `src-ts/gate.ts`): `guardStep` decides the turn up to the engines and answers either
//! the final report or a `BindingPendingTurn` holding the decided turn
//! (`toolgate_core::PendingTurn`); the host asks its engines about `questions` and calls `finish`
//! (or `finishAsync`, off the event loop, for remote state) with their answers. The payload is
//! parsed once, and the second step decides exactly the arguments the engines were shown.

use napi::bindgen_prelude::{AsyncTask, Either};
use napi::Error;
use napi_derive::napi;
use toolgate_core::{DialectChoice, EngineAnswer, GateError, PendingTurn, TurnStep};

use crate::decide_async::{Decide, Op};
use crate::{gate_of, guarded, turn_options};

/// A turn decided up to the plugged engines. Raw binding: `guard` / `guardAsync` on a gate with
/// `engines` use it. Finished at most once; collected unfinished, it records nothing and lets
/// nothing run.
#[napi]
pub struct BindingPendingTurn {
    turn: Option<PendingTurn>,
    questions: String,
}

#[napi]
impl BindingPendingTurn {
    /// The calls put to the engines (`toolgate_wire::questions`): a JSON array of
    /// `{index, tool, arguments, action?, resource?, engine}` in payload order.
    #[napi(getter)]
    pub fn questions(&self) -> String {
        self.questions.clone()
    }

    /// The second step in place: `answers[i]` (`allow`, `deny`, `delegate` or `unasked`) is the
    /// engines' answer for call `i`. Answers the report as `guard` does; `E_CONFIG` when already
    /// finished or an answer is not one of those words.
    #[napi]
    pub fn finish(&mut self, answers: Vec<String>) -> std::result::Result<String, Error<String>> {
        let turn = self.take()?;
        finish(turn, answers)
    }

    /// [`BindingPendingTurn::finish`] on libuv's thread pool (a gate whose state is remote);
    /// resolves to the report, or to an error as NUL, code, LF, message.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn finish_async(&mut self, answers: Vec<String>) -> AsyncTask<Decide> {
        AsyncTask::new(Decide::new(self.turn.take().map(|turn| Op::Finish { turn, answers })))
    }
}

impl BindingPendingTurn {
    fn take(&mut self) -> std::result::Result<PendingTurn, Error<String>> {
        self.turn.take().ok_or_else(|| Error::new("E_CONFIG".to_string(), "this turn has already been finished".to_string()))
    }
}

/// The second step of `turn` with the answers' words (see [`BindingPendingTurn::finish`]).
pub(crate) fn finish(turn: PendingTurn, answers: Vec<String>) -> std::result::Result<String, Error<String>> {
    guarded("payload", move || {
        let answers = answers.iter().map(|a| a.parse()).collect::<Result<Vec<EngineAnswer>, GateError>>()?;
        Ok(toolgate_wire::report_with_patches(&turn.finish(&answers)?))
    })
}

/// The first step of a turn on the gate `handle` (options as `guard` reads them, without
/// `engines`): the final report (`guard`'s wire) when no call reaches the engines, else the
/// pending turn. Throws as `guard` throws.
#[napi(ts_return_type = "string | BindingPendingTurn")]
pub fn guard_step(handle: u32, dialect: String, payload: String, options: String) -> std::result::Result<Either<String, BindingPendingTurn>, Error<String>> {
    let gate = gate_of(handle)?;
    guarded("payload", || {
        let choice: DialectChoice = dialect.parse()?;
        let args = turn_options(&options)?;
        Ok(match gate.guard_step(choice, &payload, &args.opts, args.ctx)? {
            TurnStep::Final(report) => Either::A(toolgate_wire::report_with_patches(&report)),
            TurnStep::Pending(turn) => Either::B(BindingPendingTurn { questions: toolgate_wire::questions(&turn), turn: Some(turn) }),
        })
    })
}
