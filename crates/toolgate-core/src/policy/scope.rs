//! The facts a policy condition reads for one decision. Built by the gate from the host's
//! `CallContext` (roles, identity, purpose, context, subject) and the call itself (tool,
//! action, resource, repaired arguments); nothing in it comes from what a model wrote except
//! `args`, `resource` (a template over the arguments) and the tool name.

use serde_json::{Map, Value};

/// Facts for one evaluation. Borrowed: building one costs no allocation.
#[derive(Debug, Clone, Copy)]
pub struct Scope<'a> {
    /// The caller's roles (`roles has 'x'`, `'x' in roles`).
    pub roles: &'a [String],
    /// Other identity facts (`identity.tenant`, nested `identity.org.id`).
    pub identity: Option<&'a Map<String, Value>>,
    /// Why the agent acts (`purpose`).
    pub purpose: Option<&'a str>,
    /// Host-supplied key/values (`context.region`); values are strings.
    pub context: Option<&'a Map<String, Value>>,
    /// Who acts (`subject`).
    pub subject: Option<&'a str>,
    /// The tool called (`tool`); `None` while evaluating a persona (no call yet).
    pub tool: Option<&'a str>,
    /// The policy action (`action`): the tool's declared action or its name.
    pub action: Option<&'a str>,
    /// The resolved resource (`resource`); `None` when the tool declares none.
    pub resource: Option<&'a str>,
    /// `resource` is case-folded (the tool's resources compare case-insensitively): rule
    /// `resources` globs are matched in their folded form, the subject folded too.
    pub resource_folded: bool,
    /// The repaired arguments (`args.x`, nested `args.a.b`).
    pub args: Option<&'a Map<String, Value>>,
    /// `true` while listing tools (`filterTools`): the call's arguments are not known yet, so
    /// `args.*` and `resource` are *unknown* (three-valued logic), not missing.
    pub listing: bool,
    /// The current time, milliseconds since the Unix epoch (`now`).
    pub now_ms: u64,
}
