//! Google Gemini (`generateContent`): a GenerateContentResponse (`candidates[].content.parts[]`),
//! one Content (`{ role, parts }`), or a list of contents (a conversation). Field names follow
//! googleapis/js-genai `src/types.ts` (`Part`, `FunctionCall`, `FunctionResponse`, `Tool`); the
//! snake_case spellings a Python SDK dump produces (`function_call` …) are read as well.
//!
//! Calls are `functionCall` parts (`name`, `args` an object, `id` when the API sends one; else
//! the call id is the call's index in the report and no id is written back). In a list (a
//! conversation), a call is pending unless a `functionResponse` of a later content answers it:
//! by `id`, or, when the response has none, the earliest open call of the same `name`. In one
//! model answer (a response's `candidates`, one content, a Live message) a `functionResponse`
//! answers nothing: a provider never answers its own calls, so every call there is decided. `executableCode` parts (the code-execution
//! tool) and `toolCall` parts (server-side tool invocations) are reported as provider-executed;
//! their `codeExecutionResult` / `toolResponse` parts are results, not calls. A part whose
//! `functionCall` is `null` and that holds nothing else is a call that arrived empty: refused
//! (`bad_arguments`), never skipped. Refusals are answered as ONE user content of
//! `functionResponse` parts whose `response` is `{ "error": … }`; what has no call name to
//! answer (an empty call; a candidate that finished with `MALFORMED_FUNCTION_CALL` or
//! `UNEXPECTED_TOOL_CALL`, reported as a turn refusal, `TurnReport::turn_refusals`) follows as
//! one user content of text parts.
//! A Live API server message (`toolCall.functionCalls`) is read too: see `gemini_live.rs`.

#[path = "gemini_live.rs"]
mod live;

use serde_json::{json, Map, Value};

use super::shape::{self, broken, index, key, Path};
use super::sieve::Sieve;
use super::{Call, Codec, Dialect, Found, ProviderCall, Refusal, TurnOptions, TurnRefusal};
use crate::error::GateError;
use crate::json::pointer::Seg;
use crate::schema::types::type_name;

/// The Gemini codec.
pub struct Gemini;

const D: Dialect = Dialect::Gemini;

/// Longest `finishMessage` quoted back to the model.
const MAX_DETAIL_CHARS: usize = 200;

/// Refusal text for a part whose `functionCall` is `null` and that holds nothing else.
pub(crate) const EMPTY_CALL: &str = "A function call arrived empty (`functionCall` is null: no name, no arguments), so nothing was run. If you meant to call a tool, send the call again with its name and arguments.";

/// Part members a Gemini part may hold (camelCase; snake_case is read too).
const PART_KEYS: [&str; 12] = [
    "text",
    "functionCall",
    "functionResponse",
    "inlineData",
    "fileData",
    "executableCode",
    "codeExecutionResult",
    "thought",
    "thoughtSignature",
    "videoMetadata",
    "toolCall",
    "toolResponse",
];

impl Codec for Gemini {
    fn dialect(&self) -> Dialect {
        D
    }

    fn recognizes(&self, payload: &Value) -> bool {
        match payload {
            Value::Object(m) => m.get("candidates").is_some_and(Value::is_array) || is_content(payload) || live::is_live(m),
            Value::Array(list) => !list.is_empty() && list.iter().all(is_content),
            _ => false,
        }
    }

    fn read(&self, payload: &Value, _opts: &TurnOptions) -> Result<Found, GateError> {
        let mut r = Reader::default();
        if let Value::Object(m) = payload {
            live::refuse_mixed(m)?;
        }
        match payload {
            Value::Object(m) if m.contains_key("candidates") => {
                let cp = key(&[], "candidates");
                let cands = m.get("candidates").unwrap_or(&Value::Null);
                for (i, cand) in shape::array(D, &cp, cands)?.iter().enumerate() {
                    let p = index(&cp, i);
                    match shape::object(D, &p, cand)?.get("content") {
                        None | Some(Value::Null) => {} // a blocked candidate has no content
                        Some(content) => r.content(content, key(&p, "content"))?,
                    }
                }
            }
            Value::Object(m) if m.contains_key("parts") => r.content(payload, Vec::new())?,
            Value::Object(m) if live::is_live(m) => live::read(m, &mut r)?,
            Value::Array(list) => {
                for (i, content) in list.iter().enumerate() {
                    r.answerable = r.open.len(); // the calls of earlier contents
                    r.content(content, index(&[], i))?;
                }
            }
            other => {
                let got = if other.is_object() { "an object without `candidates`, `parts` or a Live message member" } else { type_name(other) };
                return Err(broken(D, &[], format!("expected a GenerateContentResponse, a Content, a list of contents or a Live server message, got {got}")));
            }
        }
        let mut found = Found { calls: Vec::with_capacity(r.open.len()), provider_executed: r.provider };
        for mut c in r.open {
            if c.wire_id.is_none() {
                c.call_id = found.calls.len().to_string();
            }
            found.calls.push(c);
        }
        Ok(found)
    }

