//! The engines' two steps for one call (`check` / `checkAsync` on a gate with plugged engines,
//! `src-ts/gate.ts`): `checkStep` decides the call up to the engines and answers either the final
//! verdict (the `check` wire) or the decided call kept by handle (`toolgate_core::PendingCall`,
//! see `pending.rs`); the host asks its engines and calls `finishCall` (or `finishCallAsync`, off
//! the event loop, for remote state) with their answer, or `releaseCall` when asking them failed.
//! The arguments and the context are read once.

use std::sync::Arc;

use napi::bindgen_prelude::AsyncTask;
use napi::Error;
use napi_derive::napi;
use toolgate_core::{CallContext, CallStep, PendingCall};

use crate::decide_async::{Decide, Op};
use crate::pending::{too_many, Pending};
use crate::{caller, context, engine_answer, gate_of, to_js_error, to_wire, PANIC_WIRE};

/// Every call waiting for the engines' answer, by handle.
static CALLS: Pending<PendingCall> = Pending::new();

/// The first step of `check` for one call on the gate `handle`: the caller is the prepared
/// caller `caller` when given, else the context `ctx` (JSON text, `""` for none). Answers the
/// final verdict's wire when the call is refused before the engines' stage, else
/// `?HANDLE \n WIRE`: the handle the call is kept by, and the first step's verdict in the `check`
/// wire (allowed so far, with the decided arguments and the `engine` fact). Throws `E_CONFIG` for
/// a context the host got wrong, or when 65,536 calls already wait; never on model output.
#[napi]
pub fn check_step(handle: u32, tool: String, args: String, ctx: String, caller: Option<u32>) -> std::result::Result<String, Error<String>> {
    let gate = gate_of(handle)?;
    let ctx: Arc<CallContext> = match caller {
        Some(c) => caller::known(c).map_err(to_js_error)?,
        None => Arc::new(context(&ctx)?),
    };
    let step = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| gate.check_step(&tool, &args, ctx)));
    match step {
        Ok(CallStep::Final(v)) => Ok(to_wire(&v)),
        Ok(CallStep::Pending(call)) => {
            let wire = to_wire(call.verdict());
            let h = CALLS.insert(call).ok_or_else(too_many)?;
            Ok(format!("?{h}\n{wire}"))
        }
        Err(_) => Ok(PANIC_WIRE.to_string()),
    }
}

/// The second step of the call `handle` with the engines' answer (`allow`, `deny` or
/// `delegate`): the final verdict in the `check` wire. `E_CONFIG` for a handle finished or
/// released before, or another word.
#[napi]
pub fn finish_call(handle: u32, answer: String) -> std::result::Result<String, Error<String>> {
    finish(taken(handle)?, answer)
}

/// [`finish_call`] on libuv's thread pool (a gate whose state is remote); the call is taken now.
/// Resolves to the wire, or to an error as NUL, code, LF, message.
#[napi(ts_return_type = "Promise<string>")]
pub fn finish_call_async(handle: u32, answer: String) -> AsyncTask<Decide> {
    AsyncTask::new(Decide::new(CALLS.take(handle).map(|call| Op::FinishCall { call, answer })))
}

/// Drops the call `handle` unfinished (asking the engines failed): nothing is recorded, nothing
/// runs. A handle finished or released before is ignored.
#[napi]
pub fn release_call(handle: u32) {
    drop(CALLS.take(handle));
}

/// The second step of `call` with the engines' answer word (see [`finish_call`]).
pub(crate) fn finish(call: PendingCall, answer: String) -> std::result::Result<String, Error<String>> {
    let answer = engine_answer(&answer)?;
    Ok(std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| to_wire(&call.finish(answer)))).unwrap_or_else(|_| PANIC_WIRE.to_string()))
}

fn taken(handle: u32) -> std::result::Result<PendingCall, Error<String>> {
    CALLS.take(handle).ok_or_else(|| Error::new("E_CONFIG".to_string(), "this call is not waiting for the engines (finished or released before)".to_string()))
}
