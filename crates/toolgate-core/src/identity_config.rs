//! `identity`: how the servers (and `verifyCaller` in `toolgate/identity`) learn who is
//! calling. The core never verifies a token (no I/O, no clock-dependent crypto here); it parses
//! the block so a typo is `E_CONFIG` like any other key and one config file serves the library
//! and the servers. See docs/identity.md.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::error::GateError;

/// `identity`: callers are identified by a verified JWT bearer token.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct IdentityConfig {
    /// JWT bearer tokens (OAuth 2.1 access tokens).
    pub jwt: JwtConfig,
}

/// `identity.jwt`: what makes a token valid and how its claims become a `CallContext`.
// `validate` below checks what the schema attributes state. `not`: exactly one of `jwksUrl` and
// `publicKeys`, said as "not (both, or neither)" since the TypeScript generator reads no `not`
// (an `anyOf` of `required` lists would turn the interface into an open intersection).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(
    rename = "JwtIdentityConfig",
    extend("not" = { "anyOf": [
        { "required": ["jwksUrl", "publicKeys"] },
        { "not": { "anyOf": [{ "required": ["jwksUrl"] }, { "required": ["publicKeys"] }] } }
    ] })
)]
pub struct JwtConfig {
    /// The `iss` every token must carry (also the authorization server the protected-resource
    /// metadata names).
    #[schemars(length(min = 1))]
    pub issuer: String,
    /// The `aud` a token must carry (one of these).
    pub audience: Audience,
    /// The issuer's JWKS URL (https; http only on loopback). Exactly one of `jwksUrl` and
    /// `publicKeys`.
    #[serde(default)]
    #[schemars(pattern(r"^(https://|http://(127\.0\.0\.1|localhost|\[::1\])([:/]|$))"))]
    pub jwks_url: Option<String>,
    /// Verifying keys: JWK objects or PEM (SPKI) strings.
    #[serde(default)]
    #[schemars(schema_with = "public_keys_schema")]
    pub public_keys: Option<Vec<Value>>,
    /// Accepted signature algorithms (default `['EdDSA', 'ES256', 'RS256']`); asymmetric only
    /// (never `none` or HMAC).
    #[serde(default)]
    #[schemars(schema_with = "algorithms_schema", extend("default" = ["EdDSA", "ES256", "RS256"]))]
    pub algorithms: Option<Vec<String>>,
    /// Claim holding the subject (default `sub`); dotted paths reach nested claims.
    #[serde(default)]
    #[schemars(length(min = 1), extend("default" = "sub"))]
    pub subject_claim: Option<String>,
    /// Claim holding the roles (default `roles`): an array, or a space/comma-separated string
    /// (`realm_access.roles` for Keycloak).
    #[serde(default)]
    #[schemars(length(min = 1), extend("default" = "roles"))]
    pub roles_claim: Option<String>,
    /// `identity.<name>` facts taken from these claim paths.
    #[serde(default)]
    #[schemars(schema_with = "identity_claims_schema")]
    pub identity_claims: Option<BTreeMap<String, String>>,
    /// Leeway for `exp` / `nbf` / `iat`, seconds (default 30, at most 300).
    #[serde(default)]
    #[schemars(range(max = 300), extend("default" = 30))]
    pub clock_tolerance_seconds: Option<u64>,
}

fn public_keys_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "array",
        "minItems": 1,
        "items": {
            "anyOf": [
                { "type": "object" },
                { "type": "string", "pattern": "-----BEGIN PUBLIC KEY-----" }
            ]
        }
    })
}

fn algorithms_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "array",
        "minItems": 1,
        "items": { "enum": ASYMMETRIC_ALGORITHMS }
    })
}

fn identity_claims_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "object",
        "propertyNames": { "minLength": 1 },
        "additionalProperties": { "type": "string", "minLength": 1 }
    })
}