    /// A Live server message is answered as a `toolResponse` (see `gemini_live.rs`); anything
    /// else as one user content of a `functionResponse` part per named call, then, for calls
    /// that arrived empty (no name a `functionResponse` could answer), one user content of text
    /// parts.
    fn feedback(&self, payload: &Value, refused: &[Refusal<'_>]) -> Vec<Value> {
        if live::answers_live(payload) {
            return live::feedback(refused);
        }
        let (named, empty): (Vec<&Refusal<'_>>, Vec<&Refusal<'_>>) = refused.iter().partition(|r| !r.call.tool.is_empty());
        let mut out = Vec::with_capacity(2);
        if !named.is_empty() {
            let parts: Vec<Value> =
                named.iter().map(|r| json!({ "functionResponse": live::function_response(r.call, shape::message_of(r.verdict)) })).collect();
            out.push(json!({ "role": "user", "parts": parts }));
        }
        if !empty.is_empty() {
            let parts: Vec<Value> = empty.iter().map(|r| json!({ "text": shape::message_of(r.verdict) })).collect();
            out.push(json!({ "role": "user", "parts": parts }));
        }
        out
    }

    /// A candidate that finished with `MALFORMED_FUNCTION_CALL` (the model's call could not be
    /// parsed) or `UNEXPECTED_TOOL_CALL` (it called a tool it was not offered) holds no call to
    /// gate, but nothing ran: reported so the host tells the model, not left a silent turn.
    fn turn_refusals(&self, payload: &Value) -> Vec<TurnRefusal> {
        let Some(cands) = payload.get("candidates").and_then(Value::as_array) else { return Vec::new() };
        let mut out = Vec::new();
        for (i, c) in cands.iter().enumerate() {
            let reason = c.get("finishReason").or_else(|| c.get("finish_reason")).and_then(Value::as_str).unwrap_or("");
            let detail: String =
                c.get("finishMessage").or_else(|| c.get("finish_message")).and_then(Value::as_str).unwrap_or("").chars().take(MAX_DETAIL_CHARS).collect();
            let why = if detail.is_empty() { String::new() } else { format!(": {detail}") };
            let message = match reason {
                "MALFORMED_FUNCTION_CALL" => format!("Your function call could not be read (MALFORMED_FUNCTION_CALL{why}), so nothing was run. Call the tool again with its name and its arguments as one JSON object that matches the tool's parameters."),
                "UNEXPECTED_TOOL_CALL" => format!("You called a tool that is not available here (UNEXPECTED_TOOL_CALL{why}), so nothing was run. Use only the tools you were given, or answer without a tool."),
                _ => continue,
            };
            out.push(TurnRefusal { kind: reason.to_owned(), at: shape::show(&index(&key(&[], "candidates"), i)), message });
        }
        out
    }

    /// The messages are text parts of the feedback's user content of text (made here when the
    /// feedback has none), after any `functionResponse` content.
    fn turn_feedback(&self, refusals: &[TurnRefusal], feedback: &mut Vec<Value>) {
        let texts = refusals.iter().map(|r| json!({ "text": r.message }));
        let text_only = |c: &Value| c.get("parts").and_then(Value::as_array).is_some_and(|p| p.iter().all(|p| p.get("text").is_some()));
        match feedback.last_mut().filter(|c| text_only(c)).and_then(|c| c.get_mut("parts")).and_then(Value::as_array_mut) {
            Some(parts) => parts.extend(texts),
            None => feedback.push(json!({ "role": "user", "parts": texts.collect::<Vec<_>>() })),
        }
    }

    /// `tools` is a list of Tool objects, or a request / config holding one under `tools` (or
    /// under `config.tools`, the js-genai `generateContent` and `live.connect` parameters, or
    /// `setup.tools`, the Live API's first client message). In each Tool,
    /// `functionDeclarations` keeps the declared functions (a declaration without a name is
    /// `E_PAYLOAD`); every other member is a provider capability with no function name
    /// (`googleSearch`, `codeExecution`, `urlContext`, `computerUse` …) and is kept only when a
    /// tool of that camelCase name is declared: deny by default. A Tool left empty is dropped.
    fn filter_tools(&self, tools: &mut Value, sieve: &mut Sieve<'_>) -> Result<(), GateError> {
        let path: Path = if tools.is_array() {
            Vec::new()
        } else if tools.get("tools").is_some() {
            key(&[], "tools")
        } else if let Some(k) = ["config", "setup"].into_iter().find(|k| tools.get(*k).and_then(|c| c.get("tools")).is_some()) {
            key(&key(&[], k), "tools")
        } else {
            return Err(broken(D, &[], format!("expected a list of Tool objects or a request holding `tools`, got {}", type_name(tools))));
        };
        let list = path.iter().try_fold(&mut *tools, |v, seg| match seg {
            Seg::Key(k) => v.get_mut(k.as_str()),
            Seg::Index(_) => None,
        });
        let Some(list) = list else { return Err(broken(D, &path, "missing")) };
        let tname = type_name(list);
        let arr = list.as_array_mut().ok_or_else(|| broken(D, &path, format!("expected an array of tools, got {tname}")))?;
        // a Tool left empty goes whole, not as the members taken out of it
        sieve.retain_filtered(&path, arr, |sieve, p, tool| {
            filter_tool(p, tool, sieve)?;
            Ok(tool.as_object().is_some_and(|m| !m.is_empty()))
        })
    }
}

/// Filters one Tool object in place (it may be left empty); member order is kept.
fn filter_tool(p: &[Seg], tool: &mut Value, sieve: &mut Sieve<'_>) -> Result<(), GateError> {
    let keep = sieve.keep();
    let m = tool.as_object_mut().ok_or_else(|| broken(D, p, "expected a Tool object"))?;
    let is_decls = |k: &str| k == "functionDeclarations" || k == "function_declarations";
    let mut emptied: Vec<String> = Vec::new();
    for (k, v) in m.iter_mut().filter(|(k, _)| is_decls(k)) {
        let dp = key(p, k);
        let tname = type_name(v);
        let decls = v.as_array_mut().ok_or_else(|| broken(D, &dp, format!("expected an array, got {tname}")))?;
        for (j, decl) in decls.iter().enumerate() {
            if decl.get("name").and_then(Value::as_str).is_none_or(str::is_empty) {
                return Err(broken(D, &index(&dp, j), "a function declaration without a name"));
            }
        }
        let mark = sieve.mark();
        sieve.retain(&dp, decls, |_, f| f.get("name").and_then(Value::as_str).is_some_and(keep));
        if decls.is_empty() {
            // an emptied list goes whole (below), not as the declarations taken out of it
            sieve.forget_since(mark);
            emptied.push(k.clone());
        }
    }
    // every other member is a capability, kept only when a tool of its camelCase name is declared
    sieve.retain_members(p, m, |k, _| if is_decls(k) { !emptied.iter().any(|e| e == k) } else { keep(&camel(k)) });
    Ok(())
}

/// `google_search` → `googleSearch`; camelCase input is unchanged.
fn camel(k: &str) -> String {
    let mut out = String::with_capacity(k.len());
    let mut up = false;
    for ch in k.chars() {
        if ch == '_' {
            up = true;
        } else if up {
            out.extend(ch.to_uppercase());
            up = false;
        } else {
            out.push(ch);
        }
    }
    out
}

/// A Content: `parts` an array of Gemini parts (not Pydantic AI's `part_kind` parts, not typed
/// blocks), and no Pydantic AI `kind`.
fn is_content(v: &Value) -> bool {
    let Some(m) = v.as_object() else { return false };
    if m.contains_key("kind") {
        return false;
    }
    let Some(parts) = m.get("parts").and_then(Value::as_array) else { return false };
    let is_part = |p: &Value| {
        p.as_object().is_some_and(|o| !o.contains_key("type") && !o.contains_key("part_kind") && o.keys().any(|k| PART_KEYS.contains(&camel(k).as_str())))
    };
    (parts.is_empty() && m.get("role").and_then(Value::as_str).is_some_and(|r| r == "model" || r == "user")) || parts.iter().any(is_part)
}

/// Walks contents in order, keeping the calls still open.
#[derive(Default)]
struct Reader {
    open: Vec<Call>,
    provider: Vec<ProviderCall>,
    /// How many of the first `open` calls a `functionResponse` may answer: those of EARLIER
    /// contents of a conversation. A response (`candidates`), one content or a Live message is
    /// one model answer, where a `functionResponse` answers nothing (it stays 0 there).
    answerable: usize,
}

impl Reader {
    fn content(&mut self, content: &Value, path: Path) -> Result<(), GateError> {
        let m = shape::object(D, &path, content)?;
        let parts = match m.get("parts") {
            None | Some(Value::Null) => return Ok(()), // an empty content
            Some(v) => shape::array(D, &key(&path, "parts"), v)?,
        };
        for (j, part) in parts.iter().enumerate() {
            let pp = index(&key(&path, "parts"), j);
            let po = shape::object(D, &pp, part)?;
            if let Some((k, fc)) = member(&pp, po, "functionCall", "function_call")? {
                self.call(key(&pp, k), fc)?;
            } else if let Some(k) = empty_call(po) {
                self.empty(key(&pp, k));
            } else if let Some((k, fr)) = member(&pp, po, "functionResponse", "function_response")? {
                self.answer(&key(&pp, k), fr)?;
            } else if let Some((k, code)) = member(&pp, po, "executableCode", "executable_code")? {
                let id = shape::opt_string(D, &key(&pp, k), shape::object(D, &key(&pp, k), code)?, "id")?;
                self.provider.push(ProviderCall {
                    call_id: shape::id_or_index(id, self.provider.len()),
                    tool: "codeExecution".into(),
                    kind: "executableCode".into(),
                });
            } else if let Some((k, tc)) = member(&pp, po, "toolCall", "tool_call")? {
                let tp = key(&pp, k);
                let t = shape::object(D, &tp, tc)?;
                let id = shape::opt_string(D, &tp, t, "id")?;
                let tool = match t.get("toolType").or_else(|| t.get("tool_type")) {
                    Some(Value::String(s)) => s.clone(),
                    _ => "toolCall".into(),
                };
                self.provider.push(ProviderCall { call_id: shape::id_or_index(id, self.provider.len()), tool, kind: "toolCall".into() });
            }
        }
        Ok(())
    }

