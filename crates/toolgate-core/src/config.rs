//! The config a gate is built from (SPEC.md "Config"). Unknown keys are errors.
//!
//! Keys of the contract that this version does not enforce yet (policy, confirmation, loop,
//! taint, receipts, audit …) are refused with `E_CONFIG` rather than silently ignored: a gate
//! must never look stricter than it is.

use serde::Deserialize;
use serde_json::Value;

use crate::error::GateError;
use crate::json::parse::{Limits, MAX_DEPTH_CEILING};

/// A whole gate config.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Config {
    /// Format version; only `1` exists.
    #[serde(default)]
    pub version: Option<u64>,
    /// The declared tools. Calls to anything else are refused.
    #[serde(default)]
    pub tools: Vec<ToolConfig>,
    /// Size and depth bounds for arguments.
    #[serde(default)]
    pub limits: LimitsConfig,
    /// Let `__proto__` / `constructor.prototype` keys through as plain data.
    #[serde(default)]
    pub allow_proto_keys: bool,
}

/// One declared tool.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ToolConfig {
    /// The exact name a model must call (no case folding, no normalization).
    pub name: String,
    /// Informational; kept so MCP / OpenAI tool definitions can be pasted as they are.
    #[serde(default)]
    pub description: Option<String>,
    /// Informational (MCP).
    #[serde(default)]
    pub title: Option<String>,
    /// Informational (MCP tool annotations); never used for a decision.
    #[serde(default)]
    pub annotations: Option<Value>,
    /// JSON Schema of the arguments; absent means "an object, anything in it".
    #[serde(default)]
    pub input_schema: Option<Value>,
    /// Strict mode: validate only, never repair.
    #[serde(default)]
    pub destructive: bool,
}

/// Bounds on arguments, applied before anything else reads them.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LimitsConfig {
    /// Deepest nesting of arrays and objects; default 64, at most 120.
    #[serde(default = "default_depth")]
    pub max_depth: usize,
    /// Largest arguments text in bytes; default 1 MiB.
    #[serde(default = "default_bytes")]
    pub max_argument_bytes: usize,
    /// Largest whole turn `guard` reads, in bytes; default 8 MiB.
    #[serde(default = "default_payload_bytes")]
    pub max_payload_bytes: usize,
}

fn default_payload_bytes() -> usize {
    8 << 20
}

fn default_depth() -> usize {
    64
}
fn default_bytes() -> usize {
    1 << 20
}

impl Default for LimitsConfig {
    fn default() -> Self {
        LimitsConfig { max_depth: default_depth(), max_argument_bytes: default_bytes(), max_payload_bytes: default_payload_bytes() }
    }
}

impl Config {
    /// Parses a config from JSON text, naming the path of any problem.
    pub fn from_json(text: &str) -> Result<Config, GateError> {
        let mut de = serde_json::Deserializer::from_str(text);
        let config: Config = serde_path_to_error::deserialize(&mut de).map_err(|e| {
            let path = e.path().to_string();
            let inner = e.into_inner();
            let msg = inner.to_string();
            let msg = match msg.find(" at line ") {
                Some(i) if path != "." => msg[..i].to_string(),
                _ => msg,
            };
            if path == "." {
                GateError::Config(format!("config: {msg}"))
            } else {
                GateError::Config(format!("config at `{path}`: {msg}"))
            }
        })?;
        config.check()?;
        Ok(config)
    }

    /// The parse limits this config asks for.
    pub fn parse_limits(&self) -> Limits {
        Limits {
            max_depth: self.limits.max_depth,
            max_bytes: self.limits.max_argument_bytes,
            allow_proto_keys: self.allow_proto_keys,
        }
    }

    fn check(&self) -> Result<(), GateError> {
        if let Some(v) = self.version {
            if v != 1 {
                return Err(GateError::Config(format!(
                    "config at `version`: unsupported version {v} (this toolgate reads version 1)"
                )));
            }
        }
        let l = &self.limits;
        if l.max_depth == 0 || l.max_depth > MAX_DEPTH_CEILING {
            return Err(GateError::Config(format!(
                "config at `limits.maxDepth`: must be between 1 and {MAX_DEPTH_CEILING}, got {}",
                l.max_depth
            )));
        }
        if l.max_argument_bytes == 0 {
            return Err(GateError::Config("config at `limits.maxArgumentBytes`: must be at least 1".into()));
        }
        if l.max_payload_bytes == 0 {
            return Err(GateError::Config("config at `limits.maxPayloadBytes`: must be at least 1".into()));
        }
        let mut seen = std::collections::HashSet::new();
        for (i, t) in self.tools.iter().enumerate() {
            if t.name.is_empty() {
                return Err(GateError::Config(format!("config at `tools[{i}].name`: must not be empty")));
            }
            if !seen.insert(t.name.as_str()) {
                return Err(GateError::Config(format!(
                    "config at `tools[{i}].name`: tool `{}` is declared twice",
                    t.name
                )));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_keys_are_named_with_their_path() {
        let e = Config::from_json(r#"{"tools":[{"name":"a","inputSchem":{}}]}"#).unwrap_err();
        assert_eq!(e.code(), "E_CONFIG");
        assert!(e.to_string().contains("tools[0]"), "{e}");
        assert!(e.to_string().contains("inputSchem"), "{e}");
    }

    #[test]
    fn unimplemented_contract_keys_fail_closed() {
        let e = Config::from_json(r#"{"tools":[],"policy":{"rules":[]}}"#).unwrap_err();
        assert!(e.to_string().contains("policy"), "{e}");
    }

    #[test]
    fn duplicate_tools_and_bad_limits_are_refused() {
        assert!(Config::from_json(r#"{"tools":[{"name":"a"},{"name":"a"}]}"#).is_err());
        assert!(Config::from_json(r#"{"limits":{"maxDepth":0}}"#).is_err());
        assert!(Config::from_json(r#"{"version":2}"#).is_err());
        let c = Config::from_json(r#"{"version":1,"limits":{"maxDepth":8}}"#).unwrap();
        assert_eq!(c.parse_limits().max_depth, 8);
        assert_eq!(c.parse_limits().max_bytes, 1 << 20);
    }
}
