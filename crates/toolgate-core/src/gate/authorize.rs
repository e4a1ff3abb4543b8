//! The policy half of the pipeline (docs/architecture.md, "The path of one call"), after the arguments are
//! valid: resolve action and resource (fail closed) → argument globs → policy rules → plugged
//! engines → loop and taint → confirm-before-write → record state. One place decides; `check`,
//! `guard`, streams and `confirm` all come through here.

use serde_json::{Map, Value};

use super::who::{EngineAnswer, Stage, Who};
use super::{Gate, Tool};
use crate::context::CallContext;
use crate::policy::resource::ResolveError;
use crate::policy::scope::Scope;
use crate::policy::RuleVerdict;
use crate::state::{canonical_key, new_token, stable_canonical_key, LoopCheck, PendingConfirm, Settle, StateError, EVICTED};
use crate::verdict::{Confirmation, Reason, RulesAnswer, Verdict};

impl Gate {
    /// Builds the caller of one decision: the persona is found once, the clock read once (not
    /// at all on a gate where no decision depends on the time).
    pub fn who<'a>(&self, ctx: &'a CallContext, stage: Stage<'a>) -> Who<'a> {
        let now_ms = self.decision_time();
        let persona = self.policy().and_then(|p| p.persona_of(ctx, now_ms));
        Who { ctx, persona, now_ms, stage, index: 0, confirming: false }
    }