    /// A call that arrived empty (`null`): refused, never skipped.
    fn empty(&mut self, fp: Path) {
        self.open.push(Call {
            call_id: String::new(),
            wire_id: None,
            tool: String::new(),
            args: super::Args::Missing,
            slot: key(&fp, "args"),
            malformed: Some(EMPTY_CALL.to_owned()),
        });
    }

    fn call(&mut self, fp: Path, fc: &Value) -> Result<(), GateError> {
        if fc.is_null() {
            self.empty(fp);
            return Ok(());
        }
        let f = shape::object(D, &fp, fc)?;
        let name = shape::string(D, &fp, f, "name")?;
        let id = shape::opt_string(D, &fp, f, "id")?.filter(|s| !s.is_empty());
        self.open.push(Call {
            call_id: id.unwrap_or_default().to_owned(),
            wire_id: id.map(|s| Value::String(s.to_owned())),
            tool: name.to_owned(),
            args: shape::args_value(f, "args"),
            slot: key(&fp, "args"),
            malformed: None,
        });
        Ok(())
    }

    /// Closes the open call of an earlier content a `functionResponse` answers (none: it answers
    /// an earlier turn, or it sits in the same answer as the call, which it cannot answer).
    fn answer(&mut self, rp: &[Seg], fr: &Value) -> Result<(), GateError> {
        let r = shape::object(D, rp, fr)?;
        let id = shape::opt_string(D, rp, r, "id")?.filter(|s| !s.is_empty());
        let name = shape::opt_string(D, rp, r, "name")?;
        let earlier = &self.open[..self.answerable.min(self.open.len())];
        let hit = match id {
            Some(id) => earlier.iter().position(|c| c.wire_id.as_ref().and_then(Value::as_str) == Some(id)),
            None => earlier.iter().position(|c| Some(c.tool.as_str()) == name),
        };
        if let Some(i) = hit {
            self.open.remove(i);
            self.answerable -= 1;
        }
        Ok(())
    }
}

/// The member name when `part` holds `functionCall: null` (or `function_call: null`) and no
/// content besides (a Python SDK dump writes `function_call: null` into every part, beside the
/// part's real content: that is absence, not an empty call).
pub(crate) fn empty_call(part: &Map<String, Value>) -> Option<&'static str> {
    let k = ["functionCall", "function_call"].into_iter().find(|k| part.get(*k).is_some_and(Value::is_null))?;
    let content = part.iter().any(|(name, v)| {
        !v.is_null() && !matches!(camel(name).as_str(), "thought" | "thoughtSignature" | "videoMetadata" | "partMetadata" | "mediaResolution")
    });
    (!content).then_some(k)
}

/// A part member under its camelCase or snake_case name (both at once is `E_PAYLOAD`: the host
/// and the gate could read different things); `null` counts as absent.
fn member<'v>(p: &[Seg], m: &'v Map<String, Value>, camel: &'static str, snake: &'static str) -> Result<Option<(&'static str, &'v Value)>, GateError> {
    let a = m.get(camel).filter(|v| !v.is_null());
    let b = m.get(snake).filter(|v| !v.is_null());
    match (a, b) {
        (Some(_), Some(_)) => Err(broken(D, p, format!("both `{camel}` and `{snake}` in one part"))),
        (Some(v), None) => Ok(Some((camel, v))),
        (None, Some(v)) => Ok(Some((snake, v))),
        (None, None) => Ok(None),
    }
}
