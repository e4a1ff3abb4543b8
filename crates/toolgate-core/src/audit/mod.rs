//! Audit records (docs/audit.md): one JSON line per decision, built here, held in a bounded
//! buffer the host drains and writes out (the host adds the hash chain and owns the files: the
//! core does no I/O). When the buffer is full or the host reports its sink failed, the log is
//! unavailable: with `onFailure: "deny"` (the default) calls that would run are refused
//! (`audit_unavailable`); with `"allow"` they run and every record lost is counted. No record is
//! longer than [`MAX_RECORD_BYTES`]: one the model made bigger is cut to size (`cut`).

mod cut;

pub use cut::{MAX_LINE_BYTES, MAX_RECORD_BYTES};

use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

use serde::Serialize;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::config::{AuditConfig, OnFailure};
use crate::context::CallContext;
use crate::dialect::Dialect;
use crate::receipt::base64url::encode as base64url;
use crate::schema::flag::Flag;
use crate::verdict::Verdict;

/// The record format version (`v` of every line).
pub const FORMAT_VERSION: u32 = 1;

/// The decision log of one gate.
#[derive(Debug)]
pub struct AuditLog {
    include_arguments: bool,
    redact: Vec<String>,
    deny_on_failure: bool,
    cap: usize,
    config_hash: String,
    prefix: String,
    lines: Mutex<Vec<String>>,
    len: AtomicUsize,
    failed: AtomicBool,
    dropped: AtomicU64,
    seq: AtomicU64,
}