    /// Runs the policy half of the pipeline on an allowed (schema-valid) verdict.
    pub(crate) fn authorize(&self, t: &Tool, mut v: Verdict, who: &Who<'_>) -> Verdict {
        let decl = &t.decl;
        let Some(Value::Object(args)) = v.arguments.as_ref() else { return v };
        let with_policy = self.policy().is_some();
        let resource = match &decl.resource {
            None => None,
            Some(tpl) => match tpl.resolve(args, who.ctx.subject.as_deref()) {
                Ok(r) => Some(r),
                Err(ResolveError::Unresolved(why)) => {
                    return self.refuse(
                        t,
                        Reason::UnresolvedResource,
                        format!("Cannot run `{}`: {why}. Send a value that names one item inside the allowed scope.", t.name),
                        None,
                    )
                }
                Err(ResolveError::NoSubject) => return self.refuse(t, Reason::NoSubject, no_subject_message(&t.name), None),
            },
        };
        if let Some(refusal) = decl.check_globs(&t.name, args, who.ctx.subject.as_deref()) {
            return self.with_facts(t, refusal, resource, with_policy);
        }
        let rules = match self.policy() {
            None => RuleVerdict::Allow { confirm: None },
            Some(p) if t.resource_ci => {
                let folded = resource.as_deref().map(crate::json::hazards::fold_case);
                let scope = Scope { resource_folded: true, ..call_scope(who, t, args, folded.as_deref()) };
                p.decide(&t.candidates, &scope, who.persona)
            }
            Some(p) => p.decide(&t.candidates, &call_scope(who, t, args, resource.as_deref()), who.persona),
        };
        // shadow mode: a policy-level refusal is remembered (the first one is what enforcement
        // would have answered) and the call goes on through the later stages
        let mut would_be: Option<Reason> = None;
        let shadow = decl.shadow;
        let confirm_rule = match rules {
            RuleVerdict::Deny(_) if shadow => {
                would_be = Some(Reason::DenyRule);
                Some(None)
            }
            RuleVerdict::Deny(_) => {
                let m = format!(
                    "Not permitted: policy denies `{}`{} for this caller. Do not retry; choose another approach or ask the user.",
                    t.name,
                    on(&resource)
                );
                return self.refuse(t, Reason::DenyRule, m, resource);
            }
            RuleVerdict::Allow { confirm } => Some(confirm),
            RuleVerdict::NoRule { .. } => None,
        };
        let confirm_rule = match (who.stage, confirm_rule) {
            (Stage::Ask, c) => {
                v.engine_question = Some(if c.is_some() { RulesAnswer::Allow } else { RulesAnswer::NoRule });
                return self.with_facts(t, v, resource, true);
            }
            (Stage::Full, Some(c)) => c,
            (Stage::Full, None) if shadow && !needs_subject(&rules) => {
                would_be.get_or_insert(Reason::NoRule);
                None
            }
            (Stage::Full, None) => return self.no_rule(t, rules, resource),
            (Stage::Answers(answers), c) => match (answers.get(who.index).copied().unwrap_or(EngineAnswer::Deny), c) {
                (EngineAnswer::Deny | EngineAnswer::Unasked, c) if shadow => {
                    would_be.get_or_insert(Reason::Engine);
                    c.flatten()
                }
                (EngineAnswer::Deny, _) => {
                    let m = format!("Not permitted: the policy engine refused `{}`{} for this caller. Do not retry; ask the user.", t.name, on(&resource));
                    return self.refuse(t, Reason::Engine, m, resource);
                }
                (EngineAnswer::Unasked, _) => {
                    let m = format!(
                        "Not permitted: the policy engine did not judge `{}`{} (the rules for it changed while this turn was decided). Send the call again.",
                        t.name,
                        on(&resource)
                    );
                    return self.refuse(t, Reason::Engine, m, resource);
                }
                (EngineAnswer::Allow, c) => c.flatten(),
                (EngineAnswer::Delegate, Some(c)) => c,
                (EngineAnswer::Delegate, None) if shadow && !needs_subject(&rules) => {
                    would_be.get_or_insert(Reason::NoRule);
                    None
                }
                (EngineAnswer::Delegate, None) => return self.no_rule(t, rules, resource),
            },
        };
        let needs_confirm = match confirm_rule {
            Some(true) => true,
            Some(false) => false,
            None => decl.writes,
        };
        let asking = needs_confirm && !who.confirming;
        // the audit check comes after loop, taint and rate limits (their refusals win), so a call
        // the audit cannot record is settled without recording and refused after
        let audit_blocks = !asking && self.audit().is_some_and(|a| !a.admits());
        let loop_guard = decl.loop_guard.or(self.loop_guard());
        // a store shared by several processes needs the same key for the same call in each
        let key_of = if self.has_remote_state() { stable_canonical_key } else { canonical_key };
        let loop_check = loop_guard.map(|l| LoopCheck {
            key: key_of(&t.name, v.arguments.as_ref().unwrap_or(&Value::Null)),
            since_ms: who.now_ms.saturating_sub(l.window_seconds.saturating_mul(1000)),
            max: l.max_identical,
            keep: l.max_identical.saturating_add(1),
            window_ms: l.window_seconds.saturating_mul(1000),
        });
        let q = Settle {
            scope: who.ctx.state_scope(),
            labels: self.labels(),
            now_ms: who.now_ms,
            loop_check,
            sink_max: decl.sink,
            rates: self.rate_limits().checks(&t.name, who.ctx),
            record: !asking && !audit_blocks,
            enforce: !shadow,
            raise: decl.output,
        };
        if q.loop_check.is_none() && q.sink_max.is_none() && q.rates.is_empty() && q.raise.is_none() && !asking && !audit_blocks {
            // nothing to read or record: no round trip to the store
            v.shadow = would_be.is_some();
            v.would_be = would_be;
            return self.with_facts(t, v, resource, with_policy);
        }
        let seen = match self.store().settle(&q) {
            Ok(seen) => seen,
            Err(e) => return self.refuse(t, Reason::StateUnavailable, state_unavailable_message(&t.name, &e), resource),
        };
        if let (Some(l), Some(lc)) = (loop_guard, q.loop_check) {
            if seen.loop_seen >= lc.max && shadow {
                would_be.get_or_insert(Reason::Loop);
            } else if seen.loop_seen >= lc.max {
                let m = format!(
                    "You have already called `{}` with these exact arguments {} times in the last {} seconds; repeating it will not change the result. Change course: use the results you have, change the arguments, or ask the user.",
                    t.name, seen.loop_seen, l.window_seconds
                );
                return self.refuse(t, Reason::Loop, m, resource);
            }
        }
        if let Some(max) = q.sink_max {
            let level = seen.taint;
            if (level == EVICTED || level > max) && shadow {
                would_be.get_or_insert(Reason::Taint);
            } else if level == EVICTED || level > max {
                let held = if level == EVICTED {
                    "data this gate no longer tracks (treated as the most sensitive)".to_owned()
                } else {
                    format!("data labelled `{}`", self.label(level))
                };
                let m = format!(
                    "Not permitted: this session has read {held}, and `{}` may only carry data up to `{}`. Do not send that data out; ask the user.",
                    t.name,
                    self.label(max)
                );
                return self.refuse(t, Reason::Taint, m, resource);
            }
        }
        if seen.rates.len() != q.rates.len() {
            let e = StateError("the store answered the wrong number of rate counters".into());
            return self.refuse(t, Reason::StateUnavailable, state_unavailable_message(&t.name, &e), resource);
        }
        // over several limits: the one that frees up last says when to retry
        let over = q.rates.iter().zip(&seen.rates).filter(|(r, s)| s.count >= r.max).max_by_key(|(_, s)| s.reset_ms);
        if let Some((r, s)) = over {
            if shadow {
                would_be.get_or_insert(Reason::RateLimited);
            } else {
                return self.refuse(t, Reason::RateLimited, rate_limited_message(&t.name, r.max, r.window_ms, s.reset_ms, who.now_ms), resource);
            }
        }
        v.shadow = would_be.is_some();
        v.would_be = would_be;
        if asking {
            return self.ask_confirmation(t, v, who, resource);
        }
        if audit_blocks {
            let m = format!("`{}` cannot run now: its decision cannot be recorded. Try again later.", t.name);
            return self.refuse(t, Reason::AuditUnavailable, m, resource);
        }
        if !seen.recorded {
            // admitted by what was read but not recorded: only a store breaking its contract
            let e = StateError("the store did not record an admitted call".into());
            return self.refuse(t, Reason::StateUnavailable, state_unavailable_message(&t.name, &e), resource);
        }
        self.with_facts(t, v, resource, with_policy)
    }

