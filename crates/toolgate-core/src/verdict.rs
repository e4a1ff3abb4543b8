//! The answer for one call (`Verdict` in docs/api.md), as the core produces it.

use serde::Serialize;
use serde_json::Value;

use crate::schema::flag::Flag;

/// What the gate decided. `passed` and `repaired` are the allowed outcomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Run it with the arguments exactly as sent.
    Passed,
    /// Run it with the repaired arguments.
    Repaired,
    /// Send the message back to the model: the call itself was wrong.
    Rejected,
    /// Send the message back to the model: this caller may not make this call.
    Denied,
    /// Ask the user: the call runs only after `gate.confirm` with the host-only token.
    Confirm,
}

impl Outcome {
    /// The stable wire name (`"passed"` …).
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Passed => "passed",
            Outcome::Repaired => "repaired",
            Outcome::Rejected => "rejected",
            Outcome::Denied => "denied",
            Outcome::Confirm => "confirm",
        }
    }
}

/// Why a call was refused (a closed set; docs/architecture.md, "The path of one call", gives the
/// order in which they are checked).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// The tool is not declared.
    UnknownTool,
    /// Not JSON, not an object, hostile, or beyond a limit.
    BadArguments,
    /// An operator tool called from the visitor surface.
    Surface,
    /// Schema violations left after safe repair.
    Invalid,
    /// A resource placeholder's argument missing, not a string/number, or escaping.
    UnresolvedResource,
    /// An argument outside its glob.
    ArgGlob,
    /// A pin or `{subject}` needs a subject and the context has none.
    NoSubject,
    /// A deny rule matched.
    DenyRule,
    /// No allow rule matched.
    NoRule,
    /// A plugged engine said no, failed or timed out.
    Engine,
    /// The same call repeated past its threshold.
    Loop,
    /// A sink called in a session tainted above its clearance.
    Taint,
    /// The audit sink cannot record.
    AuditUnavailable,
    /// A `writes` tool awaiting `gate.confirm`.
    ConfirmRequired,
    /// A confirmation token that is unknown, used, expired, or another caller's.
    TokenInvalid,
    /// The gate's shared state could not be read or written in time: nothing is allowed while
    /// state is unknown.
    StateUnavailable,
    /// Over a `rateLimits` entry; the message says when the caller may retry.
    RateLimited,
}

impl Reason {
    /// The stable wire name (`"unknown_tool"` …).
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::UnknownTool => "unknown_tool",
            Reason::BadArguments => "bad_arguments",
            Reason::Surface => "surface",
            Reason::Invalid => "invalid",
            Reason::UnresolvedResource => "unresolved_resource",
            Reason::ArgGlob => "arg_glob",
            Reason::NoSubject => "no_subject",
            Reason::DenyRule => "deny_rule",
            Reason::NoRule => "no_rule",
            Reason::Engine => "engine",
            Reason::Loop => "loop",
            Reason::Taint => "taint",
            Reason::AuditUnavailable => "audit_unavailable",
            Reason::ConfirmRequired => "confirm_required",
            Reason::TokenInvalid => "token_invalid",
            Reason::StateUnavailable => "state_unavailable",
            Reason::RateLimited => "rate_limited",
        }
    }

    /// The outcome a refusal for this reason carries (`rejected`: the call was wrong;
    /// `denied`: this caller may not; `confirm`: ask the user).
    pub fn outcome(self) -> Outcome {
        match self {
            Reason::UnknownTool | Reason::BadArguments | Reason::Invalid | Reason::Loop => Outcome::Rejected,
            Reason::ConfirmRequired => Outcome::Confirm,
            _ => Outcome::Denied,
        }
    }
}

/// The decision for one call. `arguments` is present iff the call is allowed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    /// What was decided.
    pub outcome: Outcome,
    /// True when the caller's own argument text can be run as it is (passed, nothing
    /// normalized). Not serialized: the binding answers such verdicts without a payload.
    #[serde(skip)]
    pub untouched: bool,
    /// Present iff allowed: the exact arguments to run with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Value>,
    /// One per change made, in the order made.
    pub flags: Vec<Flag>,
    /// For refusals: the model-readable message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// For refusals: why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<Reason>,
    /// What policy was asked (the tool's action), once the call reached policy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// The resolved resource, once the call reached policy and the tool declares one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// Outcome `confirm` only: the host-only one-time token.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confirmation: Option<Confirmation>,
    /// Iff allowed and receipts are configured: the signed receipt (compact JWS).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receipt: Option<String>,
    /// Shadow mode: this call was let through although enforcement would have refused it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub shadow: bool,
    /// Shadow mode: the reason enforcement would have refused with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub would_be: Option<Reason>,
    /// Set when the gate stopped at the engine stage (`Stage::Ask`): the built-in rules'
    /// result the plugged engines are asked about. Never set on a final verdict.
    #[serde(skip)]
    pub engine_question: Option<RulesAnswer>,
}

