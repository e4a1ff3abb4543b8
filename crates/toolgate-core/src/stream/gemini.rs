//! Gemini `streamGenerateContent`: every chunk is a `GenerateContentResponse` whose
//! `candidates[].content.parts[]` continue the turn; a `functionCall` part arrives whole in one
//! chunk, so it is decided in that chunk and forwarded in place (repaired `args` written, a
//! refused part removed). A candidate ends with its `finishReason` (Gemini says `STOP` after
//! function calls too, so there is no reason to rewrite).
//!
//! A part whose `functionCall` is `null` and that holds nothing else is a call that arrived
//! empty: refused there and then (and not forwarded), as `guard` refuses it. A candidate that
//! finishes with `MALFORMED_FUNCTION_CALL` passes as it is; `end()` reports it as a turn refusal.
//!
//! `executableCode` and `toolCall` parts (run by the server) pass and are reported as
//! provider-executed. Streamed function-call arguments (`partialArgs` / `willContinue`, Vertex
//! `streamFunctionCallArguments`) are `E_PAYLOAD`: turn that option off to stream through the gate.

use ahash::AHashMap;
use serde_json::{json, Map, Value};

use super::event::Cx;
use super::{Assembled, Assembler, Slot};
use crate::dialect::shape::{id_or_index, index, key};
use crate::dialect::ProviderCall;
use crate::error::GateError;
use crate::json::pointer::Seg;

/// The Gemini stream assembler.
#[derive(Debug, Default)]
pub(crate) struct GeminiStream {
    /// Candidates in the order first seen, and their positions by index.
    cands: Vec<Cand>,
    by_index: AHashMap<usize, usize>,
    /// The latest chunk's other members (usageMetadata, modelVersion, responseId …).
    envelope: Map<String, Value>,
    chunks: usize,
    /// A prompt blocked before any candidate (`promptFeedback.blockReason`): a complete answer.
    blocked: bool,
}

#[derive(Debug)]
struct Cand {
    index: usize,
    role: Option<Value>,
    parts: Vec<Value>,
    /// (position in `parts`, tracked call, the part's call member).
    calls: Vec<(usize, usize, &'static str)>,
    /// The candidate's other members (finishReason, safetyRatings …), latest wins.
    extra: Map<String, Value>,
}

impl Cand {
    fn finished(&self) -> bool {
        self.extra.get("finishReason").is_some_and(|v| !v.is_null())
    }

    /// Appends a part, merging plain text into a plain text part just before it.
    fn push(&mut self, part: Value) {
        let plain = |p: &Value| p.as_object().is_some_and(|m| m.len() == 1 && m.get("text").is_some_and(Value::is_string));
        if plain(&part) {
            if let Some(last) = self.parts.last_mut().filter(|l| plain(l)) {
                let add = part.get("text").and_then(Value::as_str).unwrap_or("");
                if let Some(Value::String(s)) = last.get_mut("text") {
                    s.push_str(add);
                    return;
                }
            }
        }
        self.parts.push(part);
    }
}

/// Reports a part the server ran (code execution, server-side tool calls), as the whole-turn
/// codec does.
fn provider_part(part: &Value, out: &mut Vec<ProviderCall>) {
    let get = |camel: &str, snake: &str| part.get(camel).or_else(|| part.get(snake)).filter(|v| !v.is_null());
    let id = |v: &Value| v.get("id").and_then(Value::as_str).map(str::to_owned);
    if let Some(code) = get("executableCode", "executable_code") {
        let call_id = id_or_index(id(code).as_deref(), out.len());
        out.push(ProviderCall { call_id, tool: "codeExecution".into(), kind: "executableCode".into() });
    } else if let Some(tc) = get("toolCall", "tool_call") {
        let tool = tc.get("toolType").or_else(|| tc.get("tool_type")).and_then(Value::as_str).unwrap_or("toolCall").to_owned();
        let call_id = id_or_index(id(tc).as_deref(), out.len());
        out.push(ProviderCall { call_id, tool, kind: "toolCall".into() });
    }
}

impl GeminiStream {
    fn cand(&mut self, index: usize) -> usize {
        if let Some(&p) = self.by_index.get(&index) {
            return p;
        }
        self.cands.push(Cand { index, role: None, parts: Vec::new(), calls: Vec::new(), extra: Map::new() });
        self.by_index.insert(index, self.cands.len() - 1);
        self.cands.len() - 1
    }