/// The arguments of a call as received, for records that include arguments.
#[derive(Debug, Clone, Copy)]
pub enum RawArgs<'a> {
    /// Not kept (or none).
    None,
    /// The text the model sent.
    Text(&'a str),
    /// The value the payload held.
    Value(&'a Value),
}

/// One finished decision, as recorded.
#[derive(Debug)]
pub struct Decision<'a> {
    /// The caller.
    pub ctx: &'a CallContext,
    /// The dialect of the turn (`None` for `check` and `confirm`).
    pub dialect: Option<Dialect>,
    /// The call id (wire id, or the host's `callId`).
    pub call_id: Option<&'a str>,
    /// The tool called.
    pub tool: &'a str,
    /// The verdict.
    pub verdict: &'a Verdict,
    /// The arguments as received (only read when records include arguments).
    pub raw: RawArgs<'a>,
    /// Time of the decision, ms since the epoch.
    pub now_ms: u64,
    /// Time the decision took, µs.
    pub latency_us: u64,
    /// The receipt's id, when one was issued.
    pub jti: Option<&'a str>,
    /// `"confirm"` for the second step of confirm-before-write.
    pub step: Option<&'static str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Line<'a> {
    v: u32,
    #[serde(rename = "type")]
    kind: &'static str,
    time: String,
    id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    sub: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    session: Option<&'a str>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    roles: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    purpose: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    surface: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dialect: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    call_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    step: Option<&'static str>,
    tool: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    action: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    resource: Option<&'a str>,
    outcome: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'static str>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    shadow: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    would_be: Option<&'static str>,
    flags: Vec<Value>,
    latency_us: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    args_hash: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    args: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    identity: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    context: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    jti: Option<&'a str>,
    config_hash: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ErrorLine<'a> {
    v: u32,
    #[serde(rename = "type")]
    kind: &'static str,
    time: String,
    id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    sub: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    session: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dialect: Option<&'a str>,
    code: &'a str,
    message: &'a str,
    config_hash: &'a str,
}

/// SHA-256 of `bytes`, base64url without padding.
pub fn sha256_b64url(bytes: &[u8]) -> String {
    base64url(&Sha256::digest(bytes))
}

impl AuditLog {
    /// A log for `cfg`; `config_text` is hashed into every record (`configHash`).
    pub fn new(cfg: &AuditConfig, config_text: &str) -> Result<AuditLog, String> {
        let mut seed = [0u8; 6];
        getrandom::fill(&mut seed).map_err(|e| format!("no OS randomness for decision ids: {e}"))?;
        Ok(AuditLog {
            include_arguments: cfg.include_arguments,
            redact: cfg.redact.clone(),
            deny_on_failure: cfg.on_failure == OnFailure::Deny,
            cap: cfg.buffer_records,
            config_hash: sha256_b64url(config_text.as_bytes()),
            prefix: base64url(&seed),
            lines: Mutex::new(Vec::new()),
            len: AtomicUsize::new(0),
            failed: AtomicBool::new(false),
            dropped: AtomicU64::new(0),
            seq: AtomicU64::new(0),
        })
    }

    /// Whether a call that would run may run: the log can take its record, or the config says
    /// to run without one (`onFailure: "allow"`).
    pub fn admits(&self) -> bool {
        !self.deny_on_failure || self.available()
    }

    /// Whether a record can be taken now (buffer not full, sink not failed).
    pub fn available(&self) -> bool {
        !self.failed.load(Ordering::Relaxed) && self.len.load(Ordering::Relaxed) < self.cap
    }

    /// Whether records include the arguments (so the caller keeps the raw ones around).
    pub fn includes_arguments(&self) -> bool {
        self.include_arguments
    }

    /// The hash of the config text (`configHash`).
    pub fn config_hash(&self) -> &str {
        &self.config_hash
    }

    /// Records lost (buffer full or sink failed), since the gate was built.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// The host reports its sink failing (`true`) or recovered (`false`).
    pub fn set_failed(&self, failed: bool) {
        self.failed.store(failed, Ordering::Relaxed);
    }

    /// Takes every buffered record, in order, each line ending in `\n`.
    pub fn drain(&self) -> String {
        let lines = std::mem::take(&mut *self.lines.lock().unwrap_or_else(|e| e.into_inner()));
        self.len.fetch_sub(lines.len(), Ordering::Relaxed);
        let mut out = String::with_capacity(lines.iter().map(|l| l.len() + 1).sum());
        for l in lines {
            out.push_str(&l);
            out.push('\n');
        }
        out
    }

    fn next_id(&self) -> String {
        let n = self.seq.fetch_add(1, Ordering::Relaxed);
        let mut id = String::with_capacity(self.prefix.len() + 12);
        id.push_str(&self.prefix);
        let _ = write!(id, "-{n}");
        id
    }

    /// Buffers one record, cut to [`MAX_RECORD_BYTES`] (see `cut::to_size`).
    fn push(&self, line: String) {
        if !self.available() {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let line = cut::to_size(line, MAX_RECORD_BYTES);
        let mut lines = self.lines.lock().unwrap_or_else(|e| e.into_inner());
        lines.push(line);
        self.len.store(lines.len(), Ordering::Relaxed);
    }

    /// Records one decision.
    pub fn record(&self, d: &Decision<'_>) {
        let v = d.verdict;
        let args_hash = v.arguments.as_ref().map(crate::receipt::args_digest);
        let args = if !self.include_arguments {
            None
        } else {
            match (&v.arguments, d.raw) {
                (Some(a), _) => Some(self.redacted(a)),
                (None, RawArgs::Value(a)) => Some(self.redacted(a)),
                (None, RawArgs::Text(t)) => Some(match serde_json::from_str::<Value>(t) {
                    Ok(a) => self.redacted(&a),
                    // text that is not JSON cannot be redacted key by key: with `redact` set it
                    // is not recorded at all (a secret may sit in a broken object)
                    Err(_) if !self.redact.is_empty() => Value::String(format!("[redacted: {} bytes that are not JSON]", t.len())),
                    Err(_) => Value::String(t.chars().take(4096).collect()),
                }),
                (None, RawArgs::None) => None,
            }
        };
        let ctx = d.ctx;
        let line = Line {
            v: FORMAT_VERSION,
            kind: "decision",
            time: crate::time::rfc3339(d.now_ms),
            id: self.next_id(),
            sub: ctx.subject.as_deref(),
            session: ctx.session.as_deref(),
            roles: &ctx.roles,
            purpose: ctx.purpose.as_deref(),
            surface: ctx.is_operator().then_some("operator"),
            dialect: d.dialect.map(|x| x.as_str()),
            call_id: d.call_id,
            step: d.step,
            tool: d.tool,
            action: v.action.as_deref(),
            resource: v.resource.as_deref(),
            outcome: v.outcome.as_str(),
            reason: v.reason.map(|r| r.as_str()),
            shadow: v.shadow,
            would_be: v.would_be.map(|r| r.as_str()),
            flags: v.flags.iter().map(|f| self.flag(f)).collect(),
            latency_us: d.latency_us,
            args_hash,
            args,
            identity: if self.include_arguments { ctx.identity.as_ref().map(|m| self.redacted(&Value::Object(m.clone()))) } else { None },
            context: if self.include_arguments { ctx.context.as_ref().map(|m| self.redacted(&Value::Object(m.clone()))) } else { None },
            jti: d.jti,
            config_hash: &self.config_hash,
        };
        // one buffer sized for a typical record: no regrowth while serializing
        let mut buf = Vec::with_capacity(512);
        match serde_json::to_writer(&mut buf, &line).map(|()| String::from_utf8(buf)) {
            Ok(Ok(text)) => self.push(text),
            _ => {
                self.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Records a whole turn refused before any call was decided (`E_PAYLOAD`, `E_DIALECT`).
    pub fn record_error(&self, ctx: &CallContext, dialect: Option<&str>, code: &str, message: &str, now_ms: u64) {
        let line = ErrorLine {
            v: FORMAT_VERSION,
            kind: "turn_error",
            time: crate::time::rfc3339(now_ms),
            id: self.next_id(),
            sub: ctx.subject.as_deref(),
            session: ctx.session.as_deref(),
            dialect,
            code,
            message,
            config_hash: &self.config_hash,
        };
        if let Ok(text) = serde_json::to_string(&line) {
            self.push(text);
        }
    }

    /// A flag as recorded: its `from`/`to` values only when records include arguments.
    fn flag(&self, f: &Flag) -> Value {
        let mut m = Map::with_capacity(4);
        m.insert("code".into(), serde_json::to_value(f.code).unwrap_or(Value::Null));
        m.insert("path".into(), Value::String(f.path.clone()));
        if self.include_arguments {
            if let Some(from) = &f.from {
                m.insert("from".into(), self.redact_at(&f.path, from));
            }
            if let Some(to) = &f.to {
                m.insert("to".into(), self.redact_at(&f.path, to));
            }
        }
        Value::Object(m)
    }

    /// `v` as recorded for a flag at JSON Pointer `path`: redacted whole when any key on the
    /// path is a redacted one (a value inside a secret is secret too), else key by key.
    fn redact_at(&self, path: &str, v: &Value) -> Value {
        let hit = path.split('/').skip(1).any(|seg| {
            let key = seg.replace("~1", "/").replace("~0", "~");
            self.redact.contains(&key)
        });
        if hit {
            Value::String("[redacted]".into())
        } else {
            self.redacted(v)
        }
    }

    /// `v` with the value of every redacted key (at any depth) replaced.
    fn redacted(&self, v: &Value) -> Value {
        if self.redact.is_empty() {
            return v.clone();
        }
        match v {
            Value::Object(m) => Value::Object(
                m.iter()
                    .map(|(k, x)| {
                        let x = if self.redact.iter().any(|r| r == k) { Value::String("[redacted]".into()) } else { self.redacted(x) };
                        (k.clone(), x)
                    })
                    .collect(),
            ),
            Value::Array(a) => Value::Array(a.iter().map(|x| self.redacted(x)).collect()),
            // a string holding JSON (a stringified object the model sent, a flag's `from` before
            // unpacking) is redacted inside, and kept as text
            Value::String(text) if looks_like_json(text) => match serde_json::from_str::<Value>(text) {
                Ok(inner @ (Value::Object(_) | Value::Array(_))) => {
                    let r = self.redacted(&inner);
                    if r == inner {
                        v.clone()
                    } else {
                        Value::String(serde_json::to_string(&r).unwrap_or_else(|_| "[redacted]".into()))
                    }
                }
                _ => v.clone(),
            },
            other => other.clone(),
        }
    }
}

/// Whether `text` may hold a JSON object or array (worth parsing to redact inside).
fn looks_like_json(text: &str) -> bool {
    matches!(text.trim_start().as_bytes().first(), Some(b'{' | b'['))
}
