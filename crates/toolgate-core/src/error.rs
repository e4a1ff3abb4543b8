//! Typed errors of the core. Every error maps to one stable code of the closed set in docs/api.md (`ToolGateErrorCode`).

use thiserror::Error;

/// An error the core reports to its caller. `code()` is the stable `ToolGateError.code`.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum GateError {
    /// The config or a tool schema is wrong; the message names what and where.
    #[error("{0}")]
    Config(String),
    /// A turn's shape is broken.
    #[error("{0}")]
    Payload(String),
    /// An unknown dialect, or `auto` cannot tell.
    #[error("{0}")]
    Dialect(String),
    /// A receipt failed verification; the first field is the stable reason
    /// (`bad_signature`, `expired` …), the second the message.
    #[error("{1}")]
    Receipt(&'static str, String),
    /// The gate's shared state could not be read or written in time (`markSession` on a remote
    /// store); decisions in that state are refusals (`state_unavailable`), not errors.
    #[error("{0}")]
    State(String),
}

impl GateError {
    /// Every code [`GateError::code`] answers (the generated TypeScript `CoreErrorCode`).
    pub const CODES: [&'static str; 5] = ["E_CONFIG", "E_PAYLOAD", "E_DIALECT", "E_RECEIPT", "E_STATE"];

    /// The stable error code (`E_CONFIG`, `E_PAYLOAD`, `E_DIALECT`, `E_RECEIPT`, `E_STATE`).
    pub fn code(&self) -> &'static str {
        match self {
            GateError::Config(_) => "E_CONFIG",
            GateError::Payload(_) => "E_PAYLOAD",
            GateError::Dialect(_) => "E_DIALECT",
            GateError::Receipt(..) => "E_RECEIPT",
            GateError::State(_) => "E_STATE",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::GateError;

    /// One error of each kind: a new kind is a compile error here until it is listed, and then
    /// its code must be in [`GateError::CODES`].
    fn one_of_each() -> Vec<GateError> {
        let all = vec![
            GateError::Config(String::new()),
            GateError::Payload(String::new()),
            GateError::Dialect(String::new()),
            GateError::Receipt("bad_signature", String::new()),
            GateError::State(String::new()),
        ];
        for e in &all {
            match e {
                GateError::Config(_) | GateError::Payload(_) | GateError::Dialect(_) | GateError::Receipt(..) | GateError::State(_) => {}
            }
        }
        all
    }

    #[test]
    fn codes_lists_every_code_once() {
        let codes: Vec<&str> = one_of_each().iter().map(GateError::code).collect();
        assert_eq!(codes, GateError::CODES);
    }
}
