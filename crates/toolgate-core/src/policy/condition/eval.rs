//! Three-valued evaluation against a [`Scope`]. Allocation-free: values are borrowed views of
//! the scope or of the condition's literals.

use std::cmp::Ordering;

use serde_json::{Map, Value};

use super::super::scope::Scope;
use super::ast::{CmpOp, Fact, Lit, Node, Num, Operand, Seg};
use super::{time, Truth};

/// An operand's value for one evaluation.
#[derive(Clone, Copy)]
enum V<'a> {
    /// Absent: never satisfies anything.
    Missing,
    /// Not known yet (listing): makes the comparison unknown.
    Unknown,
    Null,
    Bool(bool),
    Num(Num),
    Str(&'a str),
    /// Unix milliseconds.
    Time(i64),
    List(List<'a>),
    Object,
}

#[derive(Clone, Copy)]
enum List<'a> {
    Json(&'a [Value]),
    Roles(&'a [String]),
    Lits(&'a [Lit]),
}

/// How a comparison that cannot be decided (a missing value, or values of types that never
/// compare: `"5000" > 1000`) counts.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// As false: an allow rule (or a persona) needs its condition to hold.
    Lenient,
    /// As unknown: a deny rule whose condition cannot be decided still denies (fails closed).
    /// Bare names stay flags (absent = not set); a non-boolean value for one is undecidable.
    /// `x == null` / `x != null` stay decidable for a missing `x` (the presence test).
    Strict,
}

pub(super) fn eval<'a>(node: &'a Node, s: &Scope<'a>, m: Mode) -> Truth {
    match node {
        Node::Const(b) => Truth::from(*b),
        Node::And(items) => {
            let mut acc = Truth::True;
            for n in items.iter() {
                match eval(n, s, m) {
                    Truth::False => return Truth::False,
                    Truth::Unknown => acc = Truth::Unknown,
                    Truth::True => {}
                }
            }
            acc
        }
        Node::Or(items) => {
            let mut acc = Truth::False;
            for n in items.iter() {
                match eval(n, s, m) {
                    Truth::True => return Truth::True,
                    Truth::Unknown => acc = Truth::Unknown,
                    Truth::False => {}
                }
            }
            acc
        }
        Node::Not(n) => !eval(n, s, m),
        Node::Truthy(f) => match fact(f, s) {
            V::Unknown => Truth::Unknown,
            V::Bool(b) => Truth::from(b),
            V::Missing | V::Null => Truth::False,
            _ if m == Mode::Strict => Truth::Unknown,
            _ => Truth::False,
        },
        Node::Cmp(op, a, b) => {
            let (a, b) = (value(a, s), value(b, s));
            // strict: `x == null` / `x != null` is the presence test, decidable when x is missing
            let (a, b) = match (m, op, a, b) {
                (Mode::Strict, CmpOp::Eq | CmpOp::Ne, V::Missing, V::Null) | (Mode::Strict, CmpOp::Eq | CmpOp::Ne, V::Null, V::Missing) => (V::Null, V::Null),
                _ => (a, b),
            };
            known(a, b, m, |a, b| compare(*op, a, b))
        }
        Node::In(x, l) => known(value(x, s), value(l, s), m, member),
        Node::Matches(x, glob) => known(value(x, s), V::Null, m, |x, _| match x {
            V::Str(t) => Some(glob.matches(t)),
            _ => None,
        }),
    }
}

/// Missing on either side is false (strict: unknown); else unknown on either side is unknown;
/// else `f` decides, `None` (types that never compare) counting like a missing value.
fn known<'a>(a: V<'a>, b: V<'a>, m: Mode, f: impl FnOnce(V<'a>, V<'a>) -> Option<bool>) -> Truth {
    let undecided = if m == Mode::Strict { Truth::Unknown } else { Truth::False };
    match (a, b) {
        (V::Missing, _) | (_, V::Missing) => undecided,
        (V::Unknown, _) | (_, V::Unknown) => Truth::Unknown,
        (a, b) => f(a, b).map_or(undecided, Truth::from),
    }
}

/// `None` when the two values' types never compare.
fn compare(op: CmpOp, a: V<'_>, b: V<'_>) -> Option<bool> {
    match op {
        CmpOp::Eq => equal(a, b),
        CmpOp::Ne => equal(a, b).map(|e| !e),
        _ => order(a, b).map(|o| op.holds(o)),
    }
}

/// Equality of two values of comparable types; `None` when the types never compare. `null`
/// compares with anything (it equals only `null`), so `x != null` means "present, not null".
fn equal(a: V<'_>, b: V<'_>) -> Option<bool> {
    match (a, b) {
        (V::Null, V::Null) => Some(true),
        (V::Null, _) | (_, V::Null) => Some(false),
        (V::Bool(x), V::Bool(y)) => Some(x == y),
        // equality needs no ordering: different lengths are unequal without comparing bytes
        (V::Str(x), V::Str(y)) => Some(x == y),
        _ => order(a, b).map(|o| o == Ordering::Equal),
    }
}

