//! Core values to Python values, built once under the GIL: JSON values become `dict` (in the
//! core's key order), `list`, `str`, `int`, `float`, `bool` and `None`; a verdict becomes the
//! tuple `toolgate._verdict` reads (see [`verdict_tuple`]).

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyList, PyString, PyTuple};
use serde_json::Value;
use toolgate_core::json::pointer::Seg;
use toolgate_core::{Flag, TurnCall, TurnReport, Verdict};

/// The Python value of a JSON value. Depth is bounded by the core's parse limits.
pub(crate) fn to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else {
                n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any()
            }
        }
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(a) => {
            let list = PyList::empty(py);
            for x in a {
                list.append(to_py(py, x)?)?;
            }
            list.into_any()
        }
        Value::Object(m) => {
            let dict = PyDict::new(py);
            for (k, x) in m {
                dict.set_item(k, to_py(py, x)?)?;
            }
            dict.into_any()
        }
    })
}

fn opt_py<'py>(py: Python<'py>, v: Option<&Value>) -> PyResult<Bound<'py, PyAny>> {
    match v {
        Some(v) => to_py(py, v),
        None => Ok(py.None().into_bound(py)),
    }
}

/// `(code, path, has_from, from, has_to, to)`: `has_*` tell an absent value from JSON `null`.
fn flag_tuple<'py>(py: Python<'py>, f: &Flag) -> PyResult<Bound<'py, PyTuple>> {
    let code = serde_json::to_value(f.code).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default();
    PyTuple::new(
        py,
        [
            PyString::new(py, &code).into_any(),
            PyString::new(py, &f.path).into_any(),
            PyBool::new(py, f.from.is_some()).to_owned().into_any(),
            opt_py(py, f.from.as_ref())?,
            PyBool::new(py, f.to.is_some()).to_owned().into_any(),
            opt_py(py, f.to.as_ref())?,
        ],
    )
}

/// The verdict as `(outcome, reason, message, arguments, arguments_json, flags, facts)`:
/// `arguments_json` is `None` when `keep_text` and the caller's own text runs untouched; `facts`
/// is `None` or `(action, resource, confirmation, receipt, shadow, would_be, engine)` with
/// `confirmation` `None` or `(token, expires_at, summary)`.
pub(crate) fn verdict_tuple<'py>(py: Python<'py>, v: &Verdict, keep_text: bool) -> PyResult<Bound<'py, PyTuple>> {
    let arguments_json = match &v.arguments {
        Some(_) if keep_text && v.untouched => None,
        Some(a) => Some(serde_json::to_string(a).unwrap_or_default()),
        None => None,
    };
    tuple_of(py, v, arguments_json.as_deref())
}

/// [`verdict_tuple`]'s tuple with the given `arguments_json`.
fn tuple_of<'py>(py: Python<'py>, v: &Verdict, arguments_json: Option<&str>) -> PyResult<Bound<'py, PyTuple>> {
    let arguments = opt_py(py, v.arguments.as_ref())?;
    let flags = PyList::empty(py);
    for f in &v.flags {
        flags.append(flag_tuple(py, f)?)?;
    }
    let facts = v.facts();
    let facts = if facts.is_empty() && facts.would_be.is_none() {
        py.None().into_bound(py)
    } else {
        let confirmation = match facts.confirmation {
            Some(c) => (c.token.as_str(), c.expires_at.as_str(), c.summary.as_str()).into_pyobject(py)?.into_any(),
            None => py.None().into_bound(py),
        };
        (facts.action, facts.resource, confirmation, facts.receipt, facts.shadow, facts.would_be, facts.engine).into_pyobject(py)?.into_any()
    };
    (v.outcome.as_str(), v.reason.map(|r| r.as_str()), v.message.as_deref(), arguments, arguments_json, flags, facts).into_pyobject(py)
}

/// A turn's call as `(call_id, tool, verdict)`: the verdict as [`verdict_tuple`]'s, its
/// `arguments_json` the call's own (the caller's text when it runs untouched).
pub(crate) fn turn_call_tuple<'py>(py: Python<'py>, c: &TurnCall) -> PyResult<Bound<'py, PyTuple>> {
    (c.call_id.as_str(), c.tool.as_str(), tuple_of(py, &c.verdict, c.arguments_json.as_deref())?).into_pyobject(py)
}

/// A path as a list of keys (`str`) and indices (`int`).
pub(crate) fn path_list<'py>(py: Python<'py>, path: &[Seg]) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty(py);
    for seg in path {
        match seg {
            Seg::Key(k) => out.append(k.as_str())?,
            Seg::Index(i) => out.append(*i)?,
        }
    }
    Ok(out)
}

/// Paths (a tool filter's removals) as a list of [`path_list`]s.
pub(crate) fn path_lists<'py>(py: Python<'py>, paths: &[Vec<Seg>]) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty(py);
    for p in paths {
        out.append(path_list(py, p)?)?;
    }
    Ok(out)
}

/// A turn's report as `(dialect, calls, patches, feedback, provider_executed, turn_refusals,
/// payload)`, what `toolgate._report` reads: `calls` as [`turn_call_tuple`]s, each patch
/// `(call, path, as_text)`, `provider_executed` and `turn_refusals` as dicts with the Node
/// report's keys (`callId`, `tool`, `kind`; `kind`, `at`, `message`). `payload` is sent only
/// `with_payload` (a stream's report: the turn the stream built, `None` when it built none);
/// `guard`'s host holds the payload it passed and writes the patches in when it is read.
pub(crate) fn report_tuple<'py>(py: Python<'py>, r: &TurnReport, with_payload: bool) -> PyResult<Bound<'py, PyTuple>> {
    let calls = PyList::empty(py);
    for c in &r.calls {
        calls.append(turn_call_tuple(py, c)?)?;
    }
    let patches = PyList::empty(py);
    for p in &r.patches {
        patches.append((p.call, path_list(py, &p.path)?, p.as_text).into_pyobject(py)?)?;
    }
    let feedback = PyList::empty(py);
    for f in &r.feedback {
        feedback.append(to_py(py, f)?)?;
    }
    let provider = PyList::empty(py);
    for p in &r.provider_executed {
        provider.append(str_dict(py, [("callId", &p.call_id), ("tool", &p.tool), ("kind", &p.kind)])?)?;
    }
    let refusals = PyList::empty(py);
    for t in &r.turn_refusals {
        refusals.append(str_dict(py, [("kind", &t.kind), ("at", &t.at), ("message", &t.message)])?)?;
    }
    let payload = if with_payload { opt_py(py, r.payload.as_ref())? } else { py.None().into_bound(py) };
    (r.dialect.as_str(), calls, patches, feedback, provider, refusals, payload).into_pyobject(py)
}

/// A `dict` of string members, in the order given.
fn str_dict<'py, const N: usize>(py: Python<'py>, members: [(&str, &String); N]) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in members {
        d.set_item(k, v)?;
    }
    Ok(d)
}