/// `identity.jwt.audience`: one value or several.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
#[schemars(inline)]
pub enum Audience {
    /// A single accepted audience.
    One(#[schemars(length(min = 1))] String),
    /// Any of these.
    Many(#[schemars(length(min = 1), inner(length(min = 1)))] Vec<String>),
}

/// Signature algorithms a token may use: asymmetric only (an HMAC token "signed" with a public
/// key, and `none`, are refused by construction).
pub const ASYMMETRIC_ALGORITHMS: [&str; 12] = ["EdDSA", "Ed25519", "ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256K"];

impl IdentityConfig {
    /// Checks what serde cannot express: exactly one key source, known asymmetric algorithms,
    /// non-empty names, an https (or loopback http) JWKS URL, bounded leeway.
    pub(crate) fn validate(&self) -> Result<(), GateError> {
        let bad = |key: &str, what: String| Err(GateError::Config(format!("config at `identity.jwt.{key}`: {what}")));
        let j = &self.jwt;
        if j.issuer.is_empty() {
            return bad("issuer", "must not be empty".into());
        }
        match &j.audience {
            Audience::One(a) if a.is_empty() => return bad("audience", "must not be empty".into()),
            Audience::Many(v) if v.is_empty() || v.iter().any(String::is_empty) => {
                return bad("audience", "must be a non-empty string or a non-empty list of non-empty strings".into())
            }
            _ => {}
        }
        match (&j.jwks_url, &j.public_keys) {
            (Some(_), Some(_)) | (None, None) => return bad("jwksUrl", "exactly one of `jwksUrl` and `publicKeys` must be set".into()),
            (Some(u), None) => {
                let loopback = ["http://127.0.0.1", "http://localhost", "http://[::1]"]
                    .iter()
                    .any(|p| u.strip_prefix(p).is_some_and(|rest| rest.is_empty() || rest.starts_with(':') || rest.starts_with('/')));
                if !u.starts_with("https://") && !loopback {
                    return bad("jwksUrl", format!("must be an https:// URL (http:// only on loopback), got {u:?}"));
                }
            }
            (None, Some(keys)) => {
                if keys.is_empty() {
                    return bad("publicKeys", "must hold at least one key".into());
                }
                for (i, k) in keys.iter().enumerate() {
                    if !(k.is_object() || k.as_str().is_some_and(|s| s.contains("-----BEGIN PUBLIC KEY-----"))) {
                        return bad(&format!("publicKeys[{i}]"), "must be a JWK object or a PEM public key (-----BEGIN PUBLIC KEY-----)".into());
                    }
                }
            }
        }
        if let Some(algs) = &j.algorithms {
            if algs.is_empty() {
                return bad("algorithms", "must not be empty".into());
            }
            for a in algs {
                if !ASYMMETRIC_ALGORITHMS.contains(&a.as_str()) {
                    return bad("algorithms", format!("{a:?} is not an accepted asymmetric algorithm (one of {})", ASYMMETRIC_ALGORITHMS.join(", ")));
                }
            }
        }
        for (key, v) in [("subjectClaim", &j.subject_claim), ("rolesClaim", &j.roles_claim)] {
            if v.as_deref() == Some("") {
                return bad(key, "must not be empty".into());
            }
        }
        if let Some(m) = &j.identity_claims {
            for (name, path) in m {
                if name.is_empty() || path.is_empty() {
                    return bad("identityClaims", format!("names and claim paths must not be empty ({name:?}: {path:?})"));
                }
            }
        }
        if let Some(t) = j.clock_tolerance_seconds {
            if t > 300 {
                return bad("clockToleranceSeconds", format!("must be at most 300, got {t}"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::config::Config;

    fn cfg(jwt: &str) -> Result<Config, crate::GateError> {
        Config::from_json(&format!(r#"{{"tools":[],"identity":{{"jwt":{jwt}}}}}"#))
    }

    #[test]
    fn identity_block_parses_and_refuses_what_would_fail_open() {
        assert!(cfg(r#"{"issuer":"https://idp","audience":"api","jwksUrl":"https://idp/jwks"}"#).is_ok());
        assert!(cfg(r#"{"issuer":"https://idp","audience":["a","b"],"publicKeys":[{"kty":"OKP"}],"rolesClaim":"realm_access.roles"}"#).is_ok());
        assert!(cfg(r#"{"issuer":"https://idp","audience":"api","jwksUrl":"http://127.0.0.1:8080/jwks"}"#).is_ok());
        let e = |j: &str| cfg(j).unwrap_err().to_string();
        assert!(e(r#"{"issuer":"https://idp","audience":"api"}"#).contains("exactly one"));
        assert!(e(r#"{"issuer":"https://idp","audience":"api","jwksUrl":"http://idp/jwks"}"#).contains("jwksUrl"));
        assert!(e(r#"{"issuer":"https://idp","audience":"api","jwksUrl":"http://127.0.0.1.evil/jwks"}"#).contains("jwksUrl"));
        assert!(e(r#"{"issuer":"https://idp","audience":"api","jwksUrl":"https://x","algorithms":["HS256"]}"#).contains("HS256"));
        assert!(e(r#"{"issuer":"https://idp","audience":"api","jwksUrl":"https://x","algorithms":["none"]}"#).contains("none"));
        assert!(e(r#"{"issuer":"https://idp","audience":"api","jwksUrl":"https://x","subjectClam":"sub"}"#).contains("subjectClam"));
        assert!(e(r#"{"issuer":"","audience":"api","jwksUrl":"https://x"}"#).contains("issuer"));
        assert!(e(r#"{"issuer":"i","audience":[],"jwksUrl":"https://x"}"#).contains("audience"));
        assert!(e(r#"{"issuer":"i","audience":"a","publicKeys":["not a key"]}"#).contains("publicKeys[0]"));
    }
}
