//! Deny by default: personas and allow/deny rules, compiled once, evaluated per call. The
//! per-tool declarations (action, resource, globs, pins …) live in [`tool`]; conditions in
//! [`condition`]; globs in [`glob`]; resource templates in [`resource`].

pub mod condition;
pub mod glob;
pub mod resource;
pub mod scope;
pub mod tool;

use condition::{Condition, Truth};
use glob::Glob;
use scope::Scope;

use crate::config::{Effect, PolicyConfig, RuleConfig};
use crate::context::CallContext;
use crate::error::GateError;

/// One compiled rule. Its `tools`/`actions` selectors are resolved at compile time into each
/// tool's candidate list, so they are not kept here.
#[derive(Debug, Clone)]
struct Rule {
    id: String,
    effect: Effect,
    roles: Option<Vec<String>>,
    personas: Option<Vec<usize>>,
    subjects: Option<Vec<Glob>>,
    resources: Option<ResourceGlobs>,
    when: Option<Condition>,
    confirm: Option<bool>,
}

/// A rule's `resources`, compiled twice: as written, and case-folded for tools whose resources
/// compare case-insensitively (`resources.caseInsensitive`). A pattern ending in `/**` also
/// matches the directory itself (`file:reports/private/**` covers `file:reports/private`),
/// so a deny on a folder cannot be dodged by naming the folder.
#[derive(Debug, Clone)]
struct ResourceGlobs {
    exact: Vec<Glob>,
    folded: Vec<Glob>,
    /// Per pattern of `exact`/`folded` (same index): with `{subject}` read as `**`, for a deny
    /// asked without a subject — it applies when some subject could make it match.
    any_subject: Vec<Option<(Glob, Glob)>>,
}

