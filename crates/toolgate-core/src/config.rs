//! The config a gate is built from (README "Config"). Unknown keys are errors.
//!
//! Unknown keys are refused with `E_CONFIG`, never silently ignored: a gate must never look
//! stricter than it is.
//!
//! These types are the one source of the config's shape (docs/architecture.md, "Config: one
//! source"): the shipped JSON Schema and the TypeScript types are generated from them, with the
//! host blocks' types of `toolgate-host-config`. Doc comments on the types and fields are
//! user-facing: they become the schema's `description`s and the TypeScript JSDoc.
//! `#[schemars(...)]` attributes state in the schema what `check` (and the `validate` of the
//! other config modules) refuse in code, so the schema accepts what the gate accepts; `tsType` /
//! `tsRequired` are read only by the TypeScript generator and stripped from the shipped schema.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::error::GateError;
use crate::json::parse::{Limits, MAX_DEPTH_CEILING};

/// A gate config (README "Config"). Unknown keys are `E_CONFIG`: a typo such as `writs` must
/// never silently disable a check.
// `tsRequired`: the TypeScript type asks for `tools` (a gate without a tool list is a mistake in
// code), though a config file may leave it out (no tools: every call is `unknown_tool`).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "ToolGateConfig", extend("tsRequired" = ["tools"]))]
pub struct Config {
    /// Format version; only `1` exists.
    #[serde(default)]
    #[schemars(schema_with = "version_schema")]
    pub version: Option<u64>,
    /// The declared tools. Calls to anything else are refused (`unknown_tool`).
    #[serde(default)]
    pub tools: Vec<ToolConfig>,
    /// Bounds on arguments, applied before anything reads them.
    #[serde(default)]
    pub limits: LimitsConfig,
    /// Let `__proto__` / `constructor.prototype` keys through as plain data (default false).
    #[serde(default)]
    pub allow_proto_keys: bool,
    /// The taint lattice, lowest first (a tool's `output.label` and `sink.maxLabel` name these).
    #[serde(default)]
    #[schemars(length(max = 254), extend("uniqueItems" = true), inner(length(min = 1)))]
    pub labels: Vec<String>,
    /// Rules and personas; absent: schema gate only (every declared tool allowed). Present: deny
    /// by default (a call runs only if some allow rule matches and no deny rule does).
    #[serde(default)]
    pub policy: Option<PolicyConfig>,
    /// The gate-wide loop guard (absent: none unless a tool sets its own).
    #[serde(default, rename = "loop")]
    pub loop_guard: Option<LoopConfig>,
    /// Confirm-before-write: how long a token stays valid.
    #[serde(default)]
    pub confirm: ConfirmConfig,
    /// Where loop counters, taint, rate counters and confirmation tokens live (docs/state.md):
    /// in memory (`maxSessions`), or in Redis shared by every process (`redis`).
    #[serde(default)]
    pub state: StateConfig,
    /// Calls per caller per fixed window; a call over a limit is denied `rate_limited` with when
    /// to retry (docs/state.md).
    #[serde(default)]
    #[schemars(length(max = 1000))]
    pub rate_limits: Vec<RateLimitConfig>,
    /// `'shadow'`: policy-level refusals (`deny_rule`, `no_rule`, `engine`, `loop`, `taint`) are
    /// recorded but let through (`shadow`, `wouldBe` on the verdict); unknown tools and bad
    /// arguments are refused in every mode. Default `'enforce'`.
    #[serde(default)]
    #[schemars(extend("default" = "enforce"))]
    pub mode: Mode,
    /// Signed receipts for allowed calls (`verdict.receipt`, `gate.publicKey`); absent: none.
    #[serde(default)]
    pub receipts: Option<ReceiptsConfig>,
    /// The decision log (docs/audit.md); absent: no records.
    #[serde(default)]
    pub audit: Option<AuditConfig>,
    /// A host block: settings read by hosts, never by the core (docs/architecture.md, "Host
    /// blocks"). The core keeps it as JSON, unread and unchecked; the hosts check it with the
    /// `toolgate-host-config` crate after the core compiled the config, so a typo in it is
    /// `E_CONFIG` too. Its shape and schema are defined there.
    // Any JSON value, not only an object: the host crate refuses what is not its block, with the
    // message it always gave (`expected struct ProxyConfig`). The schema generator
    // (`crates/toolgate-host-config/examples/config_schema.rs`) replaces this placeholder schema.
    #[serde(default)]
    #[schemars(schema_with = "host_block_schema")]
    pub proxy: Option<Value>,
    /// Who is calling, from a verified bearer token (docs/identity.md): the servers require it on
    /// every request; `verifyCaller` (`toolgate/identity`) reads it.
    #[serde(default)]
    pub identity: Option<crate::identity_config::IdentityConfig>,
    /// Let keys equal under Unicode case folding share one object (`{"path":…,"PATH":…}`).
    /// Default false: such arguments are `bad_arguments`, since runtimes that bind JSON
    /// case-insensitively (Go, .NET) may take the twin the gate did not check. A tool's own
    /// setting wins.
    #[serde(default)]
    pub allow_case_twin_keys: bool,
    /// How resources are compared with rule globs, gate-wide (a tool's own `resources` wins).
    #[serde(default)]
    pub resources: ResourcesConfig,
    /// Offline JSON Schema documents by absolute URI (`{ "https://example.com/address.json": {…} }`):
    /// a tool schema's `$ref` to one of these URIs (or `URI#/pointer`) resolves to it without the
    /// network; any other remote `$ref` is `E_CONFIG` naming it (nothing is ever fetched). At most
    /// 256 documents, 4 MiB together, 100 levels deep; a reference cycle that never descends into
    /// the value is refused (docs/json-schema.md).
    // Checked and bounded when the gate is built (`schema/registry.rs`).
    #[serde(default)]
    #[schemars(schema_with = "schemas_schema")]
    pub schemas: serde_json::Map<String, Value>,
}

