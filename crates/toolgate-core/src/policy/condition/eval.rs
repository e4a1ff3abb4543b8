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

pub(super) fn eval<'a>(node: &'a Node, s: &Scope<'a>) -> Truth {
    match node {
        Node::Const(b) => Truth::from(*b),
        Node::And(items) => {
            let mut acc = Truth::True;
            for n in items.iter() {
                match eval(n, s) {
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
                match eval(n, s) {
                    Truth::True => return Truth::True,
                    Truth::Unknown => acc = Truth::Unknown,
                    Truth::False => {}
                }
            }
            acc
        }
        Node::Not(n) => !eval(n, s),
        Node::Truthy(f) => match fact(f, s) {
            V::Unknown => Truth::Unknown,
            v => Truth::from(matches!(v, V::Bool(true))),
        },
        Node::Cmp(op, a, b) => known(value(a, s), value(b, s), |a, b| compare(*op, a, b)),
        Node::In(x, l) => known(value(x, s), value(l, s), member),
        Node::Matches(x, glob) => known(value(x, s), V::Null, |x, _| match x {
            V::Str(t) => glob.matches(t),
            _ => false,
        }),
    }
}

/// Missing on either side is false; else unknown on either side is unknown; else `f` decides.
fn known<'a>(a: V<'a>, b: V<'a>, f: impl FnOnce(V<'a>, V<'a>) -> bool) -> Truth {
    match (a, b) {
        (V::Missing, _) | (_, V::Missing) => Truth::False,
        (V::Unknown, _) | (_, V::Unknown) => Truth::Unknown,
        (a, b) => Truth::from(f(a, b)),
    }
}

fn compare(op: CmpOp, a: V<'_>, b: V<'_>) -> bool {
    match op {
        CmpOp::Eq => equal(a, b) == Some(true),
        CmpOp::Ne => equal(a, b) == Some(false),
        _ => order(a, b).is_some_and(|o| op.holds(o)),
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

fn member(x: V<'_>, list: V<'_>) -> bool {
    let V::List(list) = list else { return false };
    match list {
        List::Roles(roles) => matches!(x, V::Str(s) if roles.iter().any(|r| r == s)),
        List::Json(items) => items.iter().any(|e| equal(x, json(e)) == Some(true)),
        List::Lits(items) => items.iter().any(|e| equal(x, lit(e)) == Some(true)),
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
        Fact::Context(key) => s
            .context
            .and_then(|m| m.get(&**key))
            .map_or(V::Missing, json),
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
