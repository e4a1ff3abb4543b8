//! `proxy`: settings the CLI proxies read (`toolgate mcp-proxy`, `toolgate proxy`; docs/proxy.md,
//! docs/mcp-proxy.md). The core uses none of them and keeps the block as JSON; this crate reads
//! and checks it, so a typo in a proxy setting is `E_CONFIG` like any other key, and so one
//! config file serves the library and the proxies.

use schemars::JsonSchema;
use serde::Deserialize;
use toolgate_core::GateError;

/// `proxy`: who the CLI proxies act for and how they reach their upstream. Command-line flags win.
// `validate` below checks what the schema attributes state.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ProxyConfig {
    /// A fixed caller subject (`--subject` wins).
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub subject: Option<String>,
    /// Fixed caller roles (`--role` wins).
    #[serde(default)]
    pub roles: Option<Vec<String>>,
    /// A fixed session for loop and taint state (`--session` wins).
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub session: Option<String>,
    /// HTTP proxy: request headers naming the caller, lower case (defaults `x-toolgate-subject`,
    /// `x-toolgate-roles` (comma-separated), `x-toolgate-session`).
    #[serde(default)]
    pub identity_headers: Option<IdentityHeaders>,
    /// MCP proxy: tools whose changed definition is accepted and pinned anew (`true`: all).
    /// Default: none, calls to a changed tool are refused.
    #[serde(default)]
    pub accept_tool_changes: Option<AcceptToolChanges>,
    /// MCP proxy: file keeping pinned tool definitions across runs (relative to the config file).
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub pins_file: Option<String>,
    /// HTTP proxy: the model API base URL; MCP proxy with `--listen`: an HTTP MCP server to front.
    #[serde(default)]
    #[schemars(pattern(r"^https?://"))]
    pub upstream: Option<String>,
    /// HTTP proxy: upstream time limit in ms before the client gets 504.
    #[serde(default)]
    #[schemars(range(min = 1, max = 3_600_000))]
    pub timeout_ms: Option<u64>,
    /// HTTP proxy: largest request body in bytes (413 beyond).
    #[serde(default)]
    #[schemars(range(min = 1024, max = 1_073_741_824))]
    pub max_body_bytes: Option<u64>,
    /// Listeners: `Origin` values accepted besides loopback ones.
    #[serde(default)]
    pub allowed_origins: Vec<String>,
    /// Listeners: environment variable holding the bearer token clients must send.
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub bearer_token_env: Option<String>,
    /// Headers sent to the upstream (its own credentials: the model API's or the MCP server's); a
    /// `{ env }` value is read from that environment variable at start.
    #[serde(default)]
    #[schemars(extend("propertyNames" = { "pattern": "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$" }))]
    pub upstream_headers: Option<std::collections::BTreeMap<String, HeaderValue>>,
}

