//! Model Context Protocol (protocol 2025-06-18 and 2025-11-25; batches only for 2025-03-26):
//! JSON-RPC 2.0 `tools/call` requests are the calls; every other JSON-RPC message is read as
//! "no call". Refusals are answered as JSON-RPC responses carrying the request's own id (number
//! ids stay numbers): a `CallToolResult` with `isError: true` for a well-formed call (so the
//! model can read the correction), a `-32602` error response for a call whose `params` are
//! malformed (the answer an MCP server gives to invalid params).

use serde_json::{json, Map, Value};

use super::shape::{self, broken, index, key, Path};
use super::sieve::Sieve;
use super::{Args, Call, Codec, Dialect, Found, Refusal, TurnOptions};
use crate::error::GateError;
use crate::schema::types::type_name;

/// The MCP codec.
pub struct Mcp;

const D: Dialect = Dialect::Mcp;

/// The only protocol version whose transport allowed JSON-RPC batches (removed in 2025-06-18).
const BATCH_VERSION: &str = "2025-03-26";

/// JSON-RPC "Invalid params": what an MCP server answers to a `tools/call` whose params are wrong.
pub const INVALID_PARAMS: i64 = -32602;

impl Codec for Mcp {
    fn dialect(&self) -> Dialect {
        D
    }

    /// A JSON-RPC message (an object with a `jsonrpc` member) or a non-empty array of them.
    fn recognizes(&self, payload: &Value) -> bool {
        let is_rpc = |v: &Value| v.as_object().is_some_and(|m| m.contains_key("jsonrpc"));
        match payload {
            Value::Array(list) => !list.is_empty() && list.iter().all(is_rpc),
            v => is_rpc(v),
        }
    }

    /// One JSON-RPC message, or (protocol `2025-03-26` only) a batch of them. Each `tools/call`
    /// request is one call, in order; other requests, notifications and responses are no call.
    fn read(&self, payload: &Value, opts: &TurnOptions) -> Result<Found, GateError> {
        let mut found = Found::default();
        match payload {
            Value::Array(batch) => {
                let version = opts.protocol_version.as_deref();
                if version != Some(BATCH_VERSION) {
                    let negotiated = match version {
                        Some(v) => format!("protocol version {v:?}"),
                        None => "no protocol version (pass protocolVersion \"2025-03-26\" for a batch)".to_owned(),
                    };
                    return Err(broken(
                        D,
                        &[],
                        format!(
                            "a JSON-RPC batch (an array of messages) with {negotiated}; batches exist only in MCP 2025-03-26 and were removed in 2025-06-18"
                        ),
                    ));
                }
                if batch.is_empty() {
                    return Err(broken(D, &[], "an empty JSON-RPC batch"));
                }
                for (i, msg) in batch.iter().enumerate() {
                    read_message(msg, index(&[], i), &mut found)?;
                }
            }
            Value::Object(_) => read_message(payload, Vec::new(), &mut found)?,
            other => return Err(broken(D, &[], format!("expected a JSON-RPC 2.0 message, got {}", type_name(other)))),
        }
        Ok(found)
    }

