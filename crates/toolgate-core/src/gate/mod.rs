//! The gate: compiled once from a config, then answers `check` for every call.

pub mod authorize;
pub mod record;
pub mod who;

use std::sync::Arc;

use ahash::AHashMap;

use serde_json::{Map, Value};

use crate::audit::{AuditLog, RawArgs};
use crate::config::{Config, LoopConfig};
use crate::context::CallContext;
use crate::error::GateError;
use crate::json::depth_of;
use crate::json::parse::{parse_str_info, Limits, ParseError};
use crate::json::pointer::to_display;
use crate::policy::tool::ToolPolicy;
use crate::policy::Policy;
use crate::receipt::ReceiptKey;
use crate::schema::coerce::Repair;
use crate::schema::flag::{Flag, FlagCode};
use crate::schema::message::{invalid_message, problems_of, Problem};
use crate::schema::CompiledSchema;
use crate::state::memory::MemoryStore;
use crate::state::{Level, StateStore};
use crate::suggest::{unknown_tool_message, NameIndex};
use crate::time::Clock;
use crate::verdict::{Reason, Verdict};
use record::Origin;
use who::{Stage, Who};

/// A declared tool, compiled.
#[derive(Debug, Clone)]
pub(crate) struct Tool {
    pub(crate) name: String,
    lower: String,
    destructive: bool,
    /// Case-twin keys let through (`allowCaseTwinKeys`, the tool's or the gate's).
    case_twins_ok: bool,
    /// Its resource compares with rule globs case-insensitively (`resources.caseInsensitive`).
    pub(crate) resource_ci: bool,
    /// The arguments a confirmation summary shows first (pinned, resource, required).
    pub(crate) summary_order: Vec<String>,
    schema: CompiledSchema,
    /// Its policy declarations.
    pub(crate) decl: ToolPolicy,
    /// The policy rules that can apply to it (by tool name and action).
    pub(crate) candidates: Vec<u32>,
}

impl Tool {
    /// The policy scope of a listing of this tool for a caller: its name and action known, its
    /// arguments and resource not.
    fn listing_scope<'a>(&'a self, ctx: &'a CallContext, now_ms: u64) -> crate::policy::scope::Scope<'a> {
        let mut scope = crate::policy::caller_scope(ctx, now_ms);
        scope.tool = Some(&self.name);
        scope.action = Some(&self.decl.action);
        scope.listing = true;
        scope
    }
}

impl crate::suggest::ToolName for Tool {
    fn names(&self) -> (&str, &str) {
        (&self.name, &self.lower)
    }
}

/// What a caller may see, for a listing of many tools ([`Gate::listing`]): the same answers as
/// [`Gate::visible_name`], with the caller's part of the policy found once.
pub(crate) struct Listing<'w> {
    gate: &'w Gate,
    ctx: &'w CallContext,
    now_ms: u64,
    /// Per policy rule: whether it matches this caller (`None`: no policy).
    caller_rules: Option<Vec<bool>>,
    /// No allow rule matches this caller: no tool is shown (see [`Listing::shows_none`]).
    none: bool,
}

impl Listing<'_> {
    /// Whether this caller could call `t` with some arguments (see [`Gate::visible_name`]).
    pub(crate) fn shows(&self, t: &Tool) -> bool {
        if self.none || (t.decl.operator && !self.ctx.is_operator()) {
            return false;
        }
        let (Some(p), Some(rules)) = (&self.gate.policy, &self.caller_rules) else { return true };
        p.could_allow_for(&t.candidates, &t.listing_scope(self.ctx, self.now_ms), rules, t.decl.resource.is_some())
    }

    /// Whether no tool can be shown: the policy has no allow rule for this caller (see
    /// [`Policy::allows_none`](crate::policy::Policy::allows_none)), found once per listing —
    /// [`Listing::shows`] then answers `false` at once (so do `filterTools` and `visible`).
    pub(crate) fn shows_none(&self) -> bool {
        self.none
    }

    /// Whether the tool named `name` is declared and [`Listing::shows`] it.
    pub(crate) fn shows_name(&self, name: &str) -> bool {
        self.gate.tool(name).is_some_and(|t| self.shows(t))
    }
}

