//! napi-rs binding of toolgate-core. It only converts: strings in, strings out, one call per
//! decision. Core errors become JS errors whose `code` is the stable `ToolGateError` code;
//! panics are caught here and never cross into Node.

use std::panic::{catch_unwind, AssertUnwindSafe};

use napi::Error;
use napi_derive::napi;
use toolgate_core::{Gate, GateError};

/// Fail-closed answer used if the core ever panics on an input: refuse the call.
const PANIC_VERDICT: &str = r#"{"outcome":"rejected","flags":[],"reason":"bad_arguments","message":"toolgate could not process these arguments; the call was not run."}"#;

fn to_js_error(e: GateError) -> Error<String> {
    Error::new(e.code().to_string(), e.to_string())
}

/// A compiled gate. Raw binding: use `ToolGate` from the package instead.
#[napi]
pub struct BindingGate {
    inner: Gate,
}

#[napi]
impl BindingGate {
    /// Compiles a gate from config JSON text. Throws with `code` `E_CONFIG` on a bad config.
    #[napi(constructor)]
    pub fn new(config_json: String) -> std::result::Result<Self, Error<String>> {
        match catch_unwind(|| Gate::from_json(&config_json)) {
            Ok(Ok(inner)) => Ok(BindingGate { inner }),
            Ok(Err(e)) => Err(to_js_error(e)),
            Err(_) => Err(Error::new("E_CONFIG".to_string(), "toolgate could not compile this config".to_string())),
        }
    }

    /// Checks one call. Returns `""` when the call passed untouched (run the caller's own
    /// arguments text), else the verdict as compact JSON. Never throws.
    #[napi]
    pub fn check(&self, tool: String, args: String) -> String {
        let gate = &self.inner;
        match catch_unwind(AssertUnwindSafe(|| gate.check(&tool, &args))) {
            Ok(v) if v.untouched => String::new(),
            Ok(v) => v.to_json(),
            Err(_) => PANIC_VERDICT.to_string(),
        }
    }

    /// Refuses arguments the host could not serialize (see `Gate::check_unreadable`).
    #[napi]
    pub fn check_unreadable(&self, tool: String, detail: String) -> String {
        let gate = &self.inner;
        match catch_unwind(AssertUnwindSafe(|| gate.check_unreadable(&tool, &detail))) {
            Ok(v) => v.to_json(),
            Err(_) => PANIC_VERDICT.to_string(),
        }
    }

    /// Declared tool names, in config order.
    #[napi]
    pub fn tool_names(&self) -> Vec<String> {
        self.inner.tool_names().map(str::to_owned).collect()
    }
}
