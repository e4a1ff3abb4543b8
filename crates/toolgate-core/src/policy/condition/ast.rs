//! The compiled form of a condition: a small tree with every name resolved to a [`Fact`],
//! every literal converted (dates to milliseconds, globs compiled), `and`/`or` chains flat.

use std::cmp::Ordering;

use super::super::glob::Glob;

/// One node; evaluation recurses only through `Not` and parentheses, bounded by `MAX_DEPTH`.
#[derive(Debug, Clone)]
pub(super) enum Node {
    Const(bool),
    And(Box<[Node]>),
    Or(Box<[Node]>),
    Not(Box<Node>),
    /// A bare name: true iff it holds JSON `true`.
    Truthy(Fact),
    Cmp(CmpOp, Operand, Operand),
    /// `element in list`; `list has element` compiles to this too.
    In(Operand, Operand),
    Matches(Operand, Glob),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl CmpOp {
    pub(super) fn symbol(self) -> &'static str {
        match self {
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
        }
    }

    /// Whether an ordering satisfies an ordering operator (`Eq`/`Ne` included for completeness).
    pub(super) fn holds(self, o: Ordering) -> bool {
        match self {
            CmpOp::Eq => o == Ordering::Equal,
            CmpOp::Ne => o != Ordering::Equal,
            CmpOp::Lt => o == Ordering::Less,
            CmpOp::Le => o != Ordering::Greater,
            CmpOp::Gt => o == Ordering::Greater,
            CmpOp::Ge => o != Ordering::Less,
        }
    }
}

#[derive(Debug, Clone)]
pub(super) enum Operand {
    Fact(Fact),
    Lit(Lit),
    List(Box<[Lit]>),
}

/// A name of the language, resolved against `Scope` at evaluation.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Fact {
    Roles,
    Identity(Box<[Seg]>),
    Purpose,
    Context(Box<str>),
    Args(Box<[Seg]>),
    Tool,
    Action,
    Resource,
    Subject,
    Now,
    NowHour,
    NowMinute,
    NowWeekday,
}

impl Fact {
    /// True for the facts that only exist once a call is known.
    pub(super) fn reads_call(&self) -> bool {
        matches!(self, Fact::Args(_) | Fact::Tool | Fact::Action | Fact::Resource)
    }
}

/// One step of a path: an object key (`.key`, `['key']`) or an array index (`[0]`).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Seg {
    Key(Box<str>),
    Index(usize),
}

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Lit {
    Null,
    Bool(bool),
    Num(Num),
    Str(Box<str>),
    /// Unix milliseconds: a date literal compared with `now`.
    Time(i64),
}

/// A JSON number, kept exact for integers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Num {
    I(i64),
    U(u64),
    F(f64),
}

impl Num {
    pub(super) fn of_json(n: &serde_json::Number) -> Num {
        if let Some(i) = n.as_i64() {
            Num::I(i)
        } else if let Some(u) = n.as_u64() {
            Num::U(u)
        } else {
            Num::F(n.as_f64().unwrap_or(f64::NAN))
        }
    }

    fn as_f64(self) -> f64 {
        match self {
            Num::I(i) => i as f64,
            Num::U(u) => u as f64,
            Num::F(f) => f,
        }
    }

    /// Numeric order: exact between integers, through `f64` otherwise.
    pub(super) fn cmp(self, other: Num) -> Option<Ordering> {
        match (self, other) {
            (Num::I(a), Num::I(b)) => Some(a.cmp(&b)),
            (Num::U(a), Num::U(b)) => Some(a.cmp(&b)),
            (Num::I(a), Num::U(b)) => Some(i128::from(a).cmp(&i128::from(b))),
            (Num::U(a), Num::I(b)) => Some(i128::from(a).cmp(&i128::from(b))),
            (a, b) => a.as_f64().partial_cmp(&b.as_f64()),
        }
    }

    /// Order of a time (Unix ms) against this number of Unix seconds.
    pub(super) fn cmp_time(ms: i64, secs: Num) -> Option<Ordering> {
        match secs {
            Num::I(s) => Some(i128::from(ms).cmp(&(i128::from(s) * 1000))),
            Num::U(s) => Some(i128::from(ms).cmp(&(i128::from(s) * 1000))),
            Num::F(s) => (ms as f64 / 1000.0).partial_cmp(&s),
        }
    }
}

/// The names a condition may start a fact with (`args.path`, `roles`, `now` …).
pub(super) const ROOT_NAMES: [&str; 10] = ["roles", "identity", "purpose", "context", "args", "tool", "action", "resource", "subject", "now"];

/// Whether a string (a literal's value) starts with a root name: `'purpose'`, `'args.x'`.
pub(super) fn is_root(s: &str) -> bool {
    s.split(['.', '[']).next().is_some_and(|root| ROOT_NAMES.contains(&root))
}
