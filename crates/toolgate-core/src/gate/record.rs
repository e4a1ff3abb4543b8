//! The end of every decision (docs/architecture.md, "The path of one call": verdict, receipt, audit record): an allowed
//! verdict gets its signed receipt when receipts are configured, and every final verdict becomes
//! one audit record. Stage-one answers of a gate with engines are not final and are neither
//! signed nor recorded.

use std::time::Instant;

use super::who::{Stage, Who};
use super::Gate;
use crate::audit::{Decision, RawArgs};
use crate::dialect::Dialect;
use crate::receipt::{new_jti, Claims};
use crate::verdict::{Reason, Verdict};

/// Where a finished decision came from.
#[derive(Debug, Clone, Copy)]
pub struct Origin<'a> {
    /// The dialect of the turn (`None` for `check` and `confirm`).
    pub dialect: Option<Dialect>,
    /// The call id (wire id, or the host's `callId`).
    pub call_id: Option<&'a str>,
    /// The tool called.
    pub tool: &'a str,
    /// The arguments as received (kept only when records include arguments).
    pub raw: RawArgs<'a>,
    /// When the decision started (`None` when nothing records its latency: see
    /// [`Gate::decision_start`]).
    pub started: Option<Instant>,
    /// `Some("confirm")` for the second step of confirm-before-write.
    pub step: Option<&'static str>,
}

impl Gate {
    /// The start of a decision's latency, read only when the audit log records it (no clock read
    /// on the hot path otherwise).
    pub fn decision_start(&self) -> Option<Instant> {
        self.audit().map(|_| Instant::now())
    }

    /// Signs and records a final verdict; returns it (with its receipt). At [`Stage::Ask`] a
    /// verdict that puts a question to the engines is not final (the second step decides the
    /// call again and records it) and is returned as it is; one without a question — refused
    /// before the engines' stage — is the host's answer, so it is recorded here like any other.
    pub fn finish(&self, who: &Who<'_>, origin: Origin<'_>, mut v: Verdict) -> Verdict {
        if matches!(who.stage, Stage::Ask) && v.engine_question.is_some() {
            return v;
        }
        let mut jti = None;
        if v.allowed() {
            if let Some(r) = self.receipts() {
                match new_jti() {
                    Ok(id) => {
                        let iat = who.now_ms / 1000;
                        let claims = Claims {
                            sub: who.ctx.subject.as_deref(),
                            tool: origin.tool,
                            action: v.action.as_deref(),
                            resource: v.resource.as_deref(),
                            call_id: origin.call_id,
                            args: crate::receipt::args_digest(v.arguments.as_ref().unwrap_or(&serde_json::Value::Null)),
                            iat,
                            exp: iat.saturating_add(r.ttl_seconds),
                            jti: id,
                        };
                        v.receipt = Some(r.key.issue(&claims));
                        jti = Some(claims.jti);
                    }
                    Err(_) => {
                        // no receipt can be issued: the call must not run without one
                        v = Verdict::denied(Reason::AuditUnavailable, format!("`{}` could not be given its signed receipt; it was not run.", origin.tool));
                    }
                }
            }
        }
        if let Some(log) = self.audit() {
            log.record(&Decision {
                ctx: who.ctx,
                dialect: origin.dialect,
                call_id: origin.call_id,
                tool: origin.tool,
                verdict: &v,
                raw: origin.raw,
                now_ms: who.now_ms,
                latency_us: origin.started.map_or(0, |t| t.elapsed().as_micros() as u64),
                jti: jti.as_deref(),
                step: origin.step,
            });
        }
        v
    }
}
