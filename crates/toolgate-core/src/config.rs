//! The config a gate is built from (README "Config"; schema/toolgate.config.schema.json). Unknown keys are errors.
//!
//! Unknown keys are refused with `E_CONFIG`, never silently ignored: a gate must never look
//! stricter than it is.

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
    /// The taint lattice, lowest first (tool `output.label` / `sink.maxLabel` name these).
    #[serde(default)]
    pub labels: Vec<String>,
    /// Rules and personas; absent means "schema gate only": every declared tool is allowed.
    #[serde(default)]
    pub policy: Option<PolicyConfig>,
    /// The gate-wide loop guard; absent means no loop guard unless a tool sets its own.
    #[serde(default, rename = "loop")]
    pub loop_guard: Option<LoopConfig>,
    /// Confirm-before-write settings.
    #[serde(default)]
    pub confirm: ConfirmConfig,
    /// Where loop counters, taint, rate counters and confirmation tokens live: bounds of the
    /// in-memory store, or a shared Redis (docs/state.md).
    #[serde(default)]
    pub state: StateConfig,
    /// Calls per caller per window (`rateLimits`); empty means none.
    #[serde(default)]
    pub rate_limits: Vec<RateLimitConfig>,
    /// `enforce` (default) or `shadow`: policy-level refusals recorded but let through.
    #[serde(default)]
    pub mode: Mode,
    /// Signed receipts for allowed calls; absent means none.
    #[serde(default)]
    pub receipts: Option<ReceiptsConfig>,
    /// The audit log; absent means no records.
    #[serde(default)]
    pub audit: Option<AuditConfig>,
    /// Settings of the CLI proxies (read by the host only; parsed here so typos are errors).
    #[serde(default)]
    pub proxy: Option<crate::proxy_config::ProxyConfig>,
    /// Who is calling, from a verified bearer token (read by the host only; docs/identity.md).
    #[serde(default)]
    pub identity: Option<crate::identity_config::IdentityConfig>,
    /// Let keys that are equal under Unicode case folding share one object (`{"path":…,"PATH":…}`);
    /// default false: such arguments are `bad_arguments`, since runtimes that bind JSON
    /// case-insensitively may take the twin the gate did not check.
    #[serde(default)]
    pub allow_case_twin_keys: bool,
    /// How resources are matched gate-wide (a tool's own `resources` wins).
    #[serde(default)]
    pub resources: ResourcesConfig,
    /// Offline schema documents by URI (`schemas`): a tool schema's `$ref` to one of these
    /// URIs resolves to it without the network; any other remote `$ref` is an error. Checked
    /// and bounded when the gate is built (`schema/registry.rs`; docs/json-schema.md).
    #[serde(default)]
    pub schemas: serde_json::Map<String, Value>,
}

/// `resources` (gate-wide, or per tool): how resolved resources are compared with rule globs.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ResourcesConfig {
    /// Compare resources and rule `resources` globs case-insensitively (Unicode simple case
    /// folding), for hosts whose filesystem or store ignores case: `reports/PRIVATE/x` is then
    /// covered by a deny on `file:reports/private/**`.
    #[serde(default)]
    pub case_insensitive: Option<bool>,
}

/// Whether policy-level refusals are enforced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Refusals refuse.
    #[default]
    Enforce,
    /// `deny_rule`, `no_rule`, `engine`, `loop` and `taint` are recorded (`shadow`, `wouldBe`)
    /// but the call is let through; unknown tools and bad arguments are refused in every mode.
    Shadow,
}

/// `receipts`: where the signing key comes from (the host resolves `privateKeyEnv` and
/// `privateKeyFile` into `privateKey` before the core sees the config; none of the three means
/// a key generated at start).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ReceiptsConfig {
    /// Name of the environment variable holding the seed (resolved by the host).
    #[serde(default)]
    pub private_key_env: Option<String>,
    /// File holding the seed (resolved by the host, relative to the config file).
    #[serde(default)]
    pub private_key_file: Option<String>,
    /// The ed25519 seed, base64url.
    #[serde(default)]
    pub private_key: Option<String>,
    /// Receipt lifetime (default 300 s).
    #[serde(default = "default_ttl")]
    pub ttl_seconds: u64,
}

