//! Responses API: the answer item for each refused call (by the type of the item it answers),
//! and the `tools[]` filter.
//!
//! Answers follow the output item each call type expects: `function_call_output`,
//! `custom_tool_call_output`, `apply_patch_call_output` (`status: "failed"`), `shell_call_output`
//! (the message on `stderr`, exit code 1), `local_shell_call_output` (answers by `id`). A
//! `computer_call_output` can carry only a screenshot and a client `tool_search_output` only
//! tools, so those answers (no image, no tools: nothing ran) are followed by a user message
//! holding the refusal text; the host attaches its current screenshot before sending. An
//! unknown `X_call` is answered `X_output`, the API's naming pattern.

use serde_json::{json, Map, Value};

use crate::dialect::shape::{self, broken, index, key};
use crate::dialect::sieve::Sieve;
use crate::dialect::{Dialect, Refusal};
use crate::error::GateError;
use crate::json::pointer::{to_pointer, Seg};
use crate::schema::types::type_name;

/// Appends the answer(s) for one refused call to `out`.
pub(super) fn answer(payload: &Value, r: &Refusal<'_>, out: &mut Vec<Value>) {
    let msg = shape::message_of(r.verdict);
    let item = r.call.slot.split_last().and_then(|(_, parent)| payload.pointer(&to_pointer(parent)));
    let kind = item.and_then(shape::type_of).unwrap_or("function_call");
    let with_id = |v: Value, field: &str| -> Value {
        let mut v = v;
        if let (Some(id), Some(m)) = (&r.call.wire_id, v.as_object_mut()) {
            m.insert(field.to_owned(), id.clone());
        }
        v
    };
    match kind {
        "function_call" | "custom_tool_call" => {
            out.push(with_id(json!({ "type": format!("{kind}_output"), "output": msg }), "call_id"));
        }
        "apply_patch_call" => {
            out.push(with_id(json!({ "type": "apply_patch_call_output", "status": "failed", "output": msg }), "call_id"));
        }
        "shell_call" => {
            let result = json!([{ "stdout": "", "stderr": msg, "outcome": { "type": "exit", "exit_code": 1 } }]);
            out.push(with_id(json!({ "type": "shell_call_output", "output": result }), "call_id"));
        }
        "local_shell_call" => out.push(with_id(json!({ "type": "local_shell_call_output", "output": msg }), "id")),
        "computer_call" => {
            out.push(with_id(json!({ "type": "computer_call_output", "output": { "type": "computer_screenshot" } }), "call_id"));
            out.push(note(msg));
        }
        "tool_search_call" => {
            out.push(with_id(json!({ "type": "tool_search_output", "execution": "client", "status": "completed", "tools": [] }), "call_id"));
            out.push(note(msg));
        }
        other => out.push(with_id(json!({ "type": format!("{other}_output"), "output": msg }), "call_id")),
    }
}

/// A user message carrying text the call's own answer item has no room for.
fn note(msg: &str) -> Value {
    json!({ "type": "message", "role": "user", "content": [{ "type": "input_text", "text": msg }] })
}

/// Keeps the tools a caller may call. Function and custom tools go by `name`; a `namespace`
/// tool keeps the inner tools declared as `"{namespace}.{name}"` and is dropped when none is
/// left; a client-executed built-in goes by the name its calls are gated under (`computer` and
/// `computer_use_preview` → `computer_call`, `shell` → `shell_call`, `local_shell` →
/// `local_shell_call`, `apply_patch` → `apply_patch_call`, a client `tool_search` →
/// `tool_search_call`), so a listed tool is one whose calls can pass; any other built-in
/// (`web_search`, `file_search`, `mcp`, `code_interpreter` …) goes by its `type`.
pub(super) fn filter(d: Dialect, path: &[Seg], list: &mut Value, sieve: &mut Sieve<'_>) -> Result<(), GateError> {
    let tname = type_name(list);
    let Some(arr) = list.as_array_mut() else {
        return Err(broken(d, path, format!("expected an array of tools, got {tname}")));
    };
    // a namespace left empty goes whole, not as the functions taken out of it
    sieve.retain_filtered(path, arr, |sieve, p, t| keep_tool(d, p, t, sieve))
}

fn keep_tool(d: Dialect, p: &[Seg], t: &mut Value, sieve: &mut Sieve<'_>) -> Result<bool, GateError> {
    let keep = sieve.keep();
    let m = t.as_object_mut().ok_or_else(|| broken(d, p, "expected a tool definition object"))?;
    let kind = shape::string(d, p, m, "type")?.to_owned();
    Ok(match kind.as_str() {
        "function" | "custom" => keep(named(d, p, m)?),
        "namespace" => {
            let ns = named(d, p, m)?.to_owned();
            let ip = key(p, "tools");
            let inner = m.get_mut("tools").ok_or_else(|| broken(d, p, "missing `tools`"))?;
            let tname = type_name(inner);
            let inner = inner.as_array_mut().ok_or_else(|| broken(d, &ip, format!("expected an array, got {tname}")))?;
            for (i, f) in inner.iter().enumerate() {
                let fp = index(&ip, i);
                named(d, &fp, shape::object(d, &fp, f)?)?;
            }
            sieve.retain(&ip, inner, |_, f| f.get("name").and_then(Value::as_str).is_some_and(|n| keep(&format!("{ns}.{n}"))));
            !inner.is_empty()
        }
        "computer" | "computer_use_preview" => keep("computer_call"),
        "shell" => keep("shell_call"),
        "local_shell" => keep("local_shell_call"),
        "apply_patch" => keep("apply_patch_call"),
        "tool_search" if m.get("execution").and_then(Value::as_str) == Some("client") => keep("tool_search_call"),
        other => keep(other),
    })
}

fn named<'m>(d: Dialect, p: &[Seg], m: &'m Map<String, Value>) -> Result<&'m str, GateError> {
    match m.get("name") {
        Some(Value::String(s)) if !s.is_empty() => Ok(s),
        _ => Err(broken(d, p, "a tool definition without a name")),
    }
}
