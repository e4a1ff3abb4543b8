//! Callers prepared once (`gate.caller(ctx)` in TypeScript): the `CallContext` is read and
//! checked when the caller is prepared, and a decision for it names the prepared caller by
//! handle, so a host that reuses a caller across many calls pays no conversion per call.

use std::sync::{Arc, RwLock};

use napi::Error;
use napi_derive::napi;
use toolgate_core::CallContext;

/// Every live prepared caller, by handle (the slot is freed when its `BindingCaller` is collected).
pub(crate) static CALLERS: RwLock<Vec<Option<Arc<CallContext>>>> = RwLock::new(Vec::new());

/// A prepared caller: its context read once. Raw binding: use `gate.caller(ctx)` from the package.
#[napi]
pub struct BindingCaller {
    handle: u32,
}

impl Drop for BindingCaller {
    fn drop(&mut self) {
        let mut callers = CALLERS.write().unwrap_or_else(|e| e.into_inner());
        if let Some(slot) = callers.get_mut(self.handle as usize) {
            *slot = None;
        }
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
        let mut callers = CALLERS.write().unwrap_or_else(|e| e.into_inner());
        let ctx = Some(Arc::new(ctx));
        let handle = match callers.iter().position(Option::is_none) {
            Some(i) => {
                callers[i] = ctx;
                i
            }
            None => {
                callers.push(ctx);
                callers.len() - 1
            }
        };
        Ok(BindingCaller { handle: handle as u32 })
    }

    /// The handle to pass to `check` (and in a turn's options) while this object is alive.
    #[napi(getter)]
    pub fn handle(&self) -> u32 {
        self.handle
    }
}

/// The prepared caller `handle` names (`None` once released, or never prepared).
pub(crate) fn lookup(handle: u32) -> Option<Arc<CallContext>> {
    let callers = CALLERS.read().unwrap_or_else(|e| e.into_inner());
    callers.get(handle as usize).and_then(Clone::clone)
}