    fn ask_confirmation(&self, t: &Tool, v: Verdict, who: &Who<'_>, resource: Option<String>) -> Verdict {
        let Ok(token) = new_token() else {
            return self.refuse(t, Reason::TokenInvalid, "The confirmation for this call could not be prepared; it was not run.".into(), resource);
        };
        let expires_ms = who.now_ms.saturating_add(self.confirm_ttl_ms());
        let arguments = v.arguments.unwrap_or(Value::Null);
        let summary = crate::summary::summary(&t.name, resource.as_deref(), &arguments, &t.summary_order);
        let pending = PendingConfirm {
            tool: t.name.clone(),
            arguments,
            subject: who.ctx.subject.clone(),
            scope: who.ctx.state_scope().to_owned(),
            expires_ms,
            flags: v.flags,
        };
        if let Err(e) = self.store().put_token(&token, pending) {
            return self.refuse(t, Reason::StateUnavailable, state_unavailable_message(&t.name, &e), resource);
        }
        let mut c = Verdict::denied(
            Reason::ConfirmRequired,
            format!(
                "`{}` changes data, so it waits for the user's confirmation and has not run yet. Tell the user what it will do and wait for their answer.",
                t.name
            ),
        );
        c.confirmation = Some(Confirmation { token, expires_at: crate::time::rfc3339(expires_ms), summary });
        self.with_facts(t, c, resource, true)
    }

    fn no_rule(&self, t: &Tool, rules: RuleVerdict, resource: Option<String>) -> Verdict {
        if matches!(rules, RuleVerdict::NoRule { needed_subject: true }) {
            return self.refuse(t, Reason::NoSubject, no_subject_message(&t.name), resource);
        }
        let m = format!(
            "Not permitted: no policy rule allows `{}`{} for this caller. Do not retry; choose another approach or ask the user.",
            t.name,
            on(&resource)
        );
        self.refuse(t, Reason::NoRule, m, resource)
    }

    fn refuse(&self, t: &Tool, reason: Reason, message: String, resource: Option<String>) -> Verdict {
        self.with_facts(t, Verdict::denied(reason, message), resource, true)
    }

    /// The rest of the pipeline for a call decided at [`Stage::Ask`] whose verdict puts a question
    /// to the engines (a kept turn or call: `pending_turn.rs`, `pending_call.rs`): what that step
    /// added at the engines' stage (the question, the action and resource) is taken off and
    /// [`Gate::authorize`] runs again with `who`'s answers, time and state. Not signed or
    /// recorded ([`Gate::finish`] does that).
    pub(crate) fn after_engines(&self, tool: &str, mut v: Verdict, who: &Who<'_>) -> Verdict {
        v.engine_question = None;
        v.action = None;
        v.resource = None;
        match self.tool_named(tool) {
            Some(t) => self.authorize(t, v, who),
            None => Verdict::denied(Reason::Engine, format!("Not permitted: `{tool}` could not be decided. Send the call again.")),
        }
    }

    /// Adds what policy was asked (action, resource) to a verdict, when there is a policy or a
    /// resource to tell.
    fn with_facts(&self, t: &Tool, mut v: Verdict, resource: Option<String>, always: bool) -> Verdict {
        if always || resource.is_some() {
            v.action = Some(t.decl.action.clone());
            v.resource = resource;
        }
        v
    }

