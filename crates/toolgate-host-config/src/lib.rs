//! toolgate-host-config: the host blocks of a toolgate config — settings only the hosts read
//! (today `proxy`, read by the CLI proxies) — with their types, their share of the config's JSON
//! Schema, and their checks (docs/architecture.md, "Host blocks").
//!
//! The core (`toolgate-core`) keeps a host block as JSON, unread and unchecked, and does not
//! depend on this crate. A binding checks the blocks with [`check`] right after the core compiled
//! a config, so one config file serves every consumer and a typo in a host block is `E_CONFIG`
//! with the message the core would give for any other key.
//!
//! ```
//! let text = r#"{"tools":[],"proxy":{"subjet":"ana"}}"#;
//! assert!(toolgate_core::Gate::from_json(text).is_ok());
//! let e = toolgate_host_config::check(text).unwrap_err();
//! assert_eq!(e.code(), "E_CONFIG");
//! assert!(e.to_string().starts_with("config at `proxy.subjet`: unknown field `subjet`"));
//! ```

#![warn(missing_docs)]

pub mod proxy;

use schemars::JsonSchema;
use serde::Deserialize;
use toolgate_core::GateError;

pub use proxy::ProxyConfig;

/// The host blocks of a config, read from the whole config text (the core's keys are skipped
/// here: the core reads them). Each field is a key of the config's root object; its doc comment
/// is that key's description in the generated schema.
// Not `deny_unknown_fields`: every other root key is the core's. The schema generator puts these
// properties in place of the core's placeholders for them.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HostBlocks {
    /// Settings of the CLI proxies (`toolgate mcp-proxy`, `toolgate proxy`); command-line flags
    /// win. The library ignores them.
    #[serde(default)]
    pub proxy: Option<ProxyConfig>,
}

impl HostBlocks {
    /// Reads and checks the host blocks of config JSON text. `E_CONFIG` naming the key and what
    /// is wrong, worded as the core words its own keys (`toolgate_core::config::read_json`).
    /// Call it after the core compiled the same text: the core reports a text that is not JSON,
    /// and a problem in its own keys, first.
    pub fn from_json(config_json: &str) -> Result<HostBlocks, GateError> {
        let blocks: HostBlocks = toolgate_core::config::read_json(config_json)?;
        if let Some(p) = &blocks.proxy {
            p.validate()?;
        }
        Ok(blocks)
    }
}

/// Checks the host blocks of config JSON text the core accepted: `Ok` when each is absent or
/// well formed, else `E_CONFIG` naming the key ([`HostBlocks::from_json`]). What the bindings
/// call when they build a gate.
pub fn check(config_json: &str) -> Result<(), GateError> {
    HostBlocks::from_json(config_json).map(|_| ())
}
