//! `toolgate._native.Stream`: one guarded model stream. Strings in, Python values out (`push`:
//! the calls the event completed; `forward`: the events safe to emit; `end`: the report, as
//! `Gate.guard` answers it, with the payload the stream built; see `convert.rs`). A panic poisons
//! the stream: every later `push` and `end` raises
//! `E_PAYLOAD`, so nothing decided after it is trusted or let through. Safe to share between
//! threads (one lock per stream; events of one stream are pushed in order by their producer).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::{PyList, PyString, PyTuple};
use serde_json::Value;
use toolgate_core::{Dialect, Gate as CoreGate, GateError, GateStream, TurnCall, TurnReport};

use crate::caller::{context, CallerArg};
use crate::convert::{report_tuple, to_py, turn_call_tuple};
use crate::errors::{from_core, tool_gate_error};
use crate::gate::Gate;

const POISONED: &str = "toolgate could not process an event of this stream; the stream is closed and nothing more from it is allowed";
const ENDED: &str = "this stream has already ended";

/// What a step of the stream ended with, before it is turned into Python: its answer, a core
/// error, or the stream closed (why).
enum Step<T> {
    Done(T),
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
    /// The answer of a step, or `ToolGateError` `E_PAYLOAD` naming the dialect.
    fn answer<T>(&self, py: Python<'_>, step: Step<T>) -> PyResult<T> {
        match step {
            Step::Done(answer) => Ok(answer),
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
    /// answers the calls it completed, each as `convert::turn_call_tuple`'s tuple.
    fn push<'py>(&self, py: Python<'py>, event: &Bound<'_, PyString>) -> PyResult<Bound<'py, PyList>> {
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
                Ok(Ok(calls)) => Step::Done(calls),
                Ok(Err(e)) => Step::Failed(e),
                Err(_) => {
                    st.stream = None;
                    st.closed = Some(POISONED);
                    Step::Closed(Some(POISONED))
                }
            }
        });
        let calls: Vec<TurnCall> = self.answer(py, step)?;
        let list = PyList::empty(py);
        for c in &calls {
            list.append(turn_call_tuple(py, c)?)?;
        }
        Ok(list)
    }

    /// Takes the events safe to emit now, as a list of Python values (empty once the stream is
    /// closed).
    fn forward<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let events: Vec<Value> = py.detach(|| {
            let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
            let Some(stream) = st.stream.as_mut() else { return Vec::new() };
            match catch_unwind(AssertUnwindSafe(|| stream.forward())) {
                Ok(events) => events,
                Err(_) => {
                    st.stream = None;
                    st.closed = Some(POISONED);
                    Vec::new()
                }
            }
        });
        let list = PyList::empty(py);
        for e in &events {
            list.append(to_py(py, e)?)?;
        }
        Ok(list)
    }

    /// Ends the stream: the report of the whole turn (`convert::report_tuple`, with the payload the
    /// stream built). `E_PAYLOAD` for a stream cut off, failed, poisoned, or already ended.
    fn end<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let gate = &self.gate;
        let step = py.detach(|| {
            let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
            let Some(stream) = st.stream.take() else { return Step::Closed(st.closed) };
            st.closed = Some(ENDED);
            match catch_unwind(AssertUnwindSafe(|| stream.end(gate))) {
                Ok(Ok(report)) => Step::Done(report),
                Ok(Err(e)) => Step::Failed(e),
                Err(_) => {
                    st.closed = Some(POISONED);
                    Step::Closed(Some(POISONED))
                }
            }
        });
        let report: TurnReport = self.answer(py, step)?;
        report_tuple(py, &report, true)
    }

    /// The dialect this stream reads.
    #[getter]
    fn dialect(&self) -> &'static str {
        self.dialect.as_str()
    }
}
