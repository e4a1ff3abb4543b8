//! `toolgate._native.Caller`: a caller's context read and checked once, then passed in place of
//! its JSON text to every decision (`toolgate.ToolGate.caller`), so a host's repeated caller
//! costs no serialization and no parse per call. Conversion only: the decisions are the same.

use std::borrow::Cow;

use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use toolgate_core::CallContext;

use crate::errors::from_core;

/// A prepared caller (raw binding: use `toolgate.ToolGate.caller`). Immutable once made.
#[pyclass(frozen, module = "toolgate._native")]
pub struct Caller {
    ctx: CallContext,
}

#[pymethods]
impl Caller {
    /// Reads the context JSON text (`None` or `""`: no context); `E_CONFIG` naming the key the
    /// core refuses, as a decision given the same text would.
    #[new]
    #[pyo3(signature = (ctx=None))]
    fn new(py: Python<'_>, ctx: Option<PyBackedStr>) -> PyResult<Self> {
        read(py, ctx.as_deref().unwrap_or("")).map(|ctx| Caller { ctx })
    }
}

/// The context in JSON text `text` (`""`: no context); `E_CONFIG` naming what the core refuses.
fn read(py: Python<'_>, text: &str) -> PyResult<CallContext> {
    CallContext::from_json(text).map_err(|e| from_core(py, &e))
}

/// The caller of a decision as the package passes it: a prepared [`Caller`], or context JSON text.
#[derive(FromPyObject)]
pub(crate) enum CallerArg<'py> {
    /// Read once, when it was prepared.
    Prepared(Bound<'py, Caller>),
    /// Read now.
    Text(PyBackedStr),
}

/// The context of `arg` (none: the empty context); `E_CONFIG` for text the core refuses.
pub(crate) fn context<'a>(py: Python<'_>, arg: &'a Option<CallerArg<'_>>) -> PyResult<Cow<'a, CallContext>> {
    match arg {
        Some(CallerArg::Prepared(c)) => Ok(Cow::Borrowed(&c.get().ctx)),
        Some(CallerArg::Text(t)) => read(py, t).map(Cow::Owned),
        None => read(py, "").map(Cow::Owned),
    }
}
