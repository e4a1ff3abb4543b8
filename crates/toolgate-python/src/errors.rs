//! One conversion point for errors: a core [`GateError`] (or a caught panic) becomes the
//! package's `toolgate._errors.ToolGateError(code, message)`, whose `code` is the stable string
//! of the closed set (the core's `GateError::CODES`: `E_CONFIG`, `E_PAYLOAD`, `E_DIALECT`,
//! `E_RECEIPT`, `E_STATE`; and the package's own `E_ASYNC`).

use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use toolgate_core::GateError;

/// A `ToolGateError` with `code` and `message`. If the package's error class cannot be loaded
/// (the module imported on its own), a `ValueError` whose text starts with the code.
pub(crate) fn tool_gate_error(py: Python<'_>, code: &str, message: &str) -> PyErr {
    let made = py.import("toolgate._errors").and_then(|m| m.getattr("ToolGateError")).and_then(|cls| cls.call1((code, message)));
    match made {
        Ok(obj) => PyErr::from_value(obj),
        Err(_) => PyValueError::new_err(format!("{code}: {message}")),
    }
}

/// [`tool_gate_error`] for a core error.
pub(crate) fn from_core(py: Python<'_>, e: &GateError) -> PyErr {
    tool_gate_error(py, e.code(), &e.to_string())
}

/// Runs `f` (which may panic) without the GIL: a core error becomes a `ToolGateError`, a panic
/// one with `panic_code` saying nothing was allowed.
pub(crate) fn run_detached<T: Send>(py: Python<'_>, what: &str, panic_code: &str, f: impl FnOnce() -> Result<T, GateError> + Send) -> PyResult<T> {
    match py.detach(|| catch_unwind(AssertUnwindSafe(f))) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(from_core(py, &e)),
        Err(_) => Err(tool_gate_error(py, panic_code, &format!("toolgate could not process this {what}; nothing was allowed"))),
    }
}