/// A host block (`proxy`): an object whose shape the host crate defines.
fn host_block_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": "object" })
}

/// `version`: read as a number, refused in `check` unless it is 1.
fn version_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "const": 1 })
}

/// `schemas`: the bounds `schema/registry.rs` checks that a schema can state (the total size and
/// depth cannot be).
fn schemas_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "object",
        "maxProperties": 256,
        "propertyNames": { "pattern": "^[A-Za-z][A-Za-z0-9+.-]*:[^\\s#]+#?$", "maxLength": 2048 },
        "additionalProperties": { "type": ["object", "boolean"] }
    })
}

/// `resources`: how resolved resources are compared with rule `resources` globs (gate-wide, or
/// per tool).
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ResourcesConfig {
    /// Compare case-insensitively (Unicode simple case folding), for hosts whose files or store
    /// ignore case: `file:reports/PRIVATE/x` is then covered by a deny on `file:reports/private/**`.
    /// Default false.
    #[serde(default)]
    #[schemars(extend("default" = false))]
    pub case_insensitive: Option<bool>,
}

/// Whether policy-level refusals are enforced: `enforce`, or `shadow` (recorded, let through).
// Inlined: the TypeScript type reads `'enforce' | 'shadow'` where it is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(inline)]
pub enum Mode {
    /// Refusals refuse.
    #[default]
    Enforce,
    /// `deny_rule`, `no_rule`, `engine`, `loop` and `taint` are recorded (`shadow`, `wouldBe`)
    /// but the call is let through; unknown tools and bad arguments are refused in every mode.
    Shadow,
}