    /// One part of candidate `ci`; answers its forwarded form (`None`: dropped).
    fn part(&mut self, cx: &mut Cx<'_>, ci: usize, path: &[Seg], part: Value) -> Result<Option<Value>, GateError> {
        let m = cx.obj(path, &part)?;
        let member = match (m.get("functionCall").filter(|v| !v.is_null()), m.get("function_call").filter(|v| !v.is_null())) {
            (Some(_), Some(_)) => return Err(cx.err(path, "both `functionCall` and `function_call` in one part")),
            (Some(_), None) => Some("functionCall"),
            (None, Some(_)) => Some("function_call"),
            (None, None) => None,
        };
        if let (None, Some(k)) = (member, crate::dialect::gemini::empty_call(m)) {
            // a call that arrived empty: refused now, kept in the turn, not forwarded
            let call = cx.open(path, None, "", true)?;
            cx.refuse(call, crate::dialect::gemini::EMPTY_CALL);
            cx.keep(cx.bytes.min(64))?;
            if let Some(c) = self.cands.get_mut(ci) {
                c.parts.push(part);
                c.calls.push((c.parts.len() - 1, call, k));
            }
            return Ok(None);
        }
        let Some(fc) = member.and_then(|k| m.get(k)) else {
            // text is charged as itself; any other part (inline data …) at most its chunk's size
            cx.keep(part.get("text").and_then(Value::as_str).map_or(cx.bytes, str::len))?;
            if let Some(c) = self.cands.get_mut(ci) {
                c.push(part.clone());
            }
            return Ok(Some(part));
        };
        let member = member.unwrap_or("functionCall");
        let fp = key(path, member);
        let f = cx.obj(&fp, fc)?;
        if f.contains_key("partialArgs") || f.get("willContinue") == Some(&Value::Bool(true)) {
            return Err(cx.err(&fp, "streamed function call arguments (`partialArgs` / `willContinue`) are not read; turn off streamFunctionCallArguments"));
        }
        let name = cx.str(&fp, f, "name")?;
        let call = cx.open(&fp, cx.opt_str(&fp, f, "id")?, name, true)?;
        cx.keep(name.len() + 64)?;
        let problem = cx.claim(&key(&fp, "args"));
        cx.close_value(call, f.get("args"), problem)?;
        let mut kept = part.clone();
        if cx.sh.call(call).is_some_and(|t| t.overflowed) {
            // arguments beyond the limit are refused and not kept
            if let Some(Value::Object(f)) = kept.get_mut(member) {
                f.insert("args".into(), json!({}));
            }
        }
        if let Some(c) = self.cands.get_mut(ci) {
            c.parts.push(kept);
            c.calls.push((c.parts.len() - 1, call, member));
        }
        let Some(v) = cx.sh.call(call).and_then(|t| t.verdict.as_ref()) else { return Ok(None) };
        let Some(args) = v.arguments.clone().filter(|_| v.allowed()) else { return Ok(None) };
        if v.untouched {
            return Ok(Some(part));
        }
        let mut out = part;
        if let Some(Value::Object(f)) = out.get_mut(member) {
            f.insert("args".into(), args);
        }
        Ok(Some(out))
    }
}

impl Assembler for GeminiStream {
    fn event(&mut self, cx: &mut Cx<'_>, ev: Value) -> Result<(), GateError> {
        let Value::Object(mut chunk) = ev else { return Err(cx.err(&[], "expected a GenerateContentResponse object")) };
        self.chunks += 1;
        let present = chunk.contains_key("candidates");
        let cands = match chunk.get_mut("candidates").map(Value::take) {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(a)) => a,
            Some(_) => return Err(cx.err(&key(&[], "candidates"), "expected an array")),
        };
        if chunk.get("promptFeedback").and_then(|p| p.get("blockReason")).is_some_and(|b| !b.is_null()) {
            self.blocked = true;
        }
        for (k, v) in chunk.iter().filter(|(k, _)| k.as_str() != "candidates") {
            self.envelope.insert(k.clone(), v.clone());
        }
        let mut forwarded = Vec::with_capacity(cands.len());
        for (j, c) in cands.into_iter().enumerate() {
            let cp = index(&key(&[], "candidates"), j);
            let Value::Object(mut c) = c else { return Err(cx.err(&cp, "expected a candidate object")) };
            let ix = match c.get("index") {
                None => j,
                Some(_) => cx.index(&cp, &c, "index")?,
            };
            let ci = self.cand(ix);
            let content = match c.get_mut("content").map(Value::take) {
                None | Some(Value::Null) => None,
                Some(Value::Object(m)) => Some(m),
                Some(_) => return Err(cx.err(&key(&cp, "content"), "expected an object")),
            };
            if let Some(mut content) = content {
                let pp = key(&key(&cp, "content"), "parts");
                let parts = match content.get_mut("parts").map(Value::take) {
                    None | Some(Value::Null) => Vec::new(),
                    Some(Value::Array(a)) => a,
                    Some(_) => return Err(cx.err(&pp, "expected an array")),
                };
                if !parts.is_empty() && self.cands.get(ci).is_some_and(Cand::finished) {
                    return Err(cx.err(&pp, format!("content for candidate {ix} after its finishReason")));
                }
                if let (Some(role), Some(cand)) = (content.get("role"), self.cands.get_mut(ci)) {
                    cand.role = Some(role.clone());
                }
                let mut kept = Vec::with_capacity(parts.len());
                for (k, p) in parts.into_iter().enumerate() {
                    if let Some(p) = self.part(cx, ci, &index(&pp, k), p)? {
                        kept.push(p);
                    }
                }
                content.insert("parts".into(), Value::Array(kept));
                c.insert("content".into(), Value::Object(content));
            }
            if let Some(cand) = self.cands.get_mut(ci) {
                for (k, v) in c.iter().filter(|(k, _)| k.as_str() != "content" && k.as_str() != "index") {
                    cand.extra.insert(k.clone(), v.clone());
                }
            }
            forwarded.push(Value::Object(c));
        }
        if present {
            chunk.insert("candidates".into(), Value::Array(forwarded));
        }
        cx.pass(Value::Object(chunk))
    }

