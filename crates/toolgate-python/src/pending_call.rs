//! `toolgate._native.PendingCall`: one call decided up to the plugged engines
//! (`toolgate_core::PendingCall`), kept for their answer so the second step runs only what comes
//! after them (`ToolGate.check` / `acheck` with `engines`, `python/toolgate/_gate.py`).
//! Conversion only.

use std::sync::Mutex;

use pyo3::prelude::*;
use pyo3::types::PyTuple;
use toolgate_core::EngineAnswer;

use crate::convert::verdict_tuple;
use crate::errors::{from_core, tool_gate_error};

/// A call waiting for the engines' answer (raw binding: `Gate.check_step` makes it). Finished at
/// most once; collected unfinished, it records nothing and lets nothing run.
#[pyclass(frozen, module = "toolgate._native")]
pub struct PendingCall {
    call: Mutex<Option<toolgate_core::PendingCall>>,
}

impl PendingCall {
    /// Wraps a pending call of the core.
    pub(crate) fn new(call: toolgate_core::PendingCall) -> PendingCall {
        PendingCall { call: Mutex::new(Some(call)) }
    }
}

#[pymethods]
impl PendingCall {
    /// The first step's verdict tuple (as `Gate.check` answers it): allowed so far, with the
    /// decided arguments and the facts the engines are asked about (`engine`: the rules' answer).
    /// `E_CONFIG` once finished.
    fn verdict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let held = self.call.lock().unwrap_or_else(|e| e.into_inner());
        match held.as_ref() {
            Some(call) => verdict_tuple(py, call.verdict(), true),
            None => Err(finished(py)),
        }
    }

    /// The second step with the engines' answer (`"allow"`, `"deny"` or `"delegate"`): the final
    /// verdict tuple (the GIL released while it runs: remote state may be waited for).
    /// `E_CONFIG` when already finished or for another word.
    fn finish<'py>(&self, py: Python<'py>, answer: &str) -> PyResult<Bound<'py, PyTuple>> {
        let answer: EngineAnswer = answer.parse().map_err(|e| from_core(py, &e))?;
        let call = self.call.lock().unwrap_or_else(|e| e.into_inner()).take().ok_or_else(|| finished(py))?;
        let v = py.detach(|| std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| call.finish(answer))));
        match v {
            Ok(v) => verdict_tuple(py, &v, true),
            Err(_) => Err(tool_gate_error(py, "E_PAYLOAD", "toolgate could not process this call; nothing was allowed")),
        }
    }
}

fn finished(py: Python<'_>) -> PyErr {
    tool_gate_error(py, "E_CONFIG", "this call has already been finished")
}