/// `receipts`: signed receipts (compact JWS, EdDSA) for allowed calls. The ed25519 seed
/// (base64url) comes from `privateKeyEnv`, `privateKeyFile` (relative to the config file) or
/// `privateKey`; none of them: a key generated at start.
// The host resolves `privateKeyEnv` and `privateKeyFile` into `privateKey` before the core sees
// the config.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(inline)]
pub struct ReceiptsConfig {
    /// The environment variable holding the seed.
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub private_key_env: Option<String>,
    /// The file holding the seed (relative to the config file).
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub private_key_file: Option<String>,
    /// The ed25519 seed itself, base64url.
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub private_key: Option<String>,
    /// How long a receipt is valid, in seconds (default 300).
    #[serde(default = "default_ttl")]
    #[schemars(range(min = 1, max = 86_400))]
    pub ttl_seconds: u64,
}

/// What happens to a call when the audit log cannot record it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(inline)]
pub enum OnFailure {
    /// Refuse calls (`audit_unavailable`) until the sink recovers (default).
    #[default]
    Deny,
    /// Let calls through; every dropped record is counted.
    Allow,
}

/// `audit`: where decision records go and what they hold (docs/audit.md): one hash-chained JSON
/// line per decision.
// The files, standard output and the chain key are the host's; the core builds the records.
// `not`: at most one of `chainKeyEnv` and `chainKeyFile` (checked in `Config::check`).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(extend("not" = { "required": ["chainKeyEnv", "chainKeyFile"] }))]
pub struct AuditConfig {
    /// Append records to this JSONL file (relative to the config file with `fromFile`).
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub jsonl: Option<String>,
    /// Also write records to standard output.
    #[serde(default)]
    pub stdout: bool,
    /// Start a new file past this size, continuing the hash chain (default: never).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub max_file_bytes: Option<u64>,
    /// Records hold the (repaired) arguments themselves (default false: only their hash). Needed
    /// by `toolgate replay`.
    #[serde(default)]
    pub include_arguments: bool,
    /// Argument keys whose values are replaced by `"[redacted]"` at any depth.
    #[serde(default)]
    pub redact: Vec<String>,
    /// `'deny'` (default): calls are refused (`audit_unavailable`) while records cannot be kept;
    /// `'allow'`: they run and every lost record is counted.
    #[serde(default)]
    #[schemars(extend("default" = "deny"))]
    pub on_failure: OnFailure,
    /// Records held in memory before they are written (default 65536).
    #[serde(default = "default_buffer")]
    #[schemars(range(min = 1, max = 10_000_000))]
    pub buffer_records: usize,
    /// The environment variable holding the chain's HMAC-SHA-256 key (at least 16 bytes): records
    /// are then chained with a key, so an edited, re-chained log fails
    /// `toolgate audit verify --key-env`.
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub chain_key_env: Option<String>,
    /// The file holding the chain key (relative to the config file with `fromFile`). At most one
    /// of `chainKeyEnv` and `chainKeyFile`.
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub chain_key_file: Option<String>,
}

fn default_buffer() -> usize {
    65_536
}

/// The `policy` block: present means deny by default.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PolicyConfig {
    /// Named caller classes; the first whose `when` holds is the caller's persona.
    #[serde(default)]
    pub personas: Vec<PersonaConfig>,
    /// Allow and deny rules; any matching deny wins, else some matching allow is needed.
    #[serde(default)]
    pub rules: Vec<RuleConfig>,
}

/// A persona: the first whose `when` holds names the caller's persona.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PersonaConfig {
    /// The name rules target in `personas` (unique).
    #[schemars(length(min = 1))]
    pub name: String,
    /// A condition over the caller only (docs/conditions.md): roles, identity, purpose, context,
    /// subject, now.
    pub when: String,
}

/// Whether a rule allows or denies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(inline)]
pub enum Effect {
    /// Lets a matching call through (unless a deny also matches).
    Allow,
    /// Refuses a matching call; final.
    Deny,
}