/// A compiled gate. Its config is immutable after construction; `check` takes `&self` and is
/// safe to call from many threads. Loop counters, taint and confirmation tokens live in its
/// [`StateStore`] (in memory, per process, bounded by `state.maxSessions`), shared by clones.
#[derive(Debug, Clone)]
pub struct Gate {
    tools: Vec<Tool>,
    by_name: AHashMap<String, usize>,
    /// The tools' names indexed for "did you mean" (built once, here).
    names: NameIndex,
    limits: Limits,
    max_payload_bytes: usize,
    policy: Option<Policy>,
    labels: Vec<String>,
    loop_guard: Option<LoopConfig>,
    confirm_ttl_ms: u64,
    store: Arc<dyn StateStore>,
    rate_limits: crate::rate_limit::RateLimits,
    clock: Clock,
    receipts: Option<Receipts>,
    audit: Option<Arc<AuditLog>>,
    /// What the build let through that a strict build refuses (see [`Gate::from_json_learning`]).
    warnings: Vec<String>,
    /// Whether a decision can depend on the time: policy, receipts, audit, a loop guard,
    /// confirm-before-write, or a clock or store given from outside. When not, `who` leaves
    /// the clock unread (a plain schema gate's hot path).
    timed: bool,
}

/// The receipt signer of a gate.
#[derive(Debug, Clone)]
pub(crate) struct Receipts {
    pub(crate) key: ReceiptKey,
    pub(crate) ttl_seconds: u64,
}

/// The context of a call made with no context at all.
static NO_CONTEXT: CallContext = CallContext::EMPTY;

fn open_object_schema() -> Value {
    serde_json::json!({ "type": "object" })
}

impl Gate {
    /// Builds a gate from config JSON text. Every schema is compiled here, once; the text's
    /// hash is the `configHash` of audit records.
    pub fn from_json(text: &str) -> Result<Gate, GateError> {
        Gate::build(Config::from_json(text)?, text, false)
    }

    /// [`Gate::from_json`] for hosts whose tools are learned after the gate is first built (the
    /// MCP proxy before the server's first `tools/list`): policy `tools`/`actions` globs that match
    /// no declared tool are kept and reported by [`Gate::warnings`] instead of being `E_CONFIG`.
    /// Every other check is the same.
    pub fn from_json_learning(text: &str) -> Result<Gate, GateError> {
        Gate::build(Config::from_json(text)?, text, true)
    }

    /// Builds a gate from a parsed config.
    pub fn new(config: Config) -> Result<Gate, GateError> {
        Gate::build(config, "", false)
    }

    fn build(config: Config, text: &str, learning: bool) -> Result<Gate, GateError> {
        let mut warnings = Vec::new();
        let limits = config.parse_limits();
        let max_payload_bytes = config.limits.max_payload_bytes;
        let mut tools = Vec::with_capacity(config.tools.len());
        let mut by_name = AHashMap::with_capacity(config.tools.len());
        let schemas = crate::schema::SchemaRegistry::new(&config.schemas)?;
        for (i, t) in config.tools.iter().enumerate() {
            let mut decl = ToolPolicy::compile(t, i, &config.labels)?;
            decl.shadow = t.mode.unwrap_or(config.mode) == crate::config::Mode::Shadow;
            let schema_value = t.input_schema.clone().unwrap_or_else(open_object_schema);
            let schema = CompiledSchema::compile_with(&t.name, &schema_value, &schemas)?;
            by_name.insert(t.name.clone(), tools.len());
            let case_twins_ok = t.allow_case_twin_keys.unwrap_or(config.allow_case_twin_keys);
            let resource_ci = t.resources.and_then(|r| r.case_insensitive).or(config.resources.case_insensitive).unwrap_or(false);
            let pinned: Vec<String> = decl.pins.iter().map(|(k, _)| k.clone()).collect();
            let summary_order = crate::summary::key_order(&pinned, t.resource.as_deref(), t.input_schema.as_ref());
            tools.push(Tool {
                lower: t.name.to_lowercase(),
                name: t.name.clone(),
                destructive: t.destructive,
                case_twins_ok,
                resource_ci,
                summary_order,
                schema,
                decl,
                candidates: Vec::new(),
            });
        }
        let policy = match &config.policy {
            None => None,
            Some(p) => {
                let names: Vec<(String, String)> = tools.iter().map(|t| (t.name.clone(), t.decl.action.clone())).collect();
                let policy = Policy::compile(p, &names, learning.then_some(&mut warnings))?;
                for t in &mut tools {
                    t.candidates = policy.candidates(&t.name, &t.decl.action);
                }
                Some(policy)
            }
        };
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        let rate_limits = crate::rate_limit::RateLimits::compile(&config.rate_limits, &names, learning.then_some(&mut warnings))?;
        let timed = !rate_limits.is_empty()
            || policy.is_some()
            || config.receipts.is_some()
            || config.audit.is_some()
            || config.loop_guard.is_some()
            || tools.iter().any(|t| t.decl.writes || t.decl.loop_guard.is_some());
        Ok(Gate {
            warnings,
            timed,
            names: NameIndex::new(&tools),
            tools,
            by_name,
            limits,
            max_payload_bytes,
            policy,
            labels: config.labels,
            loop_guard: config.loop_guard,
            confirm_ttl_ms: config.confirm.ttl_seconds.saturating_mul(1000),
            store: Arc::new(MemoryStore::new(config.state.max_sessions)),
            rate_limits,
            clock: Clock::system(),
            receipts: match &config.receipts {
                None => None,
                Some(r) => {
                    let key = match &r.private_key {
                        Some(seed) => ReceiptKey::from_seed(seed).map_err(|e| GateError::Config(format!("config at `receipts.privateKey`: {e}")))?,
                        None => ReceiptKey::generate().map_err(|e| GateError::Config(format!("config at `receipts`: no key could be generated: {e}")))?,
                    };
                    Some(Receipts { key, ttl_seconds: r.ttl_seconds })
                }
            },
            audit: match &config.audit {
                None => None,
                Some(a) => Some(Arc::new(AuditLog::new(a, text).map_err(|e| GateError::Config(format!("config at `audit`: {e}")))?)),
            },
        })
    }