    /// The second step of confirm-before-write: a pending call is taken exactly once and runs
    /// through policy, engines, loop and taint again with the current state. An unknown, used,
    /// expired or other caller's token is `token_invalid`. At [`Stage::Ask`] the token is left
    /// in place. Answers the confirmed tool's name (`None` for an invalid token) with the verdict.
    pub fn confirm(&self, token: &str, who: &Who<'_>) -> (Option<String>, Verdict) {
        let started = self.decision_start();
        let (tool, v) = self.confirm_inner(token, who);
        // every confirmation is recorded, refused ones included (an unknown token has no tool)
        let origin = super::record::Origin {
            dialect: None,
            call_id: who.ctx.call_id.as_deref(),
            tool: tool.as_deref().unwrap_or(""),
            raw: crate::audit::RawArgs::None,
            started,
            step: Some("confirm"),
        };
        let v = self.finish(who, origin, v);
        (tool, v)
    }

    fn confirm_inner(&self, token: &str, who: &Who<'_>) -> (Option<String>, Verdict) {
        let store = self.store();
        let invalid = || {
            (
                None,
                Verdict::denied(
                    Reason::TokenInvalid,
                    "This confirmation is not valid (unknown, already used, expired, or for another user); the call was not run.".into(),
                ),
            )
        };
        let unavailable = |e: StateError| {
            let m = format!("This confirmation could not be checked: {e}. The call was not run; try confirming again later.");
            (None, Verdict::denied(Reason::StateUnavailable, m))
        };
        let p = match store.take_token(token, who.now_ms) {
            Ok(Some(p)) => p,
            Ok(None) => return invalid(),
            Err(e) => return unavailable(e),
        };
        // the token is bound to the caller and the session it was issued in: confirming from
        // another session would dodge that session's taint and loop state
        let mismatch = p.subject != who.ctx.subject || p.scope != who.ctx.state_scope();
        if mismatch || matches!(who.stage, Stage::Ask) {
            if let Err(e) = store.put_token(token, p.clone()) {
                return unavailable(e);
            }
            if mismatch {
                return invalid();
            }
        }
        let Some(t) = self.tool_named(&p.tool) else { return invalid() };
        if t.decl.operator && !who.ctx.is_operator() {
            return (Some(p.tool), self.surface_refusal(t));
        }
        let v = Verdict::allow(p.arguments, p.flags, false);
        let v = self.authorize(t, v, &Who { confirming: true, ..*who });
        (Some(p.tool), v)
    }

    /// The refusal of an operator tool called from the visitor surface.
    pub(crate) fn surface_refusal(&self, t: &Tool) -> Verdict {
        Verdict::denied(Reason::Surface, format!("`{}` is not available here. Do not retry; choose another approach.", t.name))
    }
}

fn call_scope<'a>(who: &Who<'a>, t: &'a Tool, args: &'a Map<String, Value>, resource: Option<&'a str>) -> Scope<'a> {
    Scope { tool: Some(&t.name), action: Some(&t.decl.action), resource, args: Some(args), ..crate::policy::caller_scope(who.ctx, who.now_ms) }
}

fn needs_subject(rules: &RuleVerdict) -> bool {
    matches!(rules, RuleVerdict::NoRule { needed_subject: true })
}

fn on(resource: &Option<String>) -> String {
    resource.as_ref().map(|r| format!(" on `{r}`")).unwrap_or_default()
}

fn no_subject_message(tool: &str) -> String {
    format!("Cannot run `{tool}`: it acts on behalf of a known user, and no user is known here. Ask the user to sign in; do not guess an identity.")
}

fn state_unavailable_message(tool: &str, e: &StateError) -> String {
    format!("`{tool}` cannot run now: {e}, so the gate cannot tell whether this call is allowed. It was not run; try again shortly.")
}

fn rate_limited_message(tool: &str, max: u32, window_ms: u64, reset_ms: u64, now_ms: u64) -> String {
    let wait_s = reset_ms.saturating_sub(now_ms).div_ceil(1000).max(1);
    format!(
        "`{tool}` is rate limited: at most {max} calls per {} seconds, and that many have been made. It was not run; it may be called again in {wait_s} seconds (at {}).",
        window_ms / 1000,
        crate::time::rfc3339(reset_ms)
    )
}