/// One policy rule: every present selector must match (absent matches anything). Any matching
/// deny wins; else some allow must match.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "PolicyRule")]
pub struct RuleConfig {
    /// A name for messages and records (default `rules[i]`).
    #[serde(default)]
    pub id: Option<String>,
    /// Informational.
    #[serde(default)]
    pub description: Option<String>,
    /// `'allow'` or `'deny'`.
    pub effect: Effect,
    /// The caller holds one of these roles.
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub roles: Option<Vec<String>>,
    /// The caller's persona is one of these.
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub personas: Option<Vec<String>>,
    /// The caller's subject matches one of these globs.
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub subjects: Option<Vec<String>>,
    /// The tool name matches one of these globs (each must match some declared tool).
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub tools: Option<Vec<String>>,
    /// The tool's action matches one of these globs.
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub actions: Option<Vec<String>>,
    /// The resolved resource matches one of these globs; `{subject}` is the caller.
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub resources: Option<Vec<String>>,
    /// A condition (docs/conditions.md) that must hold too.
    #[serde(default)]
    pub when: Option<String>,
    /// Allow rules only: `false` waives confirmation for `writes` tools; `true` asks for it on any
    /// tool.
    #[serde(default)]
    pub confirm: Option<bool>,
}

/// Loop guard thresholds: the call past `maxIdentical` identical allowed calls within
/// `windowSeconds` is refused (`loop`).
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LoopConfig {
    /// Identical allowed calls tolerated within the window; the next one is refused.
    #[schemars(range(min = 1, max = 10_000))]
    pub max_identical: u32,
    /// The window, in seconds.
    #[schemars(range(min = 1, max = 604_800))]
    pub window_seconds: u64,
}

impl LoopConfig {
    /// Checks the thresholds' ranges (`maxIdentical` 1–10000, `windowSeconds` 1–604800); the
    /// message names the key, for the caller to place in the config.
    pub fn check(&self) -> Result<(), String> {
        if self.max_identical == 0 || self.max_identical > 10_000 {
            return Err(format!("maxIdentical must be between 1 and 10000, got {}", self.max_identical));
        }
        if self.window_seconds == 0 || self.window_seconds > 7 * 24 * 3600 {
            return Err(format!("windowSeconds must be between 1 and 604800, got {}", self.window_seconds));
        }
        Ok(())
    }
}

/// `confirm`: confirm-before-write.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(inline)]
pub struct ConfirmConfig {
    /// How long a confirmation token stays valid, in seconds (default 300).
    #[serde(default = "default_ttl")]
    #[schemars(range(min = 1, max = 86_400))]
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

/// `state`: where the gate's state lives (docs/state.md).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct StateConfig {
    /// Sessions kept in memory (LRU, default 100000); a forgotten session counts as tainted at the
    /// top label. Without `redis`, state is per process.
    #[serde(default = "default_sessions")]
    #[schemars(range(min = 1, max = 10_000_000))]
    pub max_sessions: usize,
    /// Keep state in Redis, shared by every process using the same URL and key prefix. Sync
    /// `check`/`guard`/`confirm` then throw `E_ASYNC`: use the async methods.
    // Read by the binding, which builds the store; the core only checks the shape.
    #[serde(default)]
    pub redis: Option<RedisConfig>,
}

impl Default for StateConfig {
    fn default() -> Self {
        StateConfig { max_sessions: default_sessions(), redis: None }
    }
}

