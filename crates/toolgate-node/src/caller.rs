//! Callers prepared once (`gate.caller(ctx)` in TypeScript): the `CallContext` is read and
//! checked when the caller is prepared, and a decision for it names the prepared caller by
//! handle, so a host that reuses a caller across many calls pays no conversion per call.

use std::sync::Arc;

use napi::Error;
use napi_derive::napi;
use toolgate_core::{CallContext, GateError};

use crate::slots::Slots;

/// Every live prepared caller, by handle (the slot is freed when its `BindingCaller` is collected).
pub(crate) static CALLERS: Slots<CallContext> = Slots::new();

/// A prepared caller: its context read once. Raw binding: use `gate.caller(ctx)` from the package.
#[napi]
pub struct BindingCaller {
    handle: u32,
}

impl Drop for BindingCaller {
    fn drop(&mut self) {
        CALLERS.remove(self.handle);
    }
}

#[napi]
impl BindingCaller {
    /// Reads a `CallContext` from its JSON text once. Throws `E_CONFIG` naming a key that is not
    /// a context field or a value of the wrong type (as a context passed with each call would).
    #[napi(constructor)]
    pub fn new(ctx_json: String) -> std::result::Result<Self, Error<String>> {
        let ctx = std::panic::catch_unwind(|| CallContext::from_json(&ctx_json))
            .map_err(|_| Error::new("E_CONFIG".to_string(), "toolgate could not read this call context".to_string()))?
            .map_err(|e| Error::new(e.code().to_string(), e.to_string()))?;
        Ok(BindingCaller { handle: CALLERS.insert(Arc::new(ctx)) })
    }

    /// The handle to pass to `check` (and in a turn's options) while this object is alive.
    #[napi(getter)]
    pub fn handle(&self) -> u32 {
        self.handle
    }
}

/// The prepared caller `handle` names (`None` once released, or never prepared).
pub(crate) fn lookup(handle: u32) -> Option<Arc<CallContext>> {
    CALLERS.get(handle)
}

/// [`lookup`] for a decision's options: `E_CONFIG` once the caller is released (or was never prepared).
pub(crate) fn known(handle: u32) -> Result<Arc<CallContext>, GateError> {
    lookup(handle).ok_or_else(|| GateError::Config("options.caller: this caller has been released".to_string()))
}