fn order(a: V<'_>, b: V<'_>) -> Option<Ordering> {
    match (a, b) {
        (V::Num(x), V::Num(y)) => x.cmp(y),
        (V::Str(x), V::Str(y)) => Some(x.cmp(y)), // UTF-8 byte order is code point order
        (V::Time(x), V::Time(y)) => Some(x.cmp(&y)),
        (V::Time(ms), V::Num(n)) => Num::cmp_time(ms, n),
        (V::Num(n), V::Time(ms)) => Num::cmp_time(ms, n).map(Ordering::reverse),
        _ => None,
    }
}

/// Whether `x` is in `list`: `Some(true)` when an element equals it, `Some(false)` when every
/// element compared unequal, `None` when some element could not be compared and none matched.
fn member(x: V<'_>, list: V<'_>) -> Option<bool> {
    let V::List(list) = list else { return None };
    let mut undecided = false;
    let mut check = |e: Option<bool>| match e {
        Some(true) => true,
        Some(false) => false,
        None => {
            undecided = true;
            false
        }
    };
    let hit = match list {
        List::Roles(roles) => match x {
            V::Str(s) => roles.iter().any(|r| r == s),
            _ => return None,
        },
        List::Json(items) => items.iter().any(|e| check(equal(x, json(e)))),
        List::Lits(items) => items.iter().any(|e| check(equal(x, lit(e)))),
    };
    if hit {
        Some(true)
    } else if undecided {
        None
    } else {
        Some(false)
    }
}

fn value<'a>(o: &'a Operand, s: &Scope<'a>) -> V<'a> {
    match o {
        Operand::Fact(f) => fact(f, s),
        Operand::Lit(l) => lit(l),
        Operand::List(items) => V::List(List::Lits(items)),
    }
}

fn lit(l: &Lit) -> V<'_> {
    match l {
        Lit::Null => V::Null,
        Lit::Bool(b) => V::Bool(*b),
        Lit::Num(n) => V::Num(*n),
        Lit::Str(s) => V::Str(s),
        Lit::Time(ms) => V::Time(*ms),
    }
}

fn json(v: &Value) -> V<'_> {
    match v {
        Value::Null => V::Null,
        Value::Bool(b) => V::Bool(*b),
        Value::Number(n) => V::Num(Num::of_json(n)),
        Value::String(s) => V::Str(s),
        Value::Array(a) => V::List(List::Json(a)),
        Value::Object(_) => V::Object,
    }
}

fn string(s: Option<&str>) -> V<'_> {
    s.map_or(V::Missing, V::Str)
}

fn fact<'a>(f: &'a Fact, s: &Scope<'a>) -> V<'a> {
    match f {
        Fact::Roles => V::List(List::Roles(s.roles)),
        Fact::Identity(path) => walk(s.identity, path),
        Fact::Purpose => string(s.purpose),
        Fact::Context(key) => s.context.and_then(|m| m.get(&**key)).map_or(V::Missing, json),
        Fact::Args(_) | Fact::Resource if s.listing => V::Unknown,
        Fact::Args(path) => walk(s.args, path),
        Fact::Resource => string(s.resource),
        Fact::Tool => string(s.tool),
        Fact::Action => string(s.action),
        Fact::Subject => string(s.subject),
        Fact::Now => V::Time(i64::try_from(s.now_ms).unwrap_or(i64::MAX)),
        Fact::NowHour => V::Num(Num::U(time::clock(s.now_ms).0)),
        Fact::NowMinute => V::Num(Num::U(time::clock(s.now_ms).1)),
        Fact::NowWeekday => V::Num(Num::U(time::clock(s.now_ms).2)),
    }
}

/// The value at `path` under `root`; missing when a key is absent, an index is out of range,
/// or a step goes through something that is not an object (key) or an array (index).
fn walk<'a>(root: Option<&'a Map<String, Value>>, path: &[Seg]) -> V<'a> {
    let (Some(root), [Seg::Key(first), rest @ ..]) = (root, path) else {
        return V::Missing;
    };
    let Some(mut v) = root.get(&**first) else {
        return V::Missing;
    };
    for seg in rest {
        let next = match (seg, v) {
            (Seg::Key(k), Value::Object(o)) => o.get(&**k),
            (Seg::Index(i), Value::Array(a)) => a.get(*i),
            _ => None,
        };
        match next {
            Some(n) => v = n,
            None => return V::Missing,
        }
    }
    json(v)
}