    /// One JSON-RPC response per refused call, in payload order, each with the request's id
    /// exactly as sent. In a 2025-03-26 batch the host returns them inside its batch response.
    fn feedback(&self, _payload: &Value, refused: &[Refusal<'_>]) -> Vec<Value> {
        refused
            .iter()
            .map(|r| {
                let id = r.call.wire_id.clone().unwrap_or_else(|| Value::String(r.call.call_id.clone()));
                let message = shape::message_of(r.verdict);
                if r.call.malformed.is_some() {
                    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": INVALID_PARAMS, "message": message } })
                } else {
                    json!({ "jsonrpc": "2.0", "id": id, "result": { "content": [shape::text_block(message)], "isError": true } })
                }
            })
            .collect()
    }

    /// Filters a `tools/list` result (`{ tools, nextCursor? }`), the whole JSON-RPC response
    /// holding one (`{ jsonrpc, id, result: { tools } }`), or a bare array of `Tool` objects, by
    /// `name`; everything else in the container is kept as it is.
    fn filter_tools(&self, tools: &mut Value, sieve: &mut Sieve<'_>) -> Result<(), GateError> {
        match tools {
            Value::Array(_) => shape::retain_named(D, &[], tools, sieve, name_of),
            Value::Object(m) if m.contains_key("jsonrpc") => {
                if m.contains_key("error") && !m.contains_key("result") {
                    return Err(broken(D, &[], "a JSON-RPC error response holds no tool list"));
                }
                let Some(result) = m.get_mut("result") else {
                    return Err(broken(D, &[], "missing `result`: expected the response to a tools/list request"));
                };
                let rp = key(&[], "result");
                let Some(r) = result.as_object_mut() else {
                    return Err(broken(D, &rp, format!("expected an object, got {}", type_name(result))));
                };
                let Some(list) = r.get_mut("tools") else {
                    return Err(broken(D, &rp, "missing `tools`: expected a tools/list result"));
                };
                shape::retain_named(D, &key(&rp, "tools"), list, sieve, name_of)
            }
            Value::Object(m) => match m.get_mut("tools") {
                Some(list) => shape::retain_named(D, &key(&[], "tools"), list, sieve, name_of),
                None => Err(broken(D, &[], "missing `tools`: expected a tools/list result, its JSON-RPC response, or an array of tools")),
            },
            other => Err(broken(D, &[], format!("expected a tools/list result or an array of tools, got {}", type_name(other)))),
        }
    }
}

/// A `Tool`'s `name`.
fn name_of(t: &Value) -> Option<&str> {
    t.get("name").and_then(Value::as_str)
}

/// Reads one JSON-RPC message at `path`. Anything that is not JSON-RPC 2.0 is `E_PAYLOAD`.
fn read_message(msg: &Value, path: Path, found: &mut Found) -> Result<(), GateError> {
    let m = shape::object(D, &path, msg)?;
    match m.get("jsonrpc") {
        Some(Value::String(v)) if v == "2.0" => {}
        Some(other) => return Err(broken(D, &key(&path, "jsonrpc"), format!("expected \"2.0\", got {}", shown(other)))),
        None => return Err(broken(D, &path, "missing `jsonrpc`: not a JSON-RPC 2.0 message")),
    }
    let method = match m.get("method") {
        None => return check_response(m, &path),
        Some(Value::String(s)) => s.as_str(),
        Some(other) => return Err(broken(D, &key(&path, "method"), format!("expected a string, got {}", type_name(other)))),
    };
    if m.contains_key("result") || m.contains_key("error") {
        return Err(broken(D, &path, "a message with both `method` (a request) and `result`/`error` (a response)"));
    }
    let id = match m.get("id") {
        None => None,
        Some(v @ Value::String(_)) => Some(v),
        Some(v @ Value::Number(n)) if n.is_i64() || n.is_u64() => Some(v),
        Some(other) => return Err(broken(D, &key(&path, "id"), format!("a request id is a string or an integer, got {}", shown(other)))),
    };
    if method != "tools/call" {
        return Ok(()); // another request, or a notification: no tool call
    }
    let Some(id) = id else {
        return Err(broken(D, &path, "a tools/call request without an `id` (a notification cannot call a tool: nothing could answer it)"));
    };
    let call_id = match id {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let slot = key(&key(&path, "params"), "arguments");
    let (tool, args, malformed) = read_params(m.get("params"));
    found.calls.push(Call { call_id, wire_id: Some(id.clone()), tool, args, slot, malformed });
    Ok(())
}

/// The tool name, arguments, and (when the params break `CallToolRequestParams`) why.
fn read_params(params: Option<&Value>) -> (String, Args, Option<String>) {
    let p = match params {
        Some(Value::Object(p)) => p,
        None => return (String::new(), Args::Missing, Some("Invalid params: tools/call needs `params` with the tool `name`.".into())),
        Some(other) => return (String::new(), Args::Missing, Some(format!("Invalid params: `params` must be an object, got {}.", type_name(other)))),
    };
    let tool = match p.get("name") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => return (String::new(), Args::Missing, Some(format!("Invalid params: `params.name` must be a string, got {}.", type_name(other)))),
        None => return (String::new(), Args::Missing, Some("Invalid params: `params.name` (the tool to call) is missing.".into())),
    };
    match p.get("arguments") {
        None => (tool, Args::Missing, None),
        Some(v @ Value::Object(_)) => (tool, Args::Value(v.clone()), None),
        Some(other) => {
            let why = format!("Invalid params: `params.arguments` must be an object (or absent), got {}.", type_name(other));
            (tool, Args::Value(other.clone()), Some(why))
        }
    }
}

/// A message without `method` must be a response: exactly one of `result` and `error`.
fn check_response(m: &Map<String, Value>, path: &[crate::json::pointer::Seg]) -> Result<(), GateError> {
    match (m.contains_key("result"), m.contains_key("error")) {
        (true, false) | (false, true) => Ok(()),
        (true, true) => Err(broken(D, path, "a JSON-RPC response with both `result` and `error`")),
        (false, false) => Err(broken(D, path, "neither a request or notification (`method`) nor a response (`result` or `error`)")),
    }
}

/// A short rendering of an unexpected value for an error message.
fn shown(v: &Value) -> String {
    match v {
        Value::String(_) | Value::Number(_) | Value::Bool(_) | Value::Null => {
            let s = v.to_string();
            if s.chars().count() > 40 {
                format!("{}…", s.chars().take(40).collect::<String>())
            } else {
                s
            }
        }
        other => type_name(other).to_owned(),
    }
}
