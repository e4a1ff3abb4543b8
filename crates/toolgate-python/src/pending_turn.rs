//! `toolgate._native.PendingTurn`: a turn decided up to the plugged engines
//! (`toolgate_core::PendingTurn`), kept for their answers so the second step runs only what
//! comes after them (`ToolGate.guard` / `aguard` with `engines`, `python/toolgate/_gate.py`).
//! Conversion only.

use std::sync::Mutex;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use toolgate_core::{EngineAnswer, GateError};

use crate::convert::{report_tuple, to_py};
use crate::errors::{run_detached, tool_gate_error};

/// A turn waiting for the engines' answers (raw binding: `Gate.guard_step` makes it). Finished
/// at most once; collected unfinished, it records nothing and lets nothing run.
#[pyclass(frozen, module = "toolgate._native")]
pub struct PendingTurn {
    turn: Mutex<Option<toolgate_core::PendingTurn>>,
}

impl PendingTurn {
    /// Wraps a pending turn of the core.
    pub(crate) fn new(turn: toolgate_core::PendingTurn) -> PendingTurn {
        PendingTurn { turn: Mutex::new(Some(turn)) }
    }
}

#[pymethods]
impl PendingTurn {
    /// The calls put to the engines, in payload order: dicts of `index` (the call's position,
    /// its answer's index), `tool`, `arguments` (as decided), `action`, `resource` (or `None`)
    /// and `engine` (the rules' answer, `"allow"` / `"no_rule"`). Empty once finished.
    fn questions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        let held = self.turn.lock().unwrap_or_else(|e| e.into_inner());
        for q in held.iter().flat_map(|t| t.questions()) {
            let d = PyDict::new(py);
            d.set_item("index", q.index)?;
            d.set_item("tool", q.tool)?;
            d.set_item("arguments", to_py(py, q.arguments)?)?;
            d.set_item("action", q.action)?;
            d.set_item("resource", q.resource)?;
            d.set_item("engine", q.rules.as_str())?;
            out.append(d)?;
        }
        Ok(out)
    }

    /// The second step: `answers[i]` (`"allow"`, `"deny"`, `"delegate"` or `"unasked"`) is the
    /// engines' answer for call `i`. Answers the report as `Gate.guard` does (the GIL released
    /// while it runs: remote state may be waited for); `E_CONFIG` when already finished or an
    /// answer is not one of those words.
    fn finish<'py>(&self, py: Python<'py>, answers: Vec<String>) -> PyResult<Bound<'py, PyTuple>> {
        let turn = self.turn.lock().unwrap_or_else(|e| e.into_inner()).take();
        let Some(turn) = turn else { return Err(tool_gate_error(py, "E_CONFIG", "this turn has already been finished")) };
        let report = run_detached(py, "payload", "E_PAYLOAD", move || {
            let answers = answers.iter().map(|a| a.parse()).collect::<Result<Vec<EngineAnswer>, GateError>>()?;
            turn.finish(&answers)
        })?;
        report_tuple(py, &report, false)
    }
}