    pub(crate) fn receipts(&self) -> Option<&Receipts> {
        self.receipts.as_ref()
    }

    /// The audit log, when the config has an `audit` block.
    pub fn audit(&self) -> Option<&AuditLog> {
        self.audit.as_deref()
    }

    /// The receipts' verifying key (base64url), when receipts are configured.
    pub fn public_key(&self) -> Option<&str> {
        self.receipts.as_ref().map(|r| r.key.public_key())
    }

    /// What a [`Gate::from_json_learning`] build let through (rule globs that match no declared
    /// tool yet), one message each; empty for a strict build.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The same gate reading another clock (tests of expiry and windows).
    pub fn with_clock(mut self, clock: Clock) -> Gate {
        self.clock = clock;
        self.timed = true;
        self
    }

    /// The same gate keeping its state in `store` instead of the in-memory default.
    pub fn with_store(mut self, store: Arc<dyn StateStore>) -> Gate {
        self.store = store;
        self.timed = true;
        self
    }

    pub(crate) fn policy(&self) -> Option<&Policy> {
        self.policy.as_ref()
    }

    pub(crate) fn store(&self) -> &dyn StateStore {
        &*self.store
    }

    /// Whether this gate's state store may block on the network (a remote store): the Node
    /// binding then refuses its sync decisions (`E_ASYNC`).
    pub fn has_remote_state(&self) -> bool {
        self.store.is_remote()
    }

    pub(crate) fn rate_limits(&self) -> &crate::rate_limit::RateLimits {
        &self.rate_limits
    }

    pub(crate) fn now_ms(&self) -> u64 {
        self.clock.now_ms()
    }

    /// The time of a decision: the clock, or 0 on a gate where no decision depends on it.
    pub(crate) fn decision_time(&self) -> u64 {
        if self.timed {
            self.clock.now_ms()
        } else {
            0
        }
    }

    pub(crate) fn loop_guard(&self) -> Option<LoopConfig> {
        self.loop_guard
    }

    pub(crate) fn confirm_ttl_ms(&self) -> u64 {
        self.confirm_ttl_ms
    }

    pub(crate) fn labels(&self) -> &[String] {
        &self.labels
    }

    pub(crate) fn label(&self, level: Level) -> &str {
        self.labels.get(level as usize).map_or("?", String::as_str)
    }

    pub(crate) fn tool_named(&self, name: &str) -> Option<&Tool> {
        self.tool(name)
    }