/// What policy said about a verdict beyond its outcome, as the binding's wires carry it (the
/// `check` wire's facts and each call of the turn wire). Serialized camelCase; absent parts
/// are left out.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Facts<'a> {
    /// The action policy was asked about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action: Option<&'a str>,
    /// The resolved resource.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource: Option<&'a str>,
    /// Outcome `confirm` only: the host-only token.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confirmation: Option<&'a Confirmation>,
    /// Stage-one only: the rules' answer the engines are asked about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engine: Option<&'static str>,
    /// The signed receipt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receipt: Option<&'a str>,
    /// Shadow mode: let through although enforcement would refuse.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub shadow: bool,
    /// Shadow mode: the reason enforcement would give.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub would_be: Option<&'static str>,
}

impl Facts<'_> {
    /// Whether there is nothing to tell.
    pub fn is_empty(&self) -> bool {
        self.action.is_none() && self.resource.is_none() && self.confirmation.is_none() && self.engine.is_none() && self.receipt.is_none() && !self.shadow
    }
}

/// What the built-in rules concluded, as told to plugged engines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RulesAnswer {
    /// Some allow rule matched and no deny did.
    Allow,
    /// No allow rule matched (engines may still allow).
    NoRule,
}

impl RulesAnswer {
    /// `"allow"` or `"no_rule"`.
    pub fn as_str(self) -> &'static str {
        match self {
            RulesAnswer::Allow => "allow",
            RulesAnswer::NoRule => "no_rule",
        }
    }
}

/// The host-only half of confirm-before-write. Never placed in a message, feedback or payload.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Confirmation {
    /// One-time token (192 bits from the OS CSPRNG, base64url).
    pub token: String,
    /// When it stops being accepted (RFC 3339, UTC).
    pub expires_at: String,
    /// What will run, for the host's confirmation prompt.
    pub summary: String,
}

impl Verdict {
    /// The policy facts of this verdict (see [`Facts`]).
    pub fn facts(&self) -> Facts<'_> {
        Facts {
            action: self.action.as_deref(),
            resource: self.resource.as_deref(),
            confirmation: self.confirmation.as_ref(),
            engine: self.engine_question.map(|q| q.as_str()),
            receipt: self.receipt.as_deref(),
            shadow: self.shadow,
            would_be: self.would_be.map(|r| r.as_str()),
        }
    }

    /// A verdict with `outcome` and nothing else set.
    fn bare(outcome: Outcome) -> Verdict {
        Verdict {
            outcome,
            untouched: false,
            arguments: None,
            flags: Vec::new(),
            message: None,
            reason: None,
            action: None,
            resource: None,
            confirmation: None,
            receipt: None,
            shadow: false,
            would_be: None,
            engine_question: None,
        }
    }

    /// Whether the call may run (passed or repaired).
    pub fn allowed(&self) -> bool {
        matches!(self.outcome, Outcome::Passed | Outcome::Repaired)
    }

    /// A refusal with its model-readable message; the outcome follows from the reason.
    pub fn rejected(reason: Reason, message: String) -> Verdict {
        Verdict { message: Some(message), reason: Some(reason), ..Verdict::bare(reason.outcome()) }
    }

    /// Same as [`Verdict::rejected`]; reads better for policy refusals.
    pub fn denied(reason: Reason, message: String) -> Verdict {
        Verdict::rejected(reason, message)
    }

    /// An allowed verdict: `passed` when nothing changed, else `repaired`. `untouched`: the
    /// caller's own argument text can run as is.
    pub fn allow(arguments: Value, flags: Vec<Flag>, untouched: bool) -> Verdict {
        let outcome = if flags.is_empty() { Outcome::Passed } else { Outcome::Repaired };
        Verdict { untouched: untouched && outcome == Outcome::Passed, arguments: Some(arguments), flags, ..Verdict::bare(outcome) }
    }
}