/// What happens to a call when the audit log cannot record it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OnFailure {
    /// Refuse calls (`audit_unavailable`) until the sink recovers (default).
    #[default]
    Deny,
    /// Let calls through; every dropped record is counted.
    Allow,
}

/// `audit`: the decision log.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AuditConfig {
    /// Append records to this JSONL file (written by the host; relative to the config file).
    #[serde(default)]
    pub jsonl: Option<String>,
    /// Also write records to standard output (host).
    #[serde(default)]
    pub stdout: bool,
    /// Start a new file past this size, continuing the hash chain (host; default: never).
    #[serde(default)]
    pub max_file_bytes: Option<u64>,
    /// Records hold the (repaired) arguments themselves; default false (only their hash).
    #[serde(default)]
    pub include_arguments: bool,
    /// Argument keys whose values are replaced by `"[redacted]"` at any depth.
    #[serde(default)]
    pub redact: Vec<String>,
    /// `deny` (default) or `allow`.
    #[serde(default)]
    pub on_failure: OnFailure,
    /// Records held before the host writes them out (default 65536).
    #[serde(default = "default_buffer")]
    pub buffer_records: usize,
    /// The environment variable holding the audit chain's HMAC-SHA-256 key (host): each
    /// record's link is then keyed, so a forger without the key cannot re-chain an edited log.
    #[serde(default)]
    pub chain_key_env: Option<String>,
    /// A file holding the chain key (host; relative to the config file). At most one of the two.
    #[serde(default)]
    pub chain_key_file: Option<String>,
}

fn default_buffer() -> usize {
    65_536
}

/// `policy`: personas and rules. Present means deny by default.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PolicyConfig {
    /// Named caller classes; the first whose `when` holds is the caller's persona.
    #[serde(default)]
    pub personas: Vec<PersonaConfig>,
    /// Allow and deny rules; any matching deny wins, else some matching allow is needed.
    #[serde(default)]
    pub rules: Vec<RuleConfig>,
}

/// One persona.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PersonaConfig {
    /// The name rules target in `personas`.
    pub name: String,
    /// A condition over the caller only (roles, identity, purpose, context, subject, now).
    pub when: String,
}

/// Whether a rule allows or denies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Effect {
    /// Lets a matching call through (unless a deny also matches).
    Allow,
    /// Refuses a matching call; final.
    Deny,
}

/// One policy rule. Every present selector must match; an absent selector matches anything.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RuleConfig {
    /// A name for messages and audit records (default `rules[i]`).
    #[serde(default)]
    pub id: Option<String>,
    /// Informational.
    #[serde(default)]
    pub description: Option<String>,
    /// allow or deny.
    pub effect: Effect,
    /// The caller holds at least one of these roles.
    #[serde(default)]
    pub roles: Option<Vec<String>>,
    /// The caller's persona is one of these.
    #[serde(default)]
    pub personas: Option<Vec<String>>,
    /// The caller's subject matches one of these globs.
    #[serde(default)]
    pub subjects: Option<Vec<String>>,
    /// The tool name matches one of these globs.
    #[serde(default)]
    pub tools: Option<Vec<String>>,
    /// The tool's action matches one of these globs.
    #[serde(default)]
    pub actions: Option<Vec<String>>,
    /// The resolved resource matches one of these globs (`{subject}` is the caller).
    #[serde(default)]
    pub resources: Option<Vec<String>>,
    /// A condition (docs/conditions.md) that must hold too.
    #[serde(default)]
    pub when: Option<String>,
    /// On an allow rule: `false` lets `writes` tools run without confirmation, `true` asks for
    /// confirmation even for tools that do not write.
    #[serde(default)]
    pub confirm: Option<bool>,
}

/// Loop guard thresholds.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LoopConfig {
    /// Identical allowed calls tolerated within the window; the next one is refused.
    pub max_identical: u32,
    /// The window, in seconds.
    pub window_seconds: u64,
}

/// `confirm`.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ConfirmConfig {
    /// How long a confirmation token stays valid (default 300 s).
    #[serde(default = "default_ttl")]
    pub ttl_seconds: u64,
}