/// `p` with every unescaped `{subject}` replaced by `**` (any run).
fn subject_as_wildcard(p: &str) -> String {
    let mut out = String::with_capacity(p.len());
    let mut rest = p;
    while let Some(c) = rest.chars().next() {
        if c == '\\' {
            let n = rest[1..].chars().next().map_or(0, char::len_utf8);
            out.push_str(&rest[..1 + n]);
            rest = &rest[1 + n..];
        } else if let Some(after) = rest.strip_prefix("{subject}") {
            out.push_str("**");
            rest = after;
        } else {
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

impl ResourceGlobs {
    fn compile(patterns: &[String], cfg: impl Fn(usize, String) -> GateError) -> Result<ResourceGlobs, GateError> {
        let mut exact = Vec::with_capacity(patterns.len());
        let mut folded = Vec::with_capacity(patterns.len());
        let mut any_subject = Vec::with_capacity(patterns.len());
        for (j, p) in patterns.iter().enumerate() {
            let mut forms = vec![p.clone()];
            if let Some(dir) = p.strip_suffix("/**") {
                // not when the slash is escaped (`a\/**`): then the pattern names no folder
                let escaped = dir.chars().rev().take_while(|&c| c == '\\').count() % 2 == 1;
                if !dir.is_empty() && !escaped {
                    forms.push(dir.to_owned());
                }
            }
            for f in forms {
                let g = Glob::compile(&f).map_err(|e| cfg(j, e.to_string()))?;
                any_subject.push(if g.needs_subject() {
                    let w = subject_as_wildcard(&f);
                    let c = |s: &str| Glob::compile(s).map_err(|e| cfg(j, e.to_string()));
                    Some((c(&w)?, c(&crate::json::hazards::fold_case(&w))?))
                } else {
                    None
                });
                exact.push(g);
                folded.push(Glob::compile(&crate::json::hazards::fold_case(&f)).map_err(|e| cfg(j, e.to_string()))?);
            }
        }
        Ok(ResourceGlobs { exact, folded, any_subject })
    }

    /// Whether pattern `i` could match `res` for some subject (a deny asked without one).
    fn could_match_any_subject(&self, i: usize, res: &str, folded: bool) -> bool {
        match &self.any_subject[i] {
            Some((exact, f)) => if folded { f } else { exact }.matches(res),
            None => false,
        }
    }

    /// The globs for a resource compared as written, or case-folded.
    fn for_scope(&self, folded: bool) -> &[Glob] {
        if folded {
            &self.folded
        } else {
            &self.exact
        }
    }
}

/// A compiled `policy` block.
#[derive(Debug, Clone)]
pub struct Policy {
    personas: Vec<(String, Condition)>,
    rules: Vec<Rule>,
    tool_globs: Vec<Option<Vec<Glob>>>,
    action_globs: Vec<Option<Vec<Glob>>>,
}

/// What the rules concluded for one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleVerdict {
    /// Allowed; `confirm` is what matching allow rules said about confirmation (`Some(true)`
    /// if any asks for it, else `Some(false)` if any waives it, else `None`).
    Allow {
        /// See above.
        confirm: Option<bool>,
    },
    /// A deny rule matched (its id).
    Deny(String),
    /// No allow rule matched; `needed_subject`: some allow rule could not apply because the
    /// context names no subject.
    NoRule {
        /// See above.
        needed_subject: bool,
    },
}

impl Policy {
    /// Compiles `policy`. Names every problem with its config path: unknown personas, empty
    /// selector lists, `tools`/`actions` globs that match no declared tool (a typo there would
    /// silently disable a deny rule), condition errors with line and column.
    /// `warn`: rule `tools`/`actions` globs that match no declared tool are pushed there as
    /// warnings instead of failing the compile (for hosts whose tools are learned later, such as
    /// the MCP proxy before the server's first `tools/list`); `None`: they are `E_CONFIG`.
    pub fn compile(p: &PolicyConfig, tools: &[(String, String)], mut warn: Option<&mut Vec<String>>) -> Result<Policy, GateError> {
        let mut personas = Vec::with_capacity(p.personas.len());
        for (i, per) in p.personas.iter().enumerate() {
            let at = format!("policy.personas[{i}]");
            if per.name.is_empty() || personas.iter().any(|(n, _)| n == &per.name) {
                return Err(GateError::Config(format!("config at `{at}.name`: persona names must be non-empty and unique")));
            }
            let c = condition_at(&format!("{at}.when"), &per.when)?;
            if c.reads_call() {
                return Err(GateError::Config(format!(
                    "config at `{at}.when`: a persona describes the caller, so it may not read args, tool, action or resource"
                )));
            }
            personas.push((per.name.clone(), c));
        }
        let mut rules = Vec::with_capacity(p.rules.len());
        let mut tool_globs = Vec::with_capacity(p.rules.len());
        let mut action_globs = Vec::with_capacity(p.rules.len());
        for (i, r) in p.rules.iter().enumerate() {
            let at = format!("policy.rules[{i}]");
            let (rule, tg, ag) = compile_rule(r, &at, &personas, tools, warn.as_deref_mut())?;
            rules.push(rule);
            tool_globs.push(tg);
            action_globs.push(ag);
        }
        Ok(Policy { personas, rules, tool_globs, action_globs })
    }

    /// Indices of the rules whose `tools` and `actions` selectors match this tool: the only
    /// rules ever evaluated for its calls.
    pub fn candidates(&self, name: &str, action: &str) -> Vec<u32> {
        (0..self.rules.len())
            .filter(|&i| {
                self.tool_globs[i].as_ref().is_none_or(|gs| gs.iter().any(|g| g.matches(name)))
                    && self.action_globs[i].as_ref().is_none_or(|gs| gs.iter().any(|g| g.matches(action)))
            })
            .map(|i| i as u32)
            .collect()
    }

    /// The caller's persona: the first whose condition holds.
    pub fn persona_of(&self, ctx: &CallContext, now_ms: u64) -> Option<usize> {
        if self.personas.is_empty() {
            return None;
        }
        let scope = caller_scope(ctx, now_ms);
        self.personas.iter().position(|(_, c)| c.eval(&scope) == Truth::True)
    }

    /// Decides one call from its candidate rules: any matching deny wins, else some matching
    /// allow is needed.
    pub fn decide(&self, candidates: &[u32], scope: &Scope<'_>, persona: Option<usize>) -> RuleVerdict {
        let mut allowed = false;
        let mut confirm: Option<bool> = None;
        let mut needed_subject = false;
        for &i in candidates {
            let r = &self.rules[i as usize];
            if !r.matches_caller(scope, persona) {
                continue;
            }
            if let Some(globs) = &r.resources {
                let Some(res) = scope.resource else { continue };
                let mut hit = false;
                let folded_subject = match (scope.resource_folded, scope.subject) {
                    (true, Some(s)) => Some(crate::json::hazards::fold_case(s)),
                    _ => None,
                };
                let subject = folded_subject.as_deref().or(scope.subject);
                for (gi, g) in globs.for_scope(scope.resource_folded).iter().enumerate() {
                    match g.matches_with(res, subject) {
                        Some(true) => {
                            hit = true;
                            break;
                        }
                        Some(false) => {}
                        // a deny that needs the subject to tell fails closed: it applies when
                        // some subject could make it match
                        None if r.effect == Effect::Deny => {
                            if globs.could_match_any_subject(gi, res, scope.resource_folded) {
                                hit = true;
                                break;
                            }
                        }
                        None => needed_subject = true,
                    }
                }
                if !hit {
                    continue;
                }
            }
            if let Some(c) = &r.when {
                let applies = match r.effect {
                    Effect::Allow => c.eval(scope) == Truth::True,
                    // a deny whose condition cannot be decided denies (docs/conditions.md)
                    Effect::Deny => c.eval_deny(scope) != Truth::False,
                };
                if !applies {
                    continue;
                }
            }
            match r.effect {
                Effect::Deny => return RuleVerdict::Deny(r.id.clone()),
                Effect::Allow => {
                    allowed = true;
                    confirm = match (confirm, r.confirm) {
                        (Some(true), _) | (_, Some(true)) => Some(true),
                        (Some(false), _) | (_, Some(false)) => Some(false),
                        _ => None,
                    };
                }
            }
        }
        if allowed {
            RuleVerdict::Allow { confirm }
        } else {
            RuleVerdict::NoRule { needed_subject }
        }
    }

    /// Whether some arguments could make a call of this tool allowed for this caller (tool
    /// listing): `scope` is a listing scope (arguments and resource unknown). A tool is hidden
    /// when no allow rule could match, or when a deny rule matches whatever the arguments.
    pub fn could_allow(&self, candidates: &[u32], scope: &Scope<'_>, persona: Option<usize>, has_resource: bool) -> bool {
        self.could_allow_where(candidates, scope, has_resource, |_, r| r.matches_caller(scope, persona))
    }

    /// Which rules match this caller — roles, personas and subjects, the parts of a rule that do
    /// not depend on the tool — by rule index: asked once for a whole listing instead of once
    /// per tool and rule (see [`Policy::could_allow_for`]).
    pub fn caller_rules(&self, scope: &Scope<'_>, persona: Option<usize>) -> Vec<bool> {
        self.rules.iter().map(|r| r.matches_caller(scope, persona)).collect()
    }

    /// Whether no allow rule matches this caller ([`Policy::caller_rules`] for the caller): then
    /// [`Policy::could_allow_for`] is `false` for every tool, and a listing need not ask each.
    pub fn allows_none(&self, caller_rules: &[bool]) -> bool {
        !self.rules.iter().zip(caller_rules).any(|(r, &matches)| matches && matches!(r.effect, Effect::Allow))
    }

    /// [`Policy::could_allow`] with the caller's rules found once ([`Policy::caller_rules`] for
    /// the same caller): the same answer.
    pub fn could_allow_for(&self, candidates: &[u32], scope: &Scope<'_>, caller_rules: &[bool], has_resource: bool) -> bool {
        self.could_allow_where(candidates, scope, has_resource, |i, _| caller_rules.get(i).copied().unwrap_or(false))
    }

    fn could_allow_where(&self, candidates: &[u32], scope: &Scope<'_>, has_resource: bool, matches_caller: impl Fn(usize, &Rule) -> bool) -> bool {
        let mut could = false;
        for &i in candidates {
            let r = &self.rules[i as usize];
            if !matches_caller(i as usize, r) {
                continue;
            }
            let truth = r.when.as_ref().map_or(Truth::True, |c| c.eval(scope));
            if truth == Truth::False {
                continue;
            }
            let resource_ok = match &r.resources {
                None => true,
                Some(globs) => has_resource && globs.exact.iter().any(|g| scope.subject.is_some() || !g.needs_subject()),
            };
            match r.effect {
                Effect::Deny if r.resources.is_none() && truth == Truth::True => return false,
                Effect::Deny => {}
                Effect::Allow => could |= resource_ok,
            }
        }
        could
    }
}

impl Rule {
    fn matches_caller(&self, scope: &Scope<'_>, persona: Option<usize>) -> bool {
        if let Some(roles) = &self.roles {
            if !roles.iter().any(|r| scope.roles.iter().any(|c| c == r)) {
                return false;
            }
        }
        if let Some(ps) = &self.personas {
            if !persona.is_some_and(|p| ps.contains(&p)) {
                return false;
            }
        }
        if let Some(globs) = &self.subjects {
            let Some(s) = scope.subject else { return false };
            if !globs.iter().any(|g| g.matches(s)) {
                return false;
            }
        }
        true
    }
}

/// The scope of a caller alone (personas): no call facts.
pub fn caller_scope(ctx: &CallContext, now_ms: u64) -> Scope<'_> {
    Scope {
        roles: &ctx.roles,
        identity: ctx.identity.as_ref(),
        purpose: ctx.purpose.as_deref(),
        context: ctx.context.as_ref(),
        subject: ctx.subject.as_deref(),
        tool: None,
        action: None,
        resource: None,
        resource_folded: false,
        args: None,
        listing: false,
        now_ms,
    }
}

type Globs = Option<Vec<Glob>>;

fn compile_rule(
    r: &RuleConfig,
    at: &str,
    personas: &[(String, Condition)],
    tools: &[(String, String)],
    mut warn: Option<&mut Vec<String>>,
) -> Result<(Rule, Globs, Globs), GateError> {
    let cfg = |key: &str, msg: String| GateError::Config(format!("config at `{at}.{key}`: {msg}"));
    let nonempty = |key: &str, v: &Option<Vec<String>>| -> Result<(), GateError> {
        match v {
            Some(l) if l.is_empty() => Err(cfg(key, "an empty list matches nothing; omit the key to match any".into())),
            _ => Ok(()),
        }
    };
    for (key, v) in
        [("roles", &r.roles), ("personas", &r.personas), ("subjects", &r.subjects), ("tools", &r.tools), ("actions", &r.actions), ("resources", &r.resources)]
    {
        nonempty(key, v)?;
    }
    let globs = |key: &str, v: &Option<Vec<String>>, subject_ok: bool| -> Result<Globs, GateError> {
        let Some(list) = v else { return Ok(None) };
        let mut out = Vec::with_capacity(list.len());
        for (j, p) in list.iter().enumerate() {
            let g = Glob::compile(p).map_err(|e| cfg(&format!("{key}[{j}]"), e.to_string()))?;
            if g.needs_subject() && !subject_ok {
                return Err(cfg(&format!("{key}[{j}]"), "`{subject}` expands only in `resources`".into()));
            }
            out.push(g);
        }
        Ok(Some(out))
    };
    let tool_globs = globs("tools", &r.tools, false)?;
    let action_globs = globs("actions", &r.actions, false)?;
    let mut unmatched = |e: GateError| -> Result<(), GateError> {
        match warn.as_deref_mut() {
            Some(list) => {
                list.push(e.to_string());
                Ok(())
            }
            None => Err(e),
        }
    };
    if let Some(gs) = &tool_globs {
        for (j, g) in gs.iter().enumerate() {
            if !tools.iter().any(|(name, _)| g.matches(name)) {
                unmatched(cfg(&format!("tools[{j}]"), format!("`{}` matches no declared tool", g.source())))?;
            }
        }
    }
    if let Some(gs) = &action_globs {
        for (j, g) in gs.iter().enumerate() {
            if !tools.iter().any(|(_, action)| g.matches(action)) {
                unmatched(cfg(&format!("actions[{j}]"), format!("`{}` matches no declared tool's action", g.source())))?;
            }
        }
    }
    let personas = match &r.personas {
        None => None,
        Some(names) => Some(
            names
                .iter()
                .enumerate()
                .map(|(j, n)| personas.iter().position(|(p, _)| p == n).ok_or_else(|| cfg(&format!("personas[{j}]"), format!("unknown persona `{n}`"))))
                .collect::<Result<Vec<_>, _>>()?,
        ),
    };
    if r.effect == Effect::Deny && r.confirm.is_some() {
        return Err(cfg("confirm", "only allow rules can ask for or waive confirmation".into()));
    }
    let rule = Rule {
        id: r.id.clone().unwrap_or_else(|| at.trim_start_matches("policy.").to_owned()),
        effect: r.effect,
        roles: r.roles.clone(),
        personas,
        subjects: globs("subjects", &r.subjects, false)?,
        resources: match &r.resources {
            None => None,
            Some(list) => Some(ResourceGlobs::compile(list, |j, e| cfg(&format!("resources[{j}]"), e))?),
        },
        when: r.when.as_deref().map(|w| condition_at(&format!("{at}.when"), w)).transpose()?,
        confirm: r.confirm,
    };
    Ok((rule, tool_globs, action_globs))
}

fn condition_at(at: &str, src: &str) -> Result<Condition, GateError> {
    Condition::parse(src).map_err(|e| GateError::Config(format!("config at `{at}`: {e}")))
}
