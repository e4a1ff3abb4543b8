//! `toolgate._native.ToolList`: a tool list read and checked once (`ToolGate.prepare_tools`),
//! then filtered for each caller without being read again (see `toolgate_core::tool_list`).
//! Conversion only: the answers are `filter_tools`' for the text it was prepared from.

use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::{PyList, PyString};
use toolgate_core::{Dialect, PreparedTools, Stage};

use crate::caller::{context, CallerArg};
use crate::errors::run_detached;
use crate::gate::{payload_text, Gate};

/// A prepared tool list (raw binding: use `toolgate.ToolGate.prepare_tools`). Immutable once
/// made; safe to use from many threads.
#[pyclass(frozen, module = "toolgate._native")]
pub struct ToolList {
    list: PreparedTools,
}

#[pymethods]
impl ToolList {
    /// Reads and checks `tools` (JSON text in `dialect`'s request shape) on `gate`: the checks
    /// and errors of `Gate.filter_tools`.
    #[new]
    fn new(py: Python<'_>, gate: &Bound<'_, Gate>, dialect: PyBackedStr, tools: &Bound<'_, PyString>) -> PyResult<Self> {
        let text = payload_text(py, tools, &format!("{} tool list", &*dialect))?;
        let g = &gate.get().inner;
        let list = run_detached(py, "tool list", "E_PAYLOAD", || {
            let d: Dialect = dialect.parse()?;
            g.prepare_tools(d, &text)
        })?;
        Ok(ToolList { list })
    }

    /// The list filtered for this caller on `gate`, as JSON text (`Gate.filter_tools`' answer).
    #[pyo3(signature = (gate, ctx=None))]
    fn filter(&self, py: Python<'_>, gate: &Bound<'_, Gate>, ctx: Option<CallerArg<'_>>) -> PyResult<String> {
        let ctx = context(py, &ctx)?;
        let g = &gate.get().inner;
        run_detached(py, "tool list", "E_PAYLOAD", || g.filter_prepared(&self.list, &g.who(&ctx, Stage::Full)).map(|t| t.to_string()))
    }

    /// What [`ToolList::filter`] takes out: paths into the list as prepared (lists of keys and
    /// indices, `Gate.filter_tools_removals`' answer).
    #[pyo3(signature = (gate, ctx=None))]
    fn removals<'py>(&self, py: Python<'py>, gate: &Bound<'_, Gate>, ctx: Option<CallerArg<'_>>) -> PyResult<Bound<'py, PyList>> {
        let ctx = context(py, &ctx)?;
        let g = &gate.get().inner;
        let removed = run_detached(py, "tool list", "E_PAYLOAD", || g.filter_prepared_removals(&self.list, &g.who(&ctx, Stage::Full)))?;
        crate::convert::path_lists(py, &removed)
    }
}
