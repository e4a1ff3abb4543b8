//! Who is calling (`CallContext` in docs/api.md). Supplied by the host, never by the model: roles,
//! identity and subject come only from here.

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::config::Surface;
use crate::error::GateError;

/// The caller of one `check`, `guard`, stream or `confirm`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CallContext {
    /// Who is acting (end user / agent id).
    #[serde(default)]
    pub subject: Option<String>,
    /// `roles` in rules and conditions.
    #[serde(default)]
    pub roles: Vec<String>,
    /// `identity.*` in conditions and pins.
    #[serde(default)]
    pub identity: Option<Map<String, Value>>,
    /// `purpose` in conditions.
    #[serde(default)]
    pub purpose: Option<String>,
    /// `context.*` in conditions (string values).
    #[serde(default)]
    pub context: Option<Map<String, Value>>,
    /// The scope of loop and taint state (falls back to the subject, then gate-wide).
    #[serde(default)]
    pub session: Option<String>,
    /// `visitor` (default) or `operator`.
    #[serde(default)]
    pub surface: Surface,
    /// The call id the host gave `check` (echoed in records; never used for a decision).
    #[serde(default)]
    pub call_id: Option<String>,
}

impl CallContext {
    /// The empty context (no subject, no roles, visitor surface).
    pub const EMPTY: CallContext =
        CallContext { subject: None, roles: Vec::new(), identity: None, purpose: None, context: None, session: None, surface: Surface::Visitor, call_id: None };
}

/// The state scope used when a context names neither session nor subject.
pub const GATE_WIDE: &str = "";

impl CallContext {
    /// Parses a context from JSON text (`""` is the empty context). Unknown keys and values of
    /// the wrong type are `E_CONFIG` naming the key: a typo must not silently drop a role.
    pub fn from_json(text: &str) -> Result<CallContext, GateError> {
        if text.is_empty() {
            return Ok(CallContext::default());
        }
        let mut de = serde_json::Deserializer::from_str(text);
        let ctx: CallContext = serde_path_to_error::deserialize(&mut de).map_err(|e| {
            let path = e.path().to_string();
            GateError::Config(format!("call context at `{path}`: {}", strip_position(&e.into_inner().to_string())))
        })?;
        if let Some(c) = &ctx.context {
            if let Some((k, _)) = c.iter().find(|(_, v)| !v.is_string()) {
                return Err(GateError::Config(format!("call context at `context.{k}`: values must be strings")));
            }
        }
        Ok(ctx)
    }

    /// Where this caller's loop counters and taint live: the session, else the subject, else
    /// one gate-wide scope — never untracked.
    pub fn state_scope(&self) -> &str {
        self.session.as_deref().or(self.subject.as_deref()).unwrap_or(GATE_WIDE)
    }

    /// Whether the caller is on the operator surface.
    pub fn is_operator(&self) -> bool {
        self.surface == Surface::Operator
    }
}

fn strip_position(msg: &str) -> &str {
    match msg.find(" at line ") {
        Some(i) => &msg[..i],
        None => msg,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_refuses_typos() {
        let c = CallContext::from_json(r#"{"subject":"u1","roles":["a"],"surface":"operator","session":"s"}"#).unwrap();
        assert_eq!(c.state_scope(), "s");
        assert!(c.is_operator());
        let e = CallContext::from_json(r#"{"role":["admin"]}"#).unwrap_err();
        assert!(e.to_string().contains("role"), "{e}");
        assert!(CallContext::from_json(r#"{"context":{"a":1}}"#).is_err());
        assert_eq!(CallContext::from_json("").unwrap().state_scope(), GATE_WIDE);
    }
}
