//! PyO3 binding of toolgate-core: the `toolgate._native` module of the Python package. It only
//! converts (strings in; tuples, Python values or one JSON string out; one call per decision) and
//! calls the core. Every decision is the core's, byte for byte the one the Node binding gets.
//!
//! Guarantees at this boundary:
//! - the GIL is released while the core decides (`Python::detach`), and a [`gate::Gate`] is
//!   `Send + Sync`: one gate may be shared by many threads;
//! - a panic never crosses into Python: a decision that panics is a refusal, anything else a
//!   `ToolGateError` (`toolgate._errors`) with its stable `code`;
//! - model output never raises: text that cannot cross (a lone surrogate) is a refusal.
//!
//! The typed surface users see is `python/toolgate/` (hand-written stub: `_native.pyi`).

mod caller;
mod convert;
mod errors;
mod gate;
mod pending_call;
mod pending_turn;
mod receipt;
mod stream;
mod tool_list;

use pyo3::prelude::*;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The extension module. Classes: `Gate`, `Stream`; functions: `verify_receipt`,
/// `generate_receipt_key`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<gate::Gate>()?;
    m.add_class::<caller::Caller>()?;
    m.add_class::<tool_list::ToolList>()?;
    m.add_class::<pending_turn::PendingTurn>()?;
    m.add_class::<pending_call::PendingCall>()?;
    m.add_class::<stream::Stream>()?;
    m.add_function(wrap_pyfunction!(receipt::verify_receipt, m)?)?;
    m.add_function(wrap_pyfunction!(receipt::generate_receipt_key, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
