//! Receipts without a gate: verifying one (for the tool's side of a call) and making a key pair.

use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use toolgate_core::GateError;

use crate::errors::{from_core, tool_gate_error};

/// Verifies `receipt` against `public_key` (base64url); `expect` is `""` or JSON
/// `{ "tool"?, "arguments"?, "sub"? }`; `now_ms` the time (0: the clock). Answers the claims as
/// JSON text; `E_RECEIPT` whose message starts with the stable reason (`bad_signature: …`).
#[pyfunction]
#[pyo3(signature = (receipt, public_key, expect="", now_ms=0.0))]
pub(crate) fn verify_receipt(py: Python<'_>, receipt: PyBackedStr, public_key: PyBackedStr, expect: &str, now_ms: f64) -> PyResult<String> {
    let expect = expect.to_owned();
    let run = || -> Result<String, GateError> {
        let exp: serde_json::Value =
            if expect.is_empty() { serde_json::Value::Null } else { serde_json::from_str(&expect).map_err(|e| GateError::Config(format!("expect: {e}")))? };
        let e = toolgate_core::receipt::Expect {
            tool: exp.get("tool").and_then(|v| v.as_str()),
            arguments: exp.get("arguments"),
            sub: exp.get("sub").and_then(|v| v.as_str()),
        };
        let now_s = if now_ms.is_finite() && now_ms > 0.0 { (now_ms / 1000.0) as u64 } else { 0 };
        let claims = toolgate_core::receipt::verify(&receipt, &public_key, now_s, &e).map_err(|err| GateError::Receipt(err.reason(), err.to_string()))?;
        Ok(serde_json::to_string(&claims).unwrap_or_default())
    };
    match py.detach(|| catch_unwind(AssertUnwindSafe(run))) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(from_core(py, &e)),
        Err(_) => Err(tool_gate_error(py, "E_RECEIPT", "malformed: the receipt could not be read")),
    }
}

/// A fresh receipt key pair as JSON text: `{"privateKey", "publicKey", "kid"}` (base64url).
#[pyfunction]
pub(crate) fn generate_receipt_key(py: Python<'_>) -> PyResult<String> {
    let key = toolgate_core::receipt::ReceiptKey::generate().map_err(|e| tool_gate_error(py, "E_CONFIG", &e))?;
    Ok(serde_json::json!({ "privateKey": key.seed(), "publicKey": key.public_key(), "kid": key.kid() }).to_string())
}
