//! Streams through the binding: one `BindingStream` per guarded model stream. Strings in, one
//! string out: `push` answers the calls the event completed (a JSON array in the per-call wire
//! of `toolgate_wire::report`), `forward` the events safe to emit (a JSON array), `end` the report
//! wire, as `guard` does. Core errors become JS errors with `code`; a panic is caught and poisons
//! the stream (every later `push` and `end` throws `E_PAYLOAD`), so nothing decided after it can
//! be trusted or let through.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use napi::Error;
use napi_derive::napi;
use toolgate_core::{CallContext, Dialect, Gate, GateError, GateStream};

use super::{gate_of, to_js_error};

/// What a poisoned or ended stream answers.
const POISONED: &str = "toolgate could not process an event of this stream; the stream is closed and nothing more from it is allowed";
const ENDED: &str = "this stream has already ended";

/// One guarded model stream (raw binding: use `gate.stream(...)` from the package instead).
#[napi]
pub struct BindingStream {
    gate: Arc<Gate>,
    dialect: Dialect,
    stream: Option<GateStream>,
    /// Why the stream accepts nothing more (a panic, or `end` was called).
    closed: Option<&'static str>,
}

fn payload_error(what: &str, dialect: Dialect) -> Error<String> {
    Error::new("E_PAYLOAD".to_string(), format!("{dialect} stream: {what}"))
}

#[napi]
impl BindingStream {
    /// Starts a stream on the gate `handle` in `dialect`. Throws `E_DIALECT` for a dialect with
    /// no stream form, `E_CONFIG` for a released gate.
    #[napi(constructor)]
    pub fn new(handle: u32, dialect: String, ctx: String) -> std::result::Result<Self, Error<String>> {
        let gate = gate_of(handle)?;
        let made = catch_unwind(AssertUnwindSafe(|| -> Result<(Dialect, GateStream), GateError> {
            let d: Dialect = dialect.parse()?;
            let ctx = CallContext::from_json(&ctx)?;
            Ok((d, gate.stream_as(d, ctx)?))
        }));
        match made {
            Ok(Ok((dialect, stream))) => Ok(BindingStream { gate, dialect, stream: Some(stream), closed: None }),
            Ok(Err(e)) => Err(to_js_error(e)),
            Err(_) => Err(Error::new("E_DIALECT".to_string(), "toolgate could not start this stream".to_string())),
        }
    }

    /// Feeds one event (an SSE line or one event's JSON text); answers the calls it completed,
    /// as a JSON array of per-call wire objects.
    #[napi]
    pub fn push(&mut self, event: String) -> std::result::Result<String, Error<String>> {
        let Some(stream) = self.stream.as_mut() else {
            return Err(payload_error(self.closed.unwrap_or(POISONED), self.dialect));
        };
        let gate = &self.gate;
        match catch_unwind(AssertUnwindSafe(|| stream.push(gate, &event))) {
            Ok(Ok(calls)) => Ok(toolgate_wire::calls(&calls)),
            Ok(Err(e)) => Err(to_js_error(e)),
            Err(_) => {
                self.stream = None;
                self.closed = Some(POISONED);
                Err(payload_error(POISONED, self.dialect))
            }
        }
    }

    /// Takes the events safe to emit now, as a JSON array (`[]` once the stream is closed).
    #[napi]
    pub fn forward(&mut self) -> String {
        let Some(stream) = self.stream.as_mut() else { return "[]".to_string() };
        match catch_unwind(AssertUnwindSafe(|| serde_json::to_string(&stream.forward()))) {
            Ok(Ok(text)) => text,
            _ => {
                self.stream = None;
                self.closed = Some(POISONED);
                "[]".to_string()
            }
        }
    }

    /// Ends the stream: the report wire of the whole turn (as `guard` answers). Throws
    /// `E_PAYLOAD` for a stream cut off, failed, poisoned, or already ended.
    #[napi]
    pub fn end(&mut self) -> std::result::Result<String, Error<String>> {
        let Some(stream) = self.stream.take() else {
            return Err(payload_error(self.closed.unwrap_or(POISONED), self.dialect));
        };
        self.closed = Some(ENDED);
        let gate = &self.gate;
        match catch_unwind(AssertUnwindSafe(|| stream.end(gate))) {
            Ok(Ok(report)) => Ok(toolgate_wire::report(&report)),
            Ok(Err(e)) => Err(to_js_error(e)),
            Err(_) => {
                self.closed = Some(POISONED);
                Err(payload_error(POISONED, self.dialect))
            }
        }
    }
}