impl Default for ConfirmConfig {
    fn default() -> Self {
        ConfirmConfig { ttl_seconds: default_ttl() }
    }
}

fn default_ttl() -> u64 {
    300
}

/// `state`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct StateConfig {
    /// Sessions kept in memory (LRU); an evicted session counts as tainted at the top label.
    #[serde(default = "default_sessions")]
    pub max_sessions: usize,
    /// Keep state in Redis instead, shared by every process using the same URL and prefix. Read
    /// by the binding, which builds the store; the core only checks the shape.
    #[serde(default)]
    pub redis: Option<RedisConfig>,
}

impl Default for StateConfig {
    fn default() -> Self {
        StateConfig { max_sessions: default_sessions(), redis: None }
    }
}

/// `state.redis`: a shared Redis store (docs/state.md).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RedisConfig {
    /// `redis://[user:password@]host[:port][/db]` (or `rediss://`, `redis+unix://`).
    pub url: String,
    /// Prefix of every key (default `toolgate:`); gates sharing state use the same one.
    #[serde(default = "default_key_prefix")]
    pub key_prefix: String,
    /// Connect, read and write timeout of each round trip, in ms (default 50).
    #[serde(default = "default_redis_timeout")]
    pub timeout_ms: u64,
}

impl RedisConfig {
    /// The bounds the JSON Schema states: a `redis://`, `rediss://`, `redis+unix://` or `unix://`
    /// URL, a prefix of at most 256 bytes, a timeout of 1 to 60000 ms.
    pub fn check(&self) -> Result<(), GateError> {
        let schemes = ["redis://", "rediss://", "redis+unix://", "unix://"];
        if !schemes.iter().any(|s| self.url.starts_with(s)) {
            return Err(GateError::Config("config at `state.redis.url`: expected a redis://, rediss://, redis+unix:// or unix:// URL".into()));
        }
        if self.key_prefix.len() > 256 {
            return Err(GateError::Config("config at `state.redis.keyPrefix`: at most 256 bytes".into()));
        }
        if self.timeout_ms == 0 || self.timeout_ms > 60_000 {
            return Err(GateError::Config(format!("config at `state.redis.timeoutMs`: expected 1 to 60000, got {}", self.timeout_ms)));
        }
        Ok(())
    }
}

fn default_key_prefix() -> String {
    "toolgate:".to_owned()
}

fn default_redis_timeout() -> u64 {
    50
}

/// Who a rate limit counts calls per.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RatePer {
    /// Per `subject` (a caller without one is counted in its session's scope).
    Subject,
    /// Per loop/taint scope: the session, else the subject, else gate-wide.
    Session,
}

/// One `rateLimits` entry: at most `max` allowed calls of the matching tools per caller in each
/// window of `windowSeconds` (fixed windows aligned on the Unix epoch).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RateLimitConfig {
    /// Tool-name globs the limit covers (one count shared by all of them).
    pub tools: Vec<String>,
    /// Whom calls are counted per.
    pub per: RatePer,
    /// Allowed calls per window (at least 1).
    pub max: u32,
    /// The window, in seconds (at least 1).
    pub window_seconds: u64,
}

fn default_sessions() -> usize {
    100_000
}

/// Where a tool may be called from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Surface {
    /// Any caller (default).
    #[default]
    Visitor,
    /// Only callers whose context says `surface: "operator"`.
    Operator,
}

/// `args.<name>` of a tool: constraints the policy puts on one argument.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ArgConfig {
    /// The argument (a string or number), when present, must match this glob.
    #[serde(default)]
    pub glob: Option<String>,
    /// `"subject"` or `"identity.<fact>"`: the gate sets the argument from the caller.
    #[serde(default)]
    pub pin: Option<String>,
}

/// `output` of a tool.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct OutputConfig {
    /// The label an allowed call raises the session's taint to.
    pub label: String,
}