/// A `proxy.upstreamHeaders` value: literal text, or the name of an environment variable.
// `deny_unknown_fields` reaches the `Env` variant: `{ "env": "VAR", "x": 1 }` is an unknown key.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged, deny_unknown_fields)]
#[schemars(inline)]
pub enum HeaderValue {
    /// The header's value as written.
    Literal(#[schemars(pattern(r"^[^\r\n\u0000]*$"))] String),
    /// `{ "env": "VAR" }`: the value of `VAR` (the host refuses a missing variable).
    Env {
        /// The environment variable's name.
        #[schemars(length(min = 1))]
        env: String,
    },
}

/// `proxy.identityHeaders`: header names, lower case.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(inline)]
pub struct IdentityHeaders {
    /// Header carrying the subject.
    #[serde(default)]
    #[schemars(pattern(r"^[a-z0-9_-]+$"))]
    pub subject: Option<String>,
    /// Header carrying the roles, comma-separated.
    #[serde(default)]
    #[schemars(pattern(r"^[a-z0-9_-]+$"))]
    pub roles: Option<String>,
    /// Header carrying the session.
    #[serde(default)]
    #[schemars(pattern(r"^[a-z0-9_-]+$"))]
    pub session: Option<String>,
}

/// `proxy.acceptToolChanges`: all tools, or the named ones.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
#[schemars(inline)]
pub enum AcceptToolChanges {
    /// `true`: every changed definition is accepted (and pinned anew); `false`: none.
    All(bool),
    /// Only these tools' changes are accepted.
    Named(Vec<String>),
}

impl ProxyConfig {
    /// Checks the bounds and spellings serde cannot express: `E_CONFIG` naming the key under
    /// `proxy`.
    pub fn validate(&self) -> Result<(), GateError> {
        let bad = |key: &str, what: String| Err(GateError::Config(format!("config at `proxy.{key}`: {what}")));
        if let Some(h) = &self.identity_headers {
            for (key, name) in [("subject", &h.subject), ("roles", &h.roles), ("session", &h.session)] {
                if let Some(n) = name {
                    let token = !n.is_empty() && n.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
                    if !token {
                        return bad(&format!("identityHeaders.{key}"), format!("must be a lower-case header name (a-z, 0-9, '-', '_'), got {n:?}"));
                    }
                }
            }
        }
        if let Some(t) = self.timeout_ms {
            if !(1..=3_600_000).contains(&t) {
                return bad("timeoutMs", format!("must be between 1 and 3600000, got {t}"));
            }
        }
        if let Some(m) = self.max_body_bytes {
            if !(1024..=1 << 30).contains(&m) {
                return bad("maxBodyBytes", format!("must be between 1024 and 1073741824, got {m}"));
            }
        }
        if let Some(u) = &self.upstream {
            if !(u.starts_with("http://") || u.starts_with("https://")) {
                return bad("upstream", format!("must be an http:// or https:// URL, got {u:?}"));
            }
        }
        if let Some(h) = &self.upstream_headers {
            for (name, v) in h {
                let token = !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
                if !token {
                    return bad("upstreamHeaders", format!("{name:?} is not a header name"));
                }
                let ok = match v {
                    HeaderValue::Literal(s) => !s.bytes().any(|b| b == b'\r' || b == b'\n' || b == 0),
                    HeaderValue::Env { env } => !env.is_empty(),
                };
                if !ok {
                    return bad(&format!("upstreamHeaders.{name}"), "must be text without line breaks, or { \"env\": \"VAR\" }".into());
                }
            }
        }
        for (key, v) in [("subject", &self.subject), ("session", &self.session), ("pinsFile", &self.pins_file), ("bearerTokenEnv", &self.bearer_token_env)] {
            if v.as_deref() == Some("") {
                return bad(key, "must not be empty".into());
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::HostBlocks;

    fn message(config: &str) -> String {
        let e = HostBlocks::from_json(config).unwrap_err();
        assert_eq!(e.code(), "E_CONFIG");
        e.to_string()
    }

    #[test]
    fn proxy_section_parses_and_refuses_typos() {
        let c =
            HostBlocks::from_json(r#"{"tools":[],"proxy":{"subject":"ana","roles":["a"],"acceptToolChanges":["x"],"identityHeaders":{"subject":"x-user"}}}"#)
                .unwrap();
        assert_eq!(c.proxy.unwrap().subject.as_deref(), Some("ana"));
        assert!(message(r#"{"tools":[],"proxy":{"subjet":"ana"}}"#).contains("subjet"));
        assert!(message(r#"{"tools":[],"proxy":{"identityHeaders":{"subject":"X User"}}}"#).contains("identityHeaders.subject"));
        assert!(message(r#"{"tools":[],"proxy":{"timeoutMs":0}}"#).contains("timeoutMs"));
        assert!(HostBlocks::from_json(r#"{"tools":[],"proxy":{"acceptToolChanges":"yes"}}"#).is_err());
        assert!(message(r#"{"tools":[],"proxy":{"upstream":"ftp://x"}}"#).contains("upstream"));
        // `{ "env": … }` takes no other key, like every other config object
        assert!(HostBlocks::from_json(r#"{"tools":[],"proxy":{"upstreamHeaders":{"a":{"env":"K"},"b":"v"}}}"#).is_ok());
        assert!(HostBlocks::from_json(r#"{"tools":[],"proxy":{"upstreamHeaders":{"a":{"env":"K","fallback":"x"}}}}"#).is_err());
    }

    /// The messages are the ones the core gave when it read `proxy` itself (before the block
    /// moved here), word for word.
    #[test]
    fn messages_are_the_cores_of_old() {
        for (config, want) in [
            (r#"{"tools":[],"proxy":{"subjet":"ana"}}"#, "config at `proxy.subjet`: unknown field `subjet`, expected one of `subject`, `roles`, `session`, `identityHeaders`, `acceptToolChanges`, `pinsFile`, `upstream`, `timeoutMs`, `maxBodyBytes`, `allowedOrigins`, `bearerTokenEnv`, `upstreamHeaders`"),
            (r#"{"tools":[],"proxy":{"identityHeaders":{"subject":"X-User"}}}"#, r#"config at `proxy.identityHeaders.subject`: must be a lower-case header name (a-z, 0-9, '-', '_'), got "X-User""#),
            (r#"{"tools":[],"proxy":{"identityHeaders":{"subjct":"x"}}}"#, "config at `proxy.identityHeaders.subjct`: unknown field `subjct`, expected one of `subject`, `roles`, `session`"),
            (r#"{"tools":[],"proxy":{"timeoutMs":0}}"#, "config at `proxy.timeoutMs`: must be between 1 and 3600000, got 0"),
            (r#"{"tools":[],"proxy":{"timeoutMs":-1}}"#, "config at `proxy.timeoutMs`: invalid value: integer `-1`, expected u64"),
            (r#"{"tools":[],"proxy":{"maxBodyBytes":10}}"#, "config at `proxy.maxBodyBytes`: must be between 1024 and 1073741824, got 10"),
            (r#"{"tools":[],"proxy":{"acceptToolChanges":"yes"}}"#, "config at `proxy.acceptToolChanges`: data did not match any variant of untagged enum AcceptToolChanges"),
            (r#"{"tools":[],"proxy":{"upstream":"ftp://x"}}"#, r#"config at `proxy.upstream`: must be an http:// or https:// URL, got "ftp://x""#),
            (r#"{"tools":[],"proxy":{"upstreamHeaders":{"a":{"env":"K","fallback":"x"}}}}"#, "config at `proxy.upstreamHeaders.a`: data did not match any variant of untagged enum HeaderValue"),
            (r#"{"tools":[],"proxy":{"upstreamHeaders":{"a b":"v"}}}"#, r#"config at `proxy.upstreamHeaders`: "a b" is not a header name"#),
            (r#"{"tools":[],"proxy":{"upstreamHeaders":{"a":"v\nx"}}}"#, r#"config at `proxy.upstreamHeaders.a`: must be text without line breaks, or { "env": "VAR" }"#),
            (r#"{"tools":[],"proxy":{"upstreamHeaders":{"a":{"env":""}}}}"#, r#"config at `proxy.upstreamHeaders.a`: must be text without line breaks, or { "env": "VAR" }"#),
            (r#"{"tools":[],"proxy":{"subject":""}}"#, "config at `proxy.subject`: must not be empty"),
            (r#"{"tools":[],"proxy":{"pinsFile":""}}"#, "config at `proxy.pinsFile`: must not be empty"),
            (r#"{"tools":[],"proxy":5}"#, "config at `proxy`: invalid type: integer `5`, expected struct ProxyConfig"),
            (r#"{"tools":[],"proxy":"x"}"#, r#"config at `proxy`: invalid type: string "x", expected struct ProxyConfig"#),
            (r#"{"tools":[],"proxy":{"roles":"a"}}"#, r#"config at `proxy.roles`: invalid type: string "a", expected a sequence"#),
            (r#"{"proxy":{"timeoutMs":0},"tools":[{"name":"a"}]}"#, "config at `proxy.timeoutMs`: must be between 1 and 3600000, got 0"),
        ] {
            assert!(toolgate_core::Gate::from_json(config).is_ok(), "the core leaves `proxy` to the host: {config}");
            assert_eq!(message(config), want, "{config}");
        }
        // what the core accepted as a proxy block, this crate accepts
        for config in [r#"{"tools":[],"proxy":null}"#, r#"{"tools":[],"proxy":{}}"#, r#"{"tools":[],"proxy":[]}"#, r#"{"tools":[]}"#] {
            assert!(crate::check(config).is_ok(), "{config}");
        }
    }
}
