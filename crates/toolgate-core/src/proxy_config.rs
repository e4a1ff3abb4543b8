//! `proxy`: settings the CLI proxies read (`toolgate mcp-proxy`, `toolgate proxy`). The core
//! uses none of them; it parses them so a typo in a proxy setting is `E_CONFIG` like any other
//! key, and so one config file serves the library and the proxies.

use serde::Deserialize;

use crate::error::GateError;

/// `proxy`: who the proxies act for and how they reach their upstream.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ProxyConfig {
    /// A fixed caller subject (the CLI's `--subject` wins).
    #[serde(default)]
    pub subject: Option<String>,
    /// Fixed caller roles (the CLI's `--role` values win).
    #[serde(default)]
    pub roles: Option<Vec<String>>,
    /// A fixed session for loop and taint state (the CLI's `--session` wins).
    #[serde(default)]
    pub session: Option<String>,
    /// HTTP proxy: the request headers naming the caller (defaults `x-toolgate-subject`,
    /// `x-toolgate-roles`, `x-toolgate-session`).
    #[serde(default)]
    pub identity_headers: Option<IdentityHeaders>,
    /// MCP proxy: tools whose changed definition is accepted (`true`: every tool).
    #[serde(default)]
    pub accept_tool_changes: Option<AcceptToolChanges>,
    /// MCP proxy: where pinned tool definitions are kept across runs (relative to the config).
    #[serde(default)]
    pub pins_file: Option<String>,
    /// HTTP proxy: the model API's base URL; MCP proxy with `--listen`: an HTTP MCP server.
    #[serde(default)]
    pub upstream: Option<String>,
    /// HTTP proxy: how long the upstream may take before the client gets 504 (ms).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// HTTP proxy: the largest request body read (bytes); larger ones get 413.
    #[serde(default)]
    pub max_body_bytes: Option<u64>,
    /// Listeners: `Origin` values accepted besides loopback ones.
    #[serde(default)]
    pub allowed_origins: Vec<String>,
    /// Listeners: the environment variable holding the bearer token clients must send.
    #[serde(default)]
    pub bearer_token_env: Option<String>,
    /// Headers the proxies send to their upstream (the model API's or MCP server's own
    /// credentials); a `{ "env": "VAR" }` value is read from that variable at start.
    #[serde(default)]
    pub upstream_headers: Option<std::collections::BTreeMap<String, HeaderValue>>,
}

/// A `proxy.upstreamHeaders` value: literal text, or the name of an environment variable.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum HeaderValue {
    /// The header's value as written.
    Literal(String),
    /// `{ "env": "VAR" }`: the value of `VAR` (the host refuses a missing variable).
    Env {
        /// The environment variable's name.
        env: String,
    },
}

/// `proxy.identityHeaders`: header names, lower case.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct IdentityHeaders {
    /// Header carrying the subject.
    #[serde(default)]
    pub subject: Option<String>,
    /// Header carrying the roles, comma-separated.
    #[serde(default)]
    pub roles: Option<String>,
    /// Header carrying the session.
    #[serde(default)]
    pub session: Option<String>,
}

/// `proxy.acceptToolChanges`: all tools, or the named ones.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum AcceptToolChanges {
    /// `true`: every changed definition is accepted (and pinned anew); `false`: none.
    All(bool),
    /// Only these tools' changes are accepted.
    Named(Vec<String>),
}

impl ProxyConfig {
    /// Checks the bounds and spellings serde cannot express.
    pub(crate) fn validate(&self) -> Result<(), GateError> {
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
    use crate::config::Config;

    #[test]
    fn proxy_section_parses_and_refuses_typos() {
        let c = Config::from_json(r#"{"tools":[],"proxy":{"subject":"ana","roles":["a"],"acceptToolChanges":["x"],"identityHeaders":{"subject":"x-user"}}}"#).unwrap();
        assert_eq!(c.proxy.unwrap().subject.as_deref(), Some("ana"));
        assert!(Config::from_json(r#"{"tools":[],"proxy":{"subjet":"ana"}}"#).unwrap_err().to_string().contains("subjet"));
        assert!(Config::from_json(r#"{"tools":[],"proxy":{"identityHeaders":{"subject":"X User"}}}"#).unwrap_err().to_string().contains("identityHeaders.subject"));
        assert!(Config::from_json(r#"{"tools":[],"proxy":{"timeoutMs":0}}"#).unwrap_err().to_string().contains("timeoutMs"));
        assert!(Config::from_json(r#"{"tools":[],"proxy":{"acceptToolChanges":"yes"}}"#).is_err());
        assert!(Config::from_json(r#"{"tools":[],"proxy":{"upstream":"ftp://x"}}"#).unwrap_err().to_string().contains("upstream"));
    }
}