/// `sink` of a tool.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SinkConfig {
    /// The highest taint this tool may run under.
    pub max_label: String,
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
    /// Needs confirmation (`gate.confirm`) unless a matching allow rule sets `confirm: false`.
    #[serde(default)]
    pub writes: bool,
    /// The policy action (default: the tool name).
    #[serde(default)]
    pub action: Option<String>,
    /// A resource template over the arguments (`file:{path*}`).
    #[serde(default)]
    pub resource: Option<String>,
    /// Per-argument globs and pins.
    #[serde(default)]
    pub args: Option<std::collections::BTreeMap<String, ArgConfig>>,
    /// `operator`: never callable from the visitor surface.
    #[serde(default)]
    pub surface: Surface,
    /// Loop guard thresholds for this tool (override the gate's).
    #[serde(default, rename = "loop")]
    pub loop_guard: Option<LoopConfig>,
    /// What an allowed call taints the session with.
    #[serde(default)]
    pub output: Option<OutputConfig>,
    /// The taint this tool may run under.
    #[serde(default)]
    pub sink: Option<SinkConfig>,
    /// This tool's mode (overrides the gate's).
    #[serde(default)]
    pub mode: Option<Mode>,
    /// Let case-twin keys through for this tool (overrides the gate's `allowCaseTwinKeys`).
    #[serde(default)]
    pub allow_case_twin_keys: Option<bool>,
    /// How this tool's resource is compared with rule globs (overrides the gate's `resources`).
    #[serde(default)]
    pub resources: Option<ResourcesConfig>,
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
        if let Some(r) = &self.state.redis {
            r.check()?;
        }
        if self.labels.len() > 254 {
            return Err(GateError::Config(format!("config at `labels`: at most 254 labels, got {}", self.labels.len())));
        }
        for (i, l) in self.labels.iter().enumerate() {
            if l.is_empty() || self.labels[..i].contains(l) {
                return Err(GateError::Config(format!("config at `labels[{i}]`: labels must be non-empty and unique")));
            }
        }
        if let Some(l) = &self.loop_guard {
            crate::policy::tool::check_loop(l).map_err(|m| GateError::Config(format!("config at `loop`: {m}")))?;
        }
        if self.confirm.ttl_seconds == 0 || self.confirm.ttl_seconds > 86_400 {
            return Err(GateError::Config(format!("config at `confirm.ttlSeconds`: must be between 1 and 86400, got {}", self.confirm.ttl_seconds)));
        }
        if let Some(r) = &self.receipts {
            if r.ttl_seconds == 0 || r.ttl_seconds > 86_400 {
                return Err(GateError::Config(format!("config at `receipts.ttlSeconds`: must be between 1 and 86400, got {}", r.ttl_seconds)));
            }
            if r.private_key.is_none() && (r.private_key_env.is_some() || r.private_key_file.is_some()) {
                return Err(GateError::Config(
                    "config at `receipts`: privateKeyEnv / privateKeyFile must be resolved into privateKey by the host (ToolGate does this)".into(),
                ));
            }
        }
        if let Some(p) = &self.proxy {
            p.validate()?;
        }
        if let Some(i) = &self.identity {
            i.validate()?;
        }
        if let Some(a) = &self.audit {
            if a.buffer_records == 0 || a.buffer_records > 10_000_000 {
                return Err(GateError::Config(format!("config at `audit.bufferRecords`: must be between 1 and 10000000, got {}", a.buffer_records)));
            }
            if a.chain_key_env.is_some() && a.chain_key_file.is_some() {
                return Err(GateError::Config("config at `audit`: set at most one of `chainKeyEnv` and `chainKeyFile`".into()));
            }
            if a.chain_key_env.as_deref() == Some("") || a.chain_key_file.as_deref() == Some("") {
                return Err(GateError::Config("config at `audit`: `chainKeyEnv` / `chainKeyFile` must not be empty".into()));
            }
        }
        if self.state.max_sessions == 0 || self.state.max_sessions > 10_000_000 {
            return Err(GateError::Config(format!("config at `state.maxSessions`: must be between 1 and 10000000, got {}", self.state.max_sessions)));
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
    fn misspelled_keys_fail_closed() {
        let e = Config::from_json(r#"{"tools":[],"audit":{"jsonl":"a.jsonl","includeArgs":true}}"#).unwrap_err();
        assert!(e.to_string().contains("includeArgs"), "{e}");
        let e = Config::from_json(r#"{"tools":[{"name":"a","writs":true}]}"#).unwrap_err();
        assert!(e.to_string().contains("writs"), "{e}");
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