    /// Raises a session's taint to `label` by hand (`gate.markSession`). An unknown label is
    /// `E_CONFIG` naming the declared ones; a store that cannot be reached is `E_STATE` (the
    /// taint was perhaps not raised: the host must not go on as if it had been).
    pub fn mark_session(&self, session: &str, label: &str) -> Result<(), GateError> {
        let level = self
            .labels
            .iter()
            .position(|l| l == label)
            .ok_or_else(|| GateError::Config(format!("markSession: unknown label `{label}`; `labels` declares [{}]", self.labels.join(", "))))?;
        self.store.raise_taint(session, level as Level, &self.labels).map_err(|e| GateError::State(format!("markSession: {e}")))
    }

    /// Whether this gate has anything beyond the schema gate for its calls to pass (rules,
    /// resources, pins, globs, surfaces, loop, taint or confirmation).
    pub fn has_policy(&self) -> bool {
        self.policy.is_some()
    }

    /// Declared tool names, in config order.
    pub fn tool_names(&self) -> impl Iterator<Item = &str> {
        self.tools.iter().map(|t| t.name.as_str())
    }

    /// The refusal for an undeclared tool, naming the closest names among the tools this
    /// caller may see.
    pub fn unknown(&self, tool: &str, who: &Who<'_>) -> Verdict {
        let listing = self.listing(who);
        if listing.shows_none() {
            // no allow rule names this caller: the message of a gate showing no tool, without
            // asking each of its tools
            return Verdict::rejected(Reason::UnknownTool, unknown_tool_message::<Tool>(tool, &[], &NameIndex::default(), |_| false));
        }
        let visible = |i: usize| listing.shows(&self.tools[i]);
        Verdict::rejected(Reason::UnknownTool, unknown_tool_message(tool, &self.tools, &self.names, visible))
    }