    fn ended(&self) -> Option<&'static str> {
        None // each candidate ends with its own finishReason; later content for it is refused
    }

    fn finish(&mut self, cx: &mut Cx<'_>) -> Result<Assembled, GateError> {
        if self.chunks == 0 {
            return Err(cx.cut("before any chunk"));
        }
        if self.cands.is_empty() && !self.blocked {
            return Err(cx.cut("without any candidate"));
        }
        if let Some(c) = self.cands.iter().find(|c| !c.finished()) {
            return Err(cx.cut(format!("before the `finishReason` of candidate {}", c.index)));
        }
        let mut order: Vec<&Cand> = self.cands.iter().collect();
        order.sort_by_key(|c| c.index);
        let mut slots = Vec::new();
        let mut provider = Vec::new();
        let mut cands = Vec::with_capacity(order.len());
        for (pos, c) in order.iter().enumerate() {
            for &(p, call, member) in &c.calls {
                let k = |s: &str| Seg::Key(s.into());
                slots.push(Slot { call, slot: vec![k("candidates"), Seg::Index(pos), k("content"), k("parts"), Seg::Index(p), k(member), k("args")] });
            }
            for part in &c.parts {
                provider_part(part, &mut provider);
            }
            let mut m = c.extra.clone();
            m.insert("content".into(), json!({ "role": c.role.clone().unwrap_or_else(|| json!("model")), "parts": c.parts }));
            m.insert("index".into(), json!(c.index));
            cands.push(Value::Object(m));
        }
        let mut payload = self.envelope.clone();
        payload.insert("candidates".into(), Value::Array(cands));
        Ok(Assembled { payload: Value::Object(payload), calls: slots, provider_executed: provider })
    }
}
