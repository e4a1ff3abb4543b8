//! Repair flags: one per change the gate made, with where, from and to (docs/turns.md "What gets repaired").

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::json::pointer::{to_pointer, Seg};

/// The kinds of repair: what kind of change was made (docs/turns.md "What gets repaired"). The
/// names are the stable `flags[].code` strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum FlagCode {
    /// `"42"` → `42` for an integer.
    StringToInteger,
    /// `"3.14"` → `3.14` for a number.
    StringToFloat,
    /// `"False"` → `false` for a boolean.
    StringToBoolean,
    /// `123` → `"123"` for a string.
    PrimitiveToString,
    /// `"rust"` → `["rust"]` for an array.
    WrappedScalarInArray,
    /// `"ACTIVE"` → `"active"` for an enum.
    EnumCaseNormalized,
    /// `"actve"` → `"active"`: the one enum value within one edit.
    EnumFuzzyMatched,
    /// An unknown key under `additionalProperties: false`, removed.
    PrunedUnknownProperty,
    /// An absent property's `default`, added.
    InjectedDefaultValue,
    /// A string holding JSON of the expected object/array type, parsed.
    UnpackedStringifiedJson,
    /// An argument set to the caller's identity (policy pins).
    PinnedArgument,
}

/// One change, as reported in a verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Flag {
    /// What kind of change.
    pub code: FlagCode,
    /// JSON Pointer of the changed value (`""` is the whole arguments object).
    pub path: String,
    /// The value before (absent for an injected default).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<Value>,
    /// The value after (absent for a pruned key or an unpacked string, whose result is in the arguments).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to: Option<Value>,
}

/// A flag while the walk is still unwinding: its path is collected leaf-first, so a clean
/// call pays nothing for path bookkeeping.
#[derive(Debug, Clone)]
pub(crate) struct PendingFlag {
    pub code: FlagCode,
    pub segs_rev: Vec<Seg>,
    pub from: Option<Value>,
    pub to: Option<Value>,
}

impl PendingFlag {
    pub fn finish(mut self) -> Flag {
        self.segs_rev.reverse();
        Flag { code: self.code, path: to_pointer(&self.segs_rev), from: self.from, to: self.to }
    }
}

/// A problem repair found that the validator cannot see (an integer beyond 64 bits, an
/// embedded JSON string that is hostile).
#[derive(Debug, Clone)]
pub(crate) struct PendingProblem {
    pub segs_rev: Vec<Seg>,
    pub text: String,
}