/// `state.redis`: a shared Redis store (docs/state.md).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "RedisStateConfig")]
pub struct RedisConfig {
    /// `redis://[user:password@]host[:port][/db]`, `rediss://…` or `redis+unix:///path`.
    #[schemars(pattern(r"^(redis|rediss|redis\+unix|unix)://"))]
    pub url: String,
    /// Prefix of every key (default `toolgate:`); gates sharing state use the same one.
    // `check` bounds it at 256 bytes; `maxLength` counts characters, the nearest a schema states.
    #[serde(default = "default_key_prefix")]
    #[schemars(length(max = 256))]
    pub key_prefix: String,
    /// Bound of each round trip (connect, write, read), ms (default 50); past it the call is
    /// denied `state_unavailable`.
    #[serde(default = "default_redis_timeout")]
    #[schemars(range(min = 1, max = 60_000))]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(inline)]
pub enum RatePer {
    /// Per `subject` (a caller without one is counted in its session's scope).
    Subject,
    /// Per loop/taint scope: the session, else the subject, else gate-wide.
    Session,
}

/// One `rateLimits` entry: at most `max` allowed calls of the matching tools per caller in each
/// window of `windowSeconds` (fixed windows aligned on the Unix epoch).
// `max`, `windowSeconds` and `tools` are checked in `rate_limit.rs`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RateLimitConfig {
    /// Tool-name globs; one count is shared by every tool the entry covers.
    #[schemars(length(min = 1))]
    pub tools: Vec<String>,
    /// `'subject'`: per user (a caller without a subject counts in its session); `'session'`: per
    /// loop/taint scope.
    pub per: RatePer,
    /// Allowed calls per window (at least 1).
    #[schemars(range(min = 1, max = 4_294_967_295u32))]
    pub max: u32,
    /// The window in seconds; windows are fixed, aligned on the Unix epoch.
    #[schemars(range(min = 1, max = 31_622_400))]
    pub window_seconds: u64,
}

fn default_sessions() -> usize {
    100_000
}

/// Where a tool may be called from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(inline)]
pub enum Surface {
    /// Any caller (default).
    #[default]
    Visitor,
    /// Only callers whose context says `surface: "operator"`.
    Operator,
}

/// `args.<name>` of a tool: constraints the policy puts on one argument.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(inline)]
pub struct ArgConfig {
    /// A present argument must be a string or number matching this glob (`arg_glob`).
    #[serde(default)]
    pub glob: Option<String>,
    /// Set the argument from the caller: `'subject'` or `'identity.<fact>'` (`PinnedArgument`).
    // Checked in `policy/tool.rs`.
    #[serde(default)]
    #[schemars(pattern(r"^(subject|identity\.[^.]+(\.[^.]+)*)$"), extend("tsType" = "'subject' | `identity.${string}`"))]
    pub pin: Option<String>,
}

/// `output` of a tool.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(inline)]
pub struct OutputConfig {
    /// The label an allowed call raises the session's taint to (one of `labels`).
    pub label: String,
}

/// `sink` of a tool.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(inline)]
pub struct SinkConfig {
    /// The highest taint this tool may run under (one of `labels`).
    pub max_label: String,
}

/// One declared tool. MCP and OpenAI tool definitions can be pasted (`description`, `title`,
/// `annotations` are informational).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ToolConfig {
    /// The exact name a model must call (no case folding, no normalization). Unique.
    #[schemars(length(min = 1))]
    pub name: String,
    /// Informational.
    #[serde(default)]
    pub description: Option<String>,
    /// Informational (MCP).
    #[serde(default)]
    pub title: Option<String>,
    /// Informational (MCP tool annotations); never used for a decision.
    #[serde(default)]
    #[schemars(schema_with = "object_schema")]
    pub annotations: Option<Value>,
    /// JSON Schema (draft 2020-12 or draft-07) of the arguments; its type must admit `"object"`.
    /// Absent: any object.
    #[serde(default)]
    #[schemars(schema_with = "object_or_boolean_schema")]
    pub input_schema: Option<Value>,
    /// Strict mode: validate only, never repair (not even defaults).
    #[serde(default)]
    pub destructive: bool,
    /// Needs confirmation (`outcome: 'confirm'`, then `gate.confirm(token)`) unless a matching
    /// allow rule sets `confirm: false`.
    #[serde(default)]
    pub writes: bool,
    /// The policy action (default: the tool name).
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub action: Option<String>,
    /// A resource template over the arguments: `{x}` one segment (no `/`, `\`, `..`, NUL or
    /// control characters), `{x*}` a relative path (normalized, never above its start), `{a.b}`
    /// nested, `{subject}` the caller. A placeholder that cannot be filled denies the call
    /// (`unresolved_resource`).
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub resource: Option<String>,
    /// Per-argument policy: `glob` the value must match (`arg_glob`); `pin` sets it from the
    /// caller (`'subject'` or `'identity.<fact>'`).
    #[serde(default)]
    pub args: Option<std::collections::BTreeMap<String, ArgConfig>>,
    /// `'operator'`: never callable from the visitor surface (`surface`). Default `'visitor'`.
    #[serde(default)]
    #[schemars(extend("default" = "visitor"))]
    pub surface: Surface,
    /// Loop guard for this tool (overrides the gate's).
    #[serde(default, rename = "loop")]
    pub loop_guard: Option<LoopConfig>,
    /// The label an allowed call raises the session's taint to (one of `labels`).
    #[serde(default)]
    pub output: Option<OutputConfig>,
    /// Refused (`taint`) in a session tainted above `maxLabel`.
    #[serde(default)]
    pub sink: Option<SinkConfig>,
    /// This tool's mode (overrides the gate's `mode`).
    #[serde(default)]
    pub mode: Option<Mode>,
    /// Let case-twin keys (`{"path":…,"PATH":…}`) through for this tool (overrides the gate's
    /// `allowCaseTwinKeys`).
    #[serde(default)]
    pub allow_case_twin_keys: Option<bool>,
    /// How this tool's resource is compared with rule `resources` globs (overrides the gate's
    /// `resources`).
    #[serde(default)]
    pub resources: Option<ResourcesConfig>,
}

