//! `toolgate._native.Stream`: one guarded model stream. Strings in, one JSON string out (`push`:
//! the calls the event completed; `forward`: the events safe to emit; `end`: the report wire, as
//! `Gate.guard` answers). A panic poisons the stream: every later `push` and `end` raises
//! `E_PAYLOAD`, so nothing decided after it is trusted or let through. Safe to share between
//! threads (one lock per stream; events of one stream are pushed in order by their producer).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::PyString;
use toolgate_core::{Dialect, Gate as CoreGate, GateError, GateStream};

use crate::caller::{context, CallerArg};
use crate::errors::{from_core, tool_gate_error};
use crate::gate::Gate;

const POISONED: &str = "toolgate could not process an event of this stream; the stream is closed and nothing more from it is allowed";
const ENDED: &str = "this stream has already ended";

/// What a step of the stream ended with, before it is turned into Python: the wire, a core
/// error, or the stream closed (why).
enum Step {
    Wire(String),
    Failed(GateError),
    Closed(Option<&'static str>),
}

struct State {
    stream: Option<GateStream>,
    /// Why the stream accepts nothing more (a panic, or `end` was called).
    closed: Option<&'static str>,
}

/// One guarded model stream (raw binding: use `ToolGate.stream`).
#[pyclass(frozen, module = "toolgate._native")]
pub struct Stream {
    gate: Arc<CoreGate>,
    dialect: Dialect,
    state: Mutex<State>,
}

impl Stream {
    /// The Python answer of a step: the wire, or `ToolGateError` `E_PAYLOAD` naming the dialect.
    fn answer(&self, py: Python<'_>, step: Step) -> PyResult<String> {
        match step {
            Step::Wire(wire) => Ok(wire),
            Step::Failed(e) => Err(from_core(py, &e)),
            Step::Closed(why) => Err(tool_gate_error(py, "E_PAYLOAD", &format!("{} stream: {}", self.dialect, why.unwrap_or(POISONED)))),
        }
    }
}

#[pymethods]
impl Stream {
    /// Starts a stream on `gate` in `dialect`: `E_DIALECT` for a dialect with no stream form.
    #[new]
    #[pyo3(signature = (gate, dialect, ctx=None))]
    fn new(py: Python<'_>, gate: &Gate, dialect: PyBackedStr, ctx: Option<CallerArg<'_>>) -> PyResult<Self> {
        let gate = Arc::clone(&gate.inner);
        let ctx = context(py, &ctx)?.into_owned();
        let made = catch_unwind(AssertUnwindSafe(|| -> Result<(Dialect, GateStream), GateError> {
            let d: Dialect = dialect.parse()?;
            Ok((d, gate.stream_as(d, ctx)?))
        }));
        match made {
            Ok(Ok((dialect, stream))) => Ok(Stream { gate, dialect, state: Mutex::new(State { stream: Some(stream), closed: None }) }),
            Ok(Err(e)) => Err(from_core(py, &e)),
            Err(_) => Err(tool_gate_error(py, "E_DIALECT", "toolgate could not start this stream")),
        }
    }

    /// Feeds one event (an SSE line, several lines of one event, or one event's JSON text);
    /// answers the calls it completed as a JSON array in the per-call wire.
    fn push(&self, py: Python<'_>, event: &Bound<'_, PyString>) -> PyResult<String> {
        let Ok(event) = event.to_cow() else {
            return Err(tool_gate_error(
                py,
                "E_PAYLOAD",
                &format!("{} stream event: cannot be read as JSON (the text holds a lone UTF-16 surrogate)", self.dialect),
            ));
        };
        let gate = &self.gate;
        let step = py.detach(|| {
            let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
            let Some(stream) = st.stream.as_mut() else { return Step::Closed(st.closed) };
            match catch_unwind(AssertUnwindSafe(|| stream.push(gate, &event))) {
                Ok(Ok(calls)) => Step::Wire(toolgate_wire::calls(&calls)),
                Ok(Err(e)) => Step::Failed(e),
                Err(_) => {
                    st.stream = None;
                    st.closed = Some(POISONED);
                    Step::Closed(Some(POISONED))
                }
            }
        });
        self.answer(py, step)
    }

    /// Takes the events safe to emit now, as a JSON array (`[]` once the stream is closed).
    fn forward(&self, py: Python<'_>) -> String {
        py.detach(|| {
            let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
            let Some(stream) = st.stream.as_mut() else { return "[]".to_owned() };
            match catch_unwind(AssertUnwindSafe(|| serde_json::to_string(&stream.forward()))) {
                Ok(Ok(text)) => text,
                _ => {
                    st.stream = None;
                    st.closed = Some(POISONED);
                    "[]".to_owned()
                }
            }
        })
    }

    /// Ends the stream: the report wire of the whole turn. `E_PAYLOAD` for a stream cut off,
    /// failed, poisoned, or already ended.
    fn end(&self, py: Python<'_>) -> PyResult<String> {
        let gate = &self.gate;
        let step = py.detach(|| {
            let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
            let Some(stream) = st.stream.take() else { return Step::Closed(st.closed) };
            st.closed = Some(ENDED);
            match catch_unwind(AssertUnwindSafe(|| stream.end(gate))) {
                Ok(Ok(report)) => Step::Wire(toolgate_wire::report(&report)),
                Ok(Err(e)) => Step::Failed(e),
                Err(_) => {
                    st.closed = Some(POISONED);
                    Step::Closed(Some(POISONED))
                }
            }
        });
        self.answer(py, step)
    }

    /// The dialect this stream reads.
    #[getter]
    fn dialect(&self) -> &'static str {
        self.dialect.as_str()
    }
}