    /// A caller with no context at all, deciding with the whole pipeline.
    pub fn anonymous(&self) -> Who<'static> {
        self.who(&NO_CONTEXT, Stage::Full)
    }

    /// Decides one call for a caller with no context: see [`Gate::check_as`].
    pub fn check(&self, tool: &str, args: &str) -> Verdict {
        self.check_as(tool, args, &self.anonymous())
    }

    /// Decides one call: `args` is the raw JSON text the model sent (empty means `{}`); `who`
    /// is the caller. The whole pipeline of docs/architecture.md ("The path of one call"), in order, then the receipt and the audit
    /// record (the call id is the context's `callId`).
    pub fn check_as(&self, tool: &str, args: &str, who: &Who<'_>) -> Verdict {
        let started = self.decision_start();
        let v = self.decide_text(tool, args, who);
        let raw = if self.audit.as_ref().is_some_and(|a| a.includes_arguments()) { RawArgs::Text(args) } else { RawArgs::None };
        let origin = Origin { dialect: None, call_id: who.ctx.call_id.as_deref(), tool, raw, started, step: None };
        self.finish(who, origin, v)
    }

    /// [`Gate::check_as`] without the receipt and the record (a turn's calls are finished by
    /// `guard`, which knows their ids and dialect).
    pub(crate) fn decide_text(&self, tool: &str, args: &str, who: &Who<'_>) -> Verdict {
        let Some(t) = self.tool(tool) else {
            return self.unknown(tool, who);
        };
        if t.decl.operator && !who.ctx.is_operator() {
            return self.surface_refusal(t);
        }
        let v = if args.trim().is_empty() {
            self.judge(t, Value::Object(Map::new()), true, Vec::new(), false, who)
        } else {
            match parse_str_info(args, &self.limits) {
                Ok((value, info)) => self.check_root(t, value, info.big_integer, who),
                Err(e) => self.refuse_parse(t, &e),
            }
        };
        self.then_authorize(t, v, who)
    }

    /// Decides one call whose arguments arrived already parsed (an object in a payload, such as
    /// Anthropic `input`). `big_integer`: some number in them may lie beyond the i64 range.
    /// The same rules as [`Gate::check_as`] apply, depth included; size is the caller's to bound.
    /// Not signed or recorded: the caller finishes it ([`Gate::finish`]).
    pub fn check_value(&self, tool: &str, args: Value, big_integer: bool, who: &Who<'_>) -> Verdict {
        let Some(t) = self.tool(tool) else {
            return self.unknown(tool, who);
        };
        if t.decl.operator && !who.ctx.is_operator() {
            return self.surface_refusal(t);
        }
        if depth_of(&args) > self.limits.max_depth {
            return self.refuse_parse(t, &ParseError::TooDeep { limit: self.limits.max_depth });
        }
        let v = self.check_root(t, args, big_integer, who);
        self.then_authorize(t, v, who)
    }

    fn then_authorize(&self, t: &Tool, v: Verdict, who: &Who<'_>) -> Verdict {
        if v.allowed() {
            self.authorize(t, v, who)
        } else {
            v
        }
    }

    /// Refuses a call whose arguments failed to parse, in pipeline order: unknown tool, then
    /// surface, then `bad_arguments`.
    pub fn refuse_arguments(&self, tool: &str, e: &ParseError, who: &Who<'_>) -> Verdict {
        match self.tool(tool) {
            Some(t) if t.decl.operator && !who.ctx.is_operator() => self.surface_refusal(t),
            Some(t) => self.refuse_parse(t, e),
            None => self.unknown(tool, who),
        }
    }

    /// Whether `t` could be called by this caller with some arguments: the surface allows it
    /// and, under a policy, some rule could allow it (see [`Policy::could_allow`]).
    fn visible_to(&self, t: &Tool, ctx: &CallContext, persona: Option<usize>, now_ms: u64) -> bool {
        if t.decl.operator && !ctx.is_operator() {
            return false;
        }
        let Some(p) = &self.policy else { return true };
        p.could_allow(&t.candidates, &t.listing_scope(ctx, now_ms), persona, t.decl.resource.is_some())
    }

    /// Whether the tool named `name` is declared and could be called by this caller.
    pub fn visible_name(&self, name: &str, who: &Who<'_>) -> bool {
        self.tool(name).is_some_and(|t| self.visible_to(t, who.ctx, who.persona, who.now_ms))
    }

    /// Visibility for many tools of one caller: what of the policy depends on the caller alone
    /// (which rules name its roles, personas, subject) is worked out once, not once per tool.
    pub(crate) fn listing<'w>(&'w self, who: &'w Who<'_>) -> Listing<'w> {
        let caller_rules = self.policy.as_ref().map(|p| p.caller_rules(&crate::policy::caller_scope(who.ctx, who.now_ms), who.persona));
        let none = matches!((&self.policy, &caller_rules), (Some(p), Some(rules)) if p.allows_none(rules));
        Listing { gate: self, ctx: who.ctx, now_ms: who.now_ms, caller_rules, none }
    }

    /// The limits every parse of this gate's input runs under.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The largest whole turn `guard` accepts, in bytes.
    pub fn max_payload_bytes(&self) -> usize {
        self.max_payload_bytes
    }

    /// Whether `tool` is declared.
    pub fn declares(&self, tool: &str) -> bool {
        self.by_name.contains_key(tool)
    }

    fn tool(&self, name: &str) -> Option<&Tool> {
        self.by_name.get(name).map(|&i| &self.tools[i])
    }

    fn refuse_parse(&self, t: &Tool, e: &ParseError) -> Verdict {
        Verdict::rejected(Reason::BadArguments, format!("Invalid arguments for tool `{}`: {e}. {}", t.name, parse_fix(e)))
    }

    /// Brings the root to an object (`null`/`""` → `{}`, a string holding a JSON object → that
    /// object, flagged), then judges it.
    fn check_root(&self, t: &Tool, value: Value, big_integer: bool, who: &Who<'_>) -> Verdict {
        match value {
            Value::Object(_) => self.judge(t, value, false, Vec::new(), big_integer, who),
            Value::Null => self.judge(t, Value::Object(Map::new()), true, Vec::new(), false, who),
            Value::String(s) if s.trim().is_empty() => self.judge(t, Value::Object(Map::new()), true, Vec::new(), false, who),
            Value::String(s) if !t.destructive && s.trim_start().starts_with('{') => match parse_str_info(&s, &self.limits) {
                Ok((inner @ Value::Object(_), info)) => {
                    let flag = Flag { code: FlagCode::UnpackedStringifiedJson, path: String::new(), from: Some(Value::String(s)), to: None };
                    self.judge(t, inner, true, vec![flag], info.big_integer, who)
                }
                Ok(_) => self.refuse_shape(t, "the arguments must be a JSON object".into()),
                Err(e) => Verdict::rejected(
                    Reason::BadArguments,
                    format!("Invalid arguments for tool `{}`: the arguments are a string holding JSON, and {e}. {}", t.name, parse_fix(&e)),
                ),
            },
            other => self.refuse_shape(t, format!("the arguments must be a JSON object, got {}", crate::schema::types::type_name(&other))),
        }
    }

    fn refuse_shape(&self, t: &Tool, what: String) -> Verdict {
        Verdict::rejected(Reason::BadArguments, format!("Invalid arguments for tool `{}`: {what}. {OBJECT_FIX}", t.name))
    }

    /// Sets pinned arguments (so validation sees the caller's identity, not the model's guess),
    /// then validates (and, unless strict, repairs) an object root.
    fn judge(&self, t: &Tool, mut value: Value, normalized: bool, mut flags: Vec<Flag>, big_integer: bool, who: &Who<'_>) -> Verdict {
        // the pinned values as set, to hold the repaired arguments to (a repair must never
        // drop or change a pin: `additionalProperties: false` without the pinned key would
        // prune it, a coercion or an enum match would rewrite it)
        let mut pinned: Vec<(String, Value)> = Vec::new();
        if !t.decl.pins.is_empty() {
            if let Value::Object(m) = &mut value {
                if let Some(refusal) = t.decl.apply_pins(&t.name, m, who.ctx, &mut flags) {
                    return refusal;
                }
                pinned = t.decl.pins.iter().filter_map(|(name, _)| m.get(name).map(|v| (name.clone(), v.clone()))).collect();
            }
        }
        // Values a tool would receive differently from what the gate checks (json::hazards).
        if let Some(e) = crate::json::hazards::find(&value, big_integer, !t.case_twins_ok) {
            return self.refuse_parse(t, &e);
        }
        // A number past the 64-bit integers was read as the nearest double, and that is what is
        // checked; a reader of the model's own text may read it exactly (Python's `json` reads
        // `100000000000000000001` as that integer, past a `maximum` of 1e20): the gate's own
        // text of the arguments runs instead.
        let normalized = normalized || big_integer;
        // Fast path: valid as sent, nothing to inject, no integer beyond 64 bits: repair would
        // change nothing, so it is skipped.
        let valid = t.schema.validator.is_valid(&value);
        if valid && !big_integer && (t.destructive || !t.schema.has_defaults) {
            return allowed(value, flags, normalized);
        }
        let v = self.decide(t, value, valid, normalized, &mut flags);
        // a repair may add keys (defaults) or unpack nested JSON: check what will run
        if let (Some(args), false) = (&v.arguments, v.untouched) {
            if let Some(e) = crate::json::hazards::find(args, true, !t.case_twins_ok) {
                return self.refuse_parse(t, &e);
            }
            if let Some((name, _)) = pinned.iter().find(|(name, want)| args.get(name) != Some(want)) {
                return Verdict::rejected(
                    Reason::Invalid,
                    format!(
                        "Cannot run `{}`: its input schema does not accept the argument `{name}` the gate pins to the caller's identity (a configuration problem, not the call's). Do not retry; tell the user this tool is misconfigured.",
                        t.name
                    ),
                );
            }
        }
        v
    }

    /// Refuses arguments the host could not turn into JSON text (a cycle, a BigInt, a
    /// function), after the unknown-tool check, as `bad_arguments`.
    pub fn check_unreadable(&self, tool: &str, detail: &str, who: &Who<'_>) -> Verdict {
        let started = self.decision_start();
        let v = match self.tool(tool) {
            None => self.unknown(tool, who),
            Some(t) if t.decl.operator && !who.ctx.is_operator() => self.surface_refusal(t),
            Some(_) => {
                let detail: String = detail.chars().take(200).collect();
                Verdict::rejected(Reason::BadArguments, format!("Invalid arguments for tool `{tool}`: they could not be read as JSON ({detail}). {OBJECT_FIX}"))
            }
        };
        let origin = Origin { dialect: None, call_id: who.ctx.call_id.as_deref(), tool, raw: RawArgs::None, started, step: None };
        self.finish(who, origin, v)
    }

    /// The full path: repair (or, for strict tools, only look for problems), then the
    /// authoritative validation. `valid` is the validation of `value` as it arrived.
    fn decide(&self, t: &Tool, mut value: Value, valid: bool, normalized: bool, flags: &mut Vec<Flag>) -> Verdict {
        let mut problems: Vec<Problem> = Vec::new();
        let before = flags.len();
        {
            // strict (destructive) tools walk too, but only to find problems; nothing changes
            let mut repair = Repair::new(&t.schema, &self.limits, t.destructive);
            repair.run(&mut value);
            flags.extend(repair.flags.into_iter().map(|f| f.finish()));
            for p in repair.problems {
                let mut segs = p.segs_rev;
                segs.reverse();
                problems.push(Problem { path: to_display(&segs), text: p.text });
            }
        }
        let changed = flags.len() != before;
        if problems.is_empty() && (if changed { t.schema.validator.is_valid(&value) } else { valid }) {
            return allowed(value, std::mem::take(flags), normalized);
        }
        for err in t.schema.validator.iter_errors(&value) {
            problems.extend(problems_of(&err, &value));
        }
        Verdict::rejected(Reason::Invalid, invalid_message(&t.name, &problems))
    }
}