/// Any JSON object (MCP tool annotations).
fn object_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": "object" })
}

/// A JSON Schema: an object or a boolean.
fn object_or_boolean_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": ["object", "boolean"] })
}

/// `limits`: bounds on arguments, applied before anything else reads them.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(inline)]
pub struct LimitsConfig {
    /// Deepest nesting of arrays and objects (default 64, at most 120; the root object is depth 1).
    #[serde(default = "default_depth")]
    #[schemars(range(min = 1, max = MAX_DEPTH_CEILING))]
    pub max_depth: usize,
    /// Largest arguments text in UTF-8 bytes (default 1 MiB).
    #[serde(default = "default_bytes")]
    #[schemars(range(min = 1))]
    pub max_argument_bytes: usize,
    /// Largest whole turn `guard` reads, and tool list `filterTools` reads, in UTF-8 bytes
    /// (default 8 MiB).
    #[serde(default = "default_payload_bytes")]
    #[schemars(range(min = 1))]
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
        let config: Config = read_json(text)?;
        config.check()?;
        Ok(config)
    }

    /// The parse limits this config asks for.
    pub fn parse_limits(&self) -> Limits {
        Limits { max_depth: self.limits.max_depth, max_bytes: self.limits.max_argument_bytes, allow_proto_keys: self.allow_proto_keys }
    }

    fn check(&self) -> Result<(), GateError> {
        if let Some(v) = self.version {
            if v != 1 {
                return Err(GateError::Config(format!("config at `version`: unsupported version {v} (this toolgate reads version 1)")));
            }
        }
        let l = &self.limits;
        if l.max_depth == 0 || l.max_depth > MAX_DEPTH_CEILING {
            return Err(GateError::Config(format!("config at `limits.maxDepth`: must be between 1 and {MAX_DEPTH_CEILING}, got {}", l.max_depth)));
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
            l.check().map_err(|m| GateError::Config(format!("config at `loop`: {m}")))?;
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
                return Err(GateError::Config(format!("config at `tools[{i}].name`: tool `{}` is declared twice", t.name)));
            }
        }
        Ok(())
    }
}

/// Reads a `T` from config JSON text with serde, every problem an `E_CONFIG` naming its path
/// from the root (`` config at `tools[0].writs`: unknown field … ``; `config: …` for one at the
/// root, with its line and column). [`Config::from_json`] reads with it, and so do the hosts'
/// readers of their own blocks of the same text, so both word their errors alike.
pub fn read_json<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, GateError> {
    let mut de = serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(&mut de).map_err(|e| {
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
    })
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
