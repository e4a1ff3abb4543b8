//! The answer for one call (SPEC.md `Verdict`), as the core produces it.

use serde::Serialize;
use serde_json::Value;

use crate::schema::flag::Flag;

/// What the gate decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Run it with the arguments exactly as sent.
    Passed,
    /// Run it with the repaired arguments.
    Repaired,
    /// Send the message back to the model.
    Rejected,
}

impl Outcome {
    /// The stable wire name (`"passed"` …).
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Passed => "passed",
            Outcome::Repaired => "repaired",
            Outcome::Rejected => "rejected",
        }
    }
}

/// Why a call was refused (the closed set of SPEC.md; this core version emits these).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// The tool is not declared.
    UnknownTool,
    /// Not JSON, not an object, hostile, or beyond a limit.
    BadArguments,
    /// Schema violations left after safe repair.
    Invalid,
}

impl Reason {
    /// The stable wire name (`"unknown_tool"` …).
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::UnknownTool => "unknown_tool",
            Reason::BadArguments => "bad_arguments",
            Reason::Invalid => "invalid",
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
}

impl Verdict {
    /// Whether the call may run (passed or repaired).
    pub fn allowed(&self) -> bool {
        matches!(self.outcome, Outcome::Passed | Outcome::Repaired)
    }

    /// A refusal with its model-readable message.
    pub fn rejected(reason: Reason, message: String) -> Verdict {
        Verdict {
            outcome: Outcome::Rejected,
            untouched: false,
            arguments: None,
            flags: Vec::new(),
            message: Some(message),
            reason: Some(reason),
        }
    }
}