/// The verdict for arguments that may run: `passed` when nothing changed (and, unless the root
/// was normalized, the caller's own text is runnable as is), else `repaired`.
fn allowed(value: Value, flags: Vec<Flag>, normalized: bool) -> Verdict {
    Verdict::allow(value, flags, !normalized)
}

const OBJECT_FIX: &str = "Send the arguments as one JSON object, e.g. {\"name\": \"value\"}.";

fn parse_fix(e: &ParseError) -> &'static str {
    match e {
        ParseError::DuplicateKey { .. } => "Send each key only once.",
        ParseError::ProtoKey { .. } => "Remove that key.",
        ParseError::TooLarge { .. } | ParseError::TooDeep { .. } => "Send smaller, flatter arguments.",
        ParseError::NonFinite => "Send finite numbers only.",
        ParseError::UnsafeInteger { .. } => "Send such an identifier as a string if the tool accepts one.",
        ParseError::CaseTwinKeys { .. } => "Send each key once, in the exact spelling of the tool's schema.",
        ParseError::Syntax { .. } => "Send the arguments as one complete JSON object.",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_shows_none_exactly_when_no_allow_rule_names_the_caller() {
        let gate = Gate::from_json(
            r#"{"version":1,"tools":[{"name":"read_file"},{"name":"write_file"}],"policy":{"personas":[{"name":"night","when":"context.shift == 'night'"}],"rules":[
                {"id":"readers","effect":"allow","roles":["reader"],"tools":["read_*"]},
                {"id":"writers","effect":"allow","roles":["writer"],"tools":["write_file"],"when":"purpose == 'edit'"},
                {"id":"night","effect":"allow","personas":["night"],"tools":["read_file"]},
                {"id":"nobody-writes","effect":"deny","tools":["write_file"]}]}}"#,
        )
        .expect("config");
        for (c, none) in [
            ("{}", true),
            (r#"{"roles":["nobody"],"subject":"x"}"#, true),
            (r#"{"roles":["reader"]}"#, false),
            (r#"{"roles":["writer"]}"#, false),
            (r#"{"context":{"shift":"night"}}"#, false),
        ] {
            let ctx = CallContext::from_json(c).expect("context");
            let who = gate.who(&ctx, Stage::Full);
            assert_eq!(gate.listing(&who).shows_none(), none, "{c}");
        }
        let open = Gate::from_json(r#"{"version":1,"tools":[{"name":"a"}]}"#).expect("config");
        assert!(!open.listing(&open.anonymous()).shows_none(), "no policy: every tool is shown");
    }

    #[test]
    fn a_number_past_the_64_bit_integers_runs_as_the_checked_double_not_the_model_text() {
        let gate = Gate::from_json(
            r#"{"version":1,"tools":[{"name":"pay","inputSchema":{"type":"object","properties":{"amount":{"type":"number","maximum":1e20}}}}]}"#,
        )
        .expect("config");
        for text in [r#"{"amount":100000000000000000001}"#, r#"{"amount":1e20}"#] {
            let v = gate.check("pay", text);
            assert_eq!(v.outcome, crate::Outcome::Passed, "{text}: {v:?}");
            // before: untouched, so hosts ran the model's text, which Python reads as 10^20 + 1
            assert!(!v.untouched, "{text}: the model's own text must not run");
            assert_eq!(v.arguments, Some(serde_json::json!({ "amount": 1e20 })));
        }
        let v = gate.check("pay", r#"{"amount":100000000000000000000000}"#);
        assert_eq!(v.reason, Some(Reason::Invalid), "past the maximum: {v:?}");
        assert!(gate.check("pay", r#"{"amount":12}"#).untouched, "an ordinary call keeps its own text");
    }
}
