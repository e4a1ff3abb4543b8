//! LangChain: the raw OpenAI tool calls older integrations leave in
//! `additional_kwargs.tool_calls` (`{ id, type: "function", function: { name, arguments } }`,
//! `arguments` JSON text), beside or instead of the parsed `tool_calls`.
//!
//! - Only raw calls (no `tool_calls`, no `invalid_tool_calls`): they are the calls, read as
//!   OpenAI reads them (arguments as text, repairs written back as text).
//! - Both: LangChain builds `tool_calls` and `invalid_tool_calls` from the raw list, so they
//!   must say the same thing: every raw call matches exactly one parsed or invalid call with the
//!   same non-empty id, the same name and the same arguments (the raw text, parsed strictly, equal
//!   to `args`; for an invalid call, the same text). Then `tool_calls` are read (they are what
//!   current hosts run). Anything else is `E_PAYLOAD`: a host that runs the raw list must never
//!   run a call other than the one decided.

use ahash::AHashSet;
use serde_json::{Map, Value};

use super::shape::{self, broken, index, key, Path};
use super::{Args, Call, Dialect};
use crate::error::GateError;
use crate::json::parse::{parse_str, Limits};

const D: Dialect = Dialect::LangChain;

/// The raw calls of a message's `additional_kwargs.tool_calls`, with their paths; empty when
/// there are none (absent, `null` or `[]`).
pub(super) fn raw_calls<'v>(f: &'v Map<String, Value>, path: &[crate::json::pointer::Seg]) -> Result<(Path, &'v [Value]), GateError> {
    let kp = key(path, "additional_kwargs");
    let list = match f.get("additional_kwargs") {
        None | Some(Value::Null) => return Ok((kp, &[])),
        Some(v) => match shape::object(D, &kp, v)?.get("tool_calls") {
            None | Some(Value::Null) => return Ok((kp, &[])),
            Some(list) => shape::array(D, &key(&kp, "tool_calls"), list)?,
        },
    };
    Ok((key(&kp, "tool_calls"), list.as_slice()))
}

/// One raw call: (id, name, arguments text or value, path of its `function`).
struct Raw<'v> {
    id: Option<&'v str>,
    name: &'v str,
    args: Args,
    fp: Path,
}

fn raw<'v>(p: &[crate::json::pointer::Seg], c: &'v Value) -> Result<Raw<'v>, GateError> {
    let o = shape::object(D, p, c)?;
    if let Some(t) = shape::opt_string(D, p, o, "type")? {
        if t != "function" {
            return Err(broken(D, &key(p, "type"), format!("expected \"function\", got {:?}", t.chars().take(40).collect::<String>())));
        }
    }
    let fp = key(p, "function");
    let f = shape::object(D, &fp, o.get("function").ok_or_else(|| broken(D, p, "missing `function`"))?)?;
    Ok(Raw {
        id: shape::opt_string(D, p, o, "id")?.filter(|s| !s.is_empty()),
        name: shape::string(D, &fp, f, "name")?,
        args: shape::text_args(f, "arguments"),
        fp,
    })
}

/// Reads raw calls as the message's calls (there are no parsed ones).
pub(super) fn read_raw(rp: &[crate::json::pointer::Seg], list: &[Value], out: &mut Vec<Call>) -> Result<(), GateError> {
    for (j, c) in list.iter().enumerate() {
        let p = index(rp, j);
        let r = raw(&p, c)?;
        out.push(Call {
            call_id: r.id.unwrap_or_default().to_owned(),
            wire_id: r.id.map(|s| Value::String(s.to_owned())),
            tool: r.name.to_owned(),
            args: r.args,
            slot: key(&r.fp, "arguments"),
            malformed: None,
        });
    }
    Ok(())
}

/// Checks that the raw list says exactly what `tool_calls` and `invalid_tool_calls` say.
pub(super) fn check_agree(rp: &[crate::json::pointer::Seg], list: &[Value], parsed: &[Value], invalid: &[Value]) -> Result<(), GateError> {
    let disagree = |p: &[crate::json::pointer::Seg], what: String| {
        broken(D, p, format!("{what}: `additional_kwargs.tool_calls` and `tool_calls` disagree, and hosts differ on which they run, so the message is refused"))
    };
    if list.len() != parsed.len() + invalid.len() {
        return Err(disagree(rp, format!("{} raw calls for {} parsed and {} invalid", list.len(), parsed.len(), invalid.len())));
    }
    let mut seen: AHashSet<&str> = AHashSet::with_capacity(list.len());
    for (j, c) in list.iter().enumerate() {
        let p = index(rp, j);
        let r = raw(&p, c)?;
        let Some(id) = r.id else { return Err(disagree(&p, "a raw call without an id cannot be matched".into())) };
        if !seen.insert(id) {
            return Err(disagree(&p, format!("the id {id:?} appears twice")));
        }
        let by_id = |l: &'_ [Value]| -> Vec<usize> { (0..l.len()).filter(|&i| l[i].get("id").and_then(Value::as_str) == Some(id)).collect() };
        let (hits, other) = (by_id(parsed), by_id(invalid));
        let agrees = match (hits.as_slice(), other.as_slice()) {
            ([i], []) => same_call(&r, &parsed[*i], false),
            ([], [i]) => same_call(&r, &invalid[*i], true),
            _ => false,
        };
        if !agrees {
            return Err(disagree(&p, format!("the raw call {id:?} has no single parsed call with its name and arguments")));
        }
    }
    Ok(())
}

/// Whether a parsed (or invalid) call says what the raw call says.
fn same_call(r: &Raw<'_>, c: &Value, invalid: bool) -> bool {
    if c.get("name").and_then(Value::as_str) != Some(r.name) {
        return false;
    }
    let args = c.get("args").unwrap_or(&Value::Null);
    match (&r.args, invalid) {
        (Args::Text(t), true) => args.as_str().unwrap_or("") == t || (t.is_empty() && args.is_null()),
        (Args::Text(t), false) => {
            let raw = if t.trim().is_empty() { Ok(Value::Object(Map::new())) } else { parse_str(t, &Limits::default()) };
            let parsed = if args.is_null() { Value::Object(Map::new()) } else { args.clone() };
            raw.is_ok_and(|v| same_json(&v, &parsed))
        }
        (Args::Value(v), _) => same_json(v, args),
        (Args::Missing, _) => args.is_null() || args.as_object().is_some_and(Map::is_empty),
    }
}

/// JSON equality where numbers compare by value (`1.0` equals `1`: JavaScript's `JSON.parse`
/// keeps no difference), objects regardless of key order.
fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x == y || x.as_f64().zip(y.as_f64()).is_some_and(|(x, y)| x == y),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_json(x, y)),
        (Value::Object(x), Value::Object(y)) => x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same_json(v, w))),
        _ => a == b,
    }
}
