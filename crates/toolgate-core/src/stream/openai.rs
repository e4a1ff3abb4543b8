//! OpenAI Chat Completions chunks (`chat.completion.chunk`): text in `choices[].delta.content`,
//! tool calls in `choices[].delta.tool_calls[]` fragments keyed by `index` (`id` and
//! `function.name` on the first, `function.arguments` pieces after), `finish_reason` per choice,
//! then `[DONE]`.
//!
//! Calls of one choice stream one after another (the official SDK's accumulator relies on it
//! too): a call is complete when the next call of its choice starts or the choice finishes. A
//! fragment for a call already complete is a broken stream. Released calls are renumbered
//! `0, 1, …` per choice; `finish_reason: "tool_calls"` becomes `"stop"` when every call of the
//! choice was dropped.
//!
//! Forwarded chunks and choices hold only the members openai-node's `ChatCompletionChunk` gives
//! them (its accumulator copies any other member onto what it accumulates): any other member is
//! dropped, and one that could hold a call (`message`, `tool_calls`, `function_call` outside the
//! delta) stops the stream (`E_PAYLOAD`).

use ahash::AHashMap;
use serde_json::{json, Map, Value};

use super::event::Cx;
use super::{Assembled, Assembler, Slot};
use crate::dialect::shape::{index, key};
use crate::error::GateError;
use crate::json::pointer::Seg;

/// The members of a `chat.completion.chunk` (openai-node `ChatCompletionChunk`).
const CHUNK_MEMBERS: &[&str] = &["id", "object", "created", "model", "choices", "usage", "system_fingerprint", "service_tier", "moderation", "obfuscation"];
/// The members of one of its choices (`ChatCompletionChunk.Choice`).
const CHOICE_MEMBERS: &[&str] = &["index", "delta", "finish_reason", "logprobs"];
/// Members that hold tool calls in a Chat Completion (a choice's `message`, a message's
/// `tool_calls` / `function_call`): where a chunk or a choice carries one, a client may read a call
/// there that the gate never decided.
const CALL_MEMBERS: [&str; 3] = ["message", "tool_calls", "function_call"];

/// Keeps only the members `known` of a chunk or a choice: openai-node's accumulator copies any
/// other member of a chunk choice onto the choice it accumulates (a `message` holding `tool_calls`
/// becomes the final message) and any other member of a chunk onto the completion, so what is
/// forwarded is rebuilt from the members the type has. A member that could hold a call
/// (`CALL_MEMBERS`, not `null`) stops the stream; any other is dropped.
fn only_chunk_members(cx: &Cx<'_>, path: &[Seg], m: &mut Map<String, Value>, known: &[&str]) -> Result<(), GateError> {
    if let Some(k) = CALL_MEMBERS.iter().find(|k| !known.contains(k) && m.get(**k).is_some_and(|v| !v.is_null())) {
        return Err(cx.err(
            &key(path, k),
            "a tool call outside `delta.tool_calls` is not read in a stream (a client accumulating the chunks would read a call the gate never decided)",
        ));
    }
    m.retain(|k, _| known.contains(&k.as_str()));
    Ok(())
}

/// The Chat Completions stream assembler.
#[derive(Debug, Default)]
pub(crate) struct OpenAiStream {
    /// Top-level members of the first chunk (id, created, model …), for the assembled turn.
    envelope: Option<Map<String, Value>>,
    /// The last non-null `usage`.
    usage: Option<Value>,
    /// Choices in the order first seen, and their positions by wire index.
    choices: Vec<ChoiceState>,
    by_index: AHashMap<usize, usize>,
    /// `[DONE]` was seen.
    done: bool,
    /// Chunks read.
    chunks: usize,
}

#[derive(Debug)]
struct ChoiceState {
    index: usize,
    role: Option<String>,
    content: Option<String>,
    refusal: Option<String>,
    finish: Option<String>,
    calls: Vec<CallState>,
    /// Positions in `calls` by tool call index.
    by_wire: AHashMap<usize, usize>,
    /// Position in `calls` of the call still streaming.
    open: Option<usize>,
    /// Allowed calls forwarded so far (the next forwarded `index`).
    released: usize,
}

#[derive(Debug)]
struct CallState {
    wire_index: usize,
    call: usize,
    kind: &'static str,
    id: Option<String>,
    name: String,
}

impl OpenAiStream {
    fn choice(&mut self, index: usize) -> usize {
        if let Some(&p) = self.by_index.get(&index) {
            return p;
        }
        self.choices.push(ChoiceState {
            index,
            role: None,
            content: None,
            refusal: None,
            finish: None,
            calls: Vec::new(),
            by_wire: AHashMap::new(),
            open: None,
            released: 0,
        });
        self.by_index.insert(index, self.choices.len() - 1);
        self.choices.len() - 1
    }

    /// Closes the call still streaming in choice `ci`: decides it, and forwards it whole if allowed.
    fn close_open(&mut self, cx: &mut Cx<'_>, ci: usize, header: &Map<String, Value>) -> Result<(), GateError> {
        let Some(st) = self.choices.get_mut(ci) else { return Ok(()) };
        let Some(p) = st.open.take() else { return Ok(()) };
        let Some(c) = st.calls.get(p) else { return Ok(()) };
        cx.close_text(&[], c.call, None, false)?;
        let Some(t) = cx.sh.call(c.call) else { return Ok(()) };
        let Some(text) = t.allowed_text() else { return Ok(()) };
        let member = if c.kind == "function" { "arguments" } else { "input" };
        let mut tc = Map::new();
        tc.insert("index".into(), json!(st.released));
        if let Some(id) = &c.id {
            tc.insert("id".into(), json!(id));
        }
        tc.insert("type".into(), json!(c.kind));
        tc.insert(c.kind.into(), json!({ "name": c.name, member: text }));
        let mut chunk = header.clone();
        chunk.insert("choices".into(), json!([{ "index": st.index, "delta": { "tool_calls": [Value::Object(tc)] }, "logprobs": null, "finish_reason": null }]));
        st.released += 1;
        let weight = text.len() + 256;
        cx.emit(Value::Object(chunk), weight)
    }

    /// One `delta.tool_calls[]` fragment of choice `ci`.
    fn fragment(&mut self, cx: &mut Cx<'_>, ci: usize, path: &[Seg], f: &Value, header: &Map<String, Value>) -> Result<(), GateError> {
        let m = cx.obj(path, f)?;
        let wire_index = cx.index(path, m, "index")?;
        let id = cx.opt_str(path, m, "id")?.filter(|s| !s.is_empty());
        let kind = match cx.opt_str(path, m, "type")? {
            Some("function") => "function",
            Some("custom") => "custom",
            None if m.get("custom").is_some_and(|v| !v.is_null()) => "custom",
            None => "function",
            Some(other) => return Err(cx.err(&key(path, "type"), format!("unsupported tool call type {other:?}"))),
        };
        let member = if kind == "function" { "arguments" } else { "input" };
        let body = match m.get(kind) {
            None | Some(Value::Null) => None,
            Some(v) => Some(cx.obj(&key(path, kind), v)?),
        };
        let bp = key(path, kind);
        let name = match body {
            Some(b) => cx.opt_str(&bp, b, "name")?.filter(|s| !s.is_empty()),
            None => None,
        };
        let piece = match body {
            Some(b) => cx.opt_str(&bp, b, member)?,
            None => None,
        };
        let Some(st) = self.choices.get(ci) else { return Ok(()) };
        if let Some(&p) = st.by_wire.get(&wire_index) {
            let Some(c) = st.calls.get(p) else { return Ok(()) };
            if st.open != Some(p) {
                return Err(cx.err(path, format!("a fragment of tool call index {wire_index} after that call completed (calls stream one after another)")));
            }
            if id.is_some_and(|i| c.id.as_deref() != Some(i)) || name.is_some_and(|n| n != c.name) {
                return Err(cx.err(path, format!("tool call index {wire_index} changed its id or name mid-stream")));
            }
            let call = c.call;
            return match piece {
                Some(t) => cx.append(call, t),
                None => Ok(()),
            };
        }
        self.close_open(cx, ci, header)?;
        let Some(name) = name else {
            return Err(cx.err(path, format!("the first fragment of tool call index {wire_index} has no `{kind}.name`")));
        };
        let call = cx.open(path, id, name, false)?;
        cx.keep(name.len() + id.map_or(0, str::len) + 64)?;
        let Some(st) = self.choices.get_mut(ci) else { return Ok(()) };
        st.calls.push(CallState { wire_index, call, kind, id: id.map(str::to_owned), name: name.to_owned() });
        st.by_wire.insert(wire_index, st.calls.len() - 1);
        st.open = Some(st.calls.len() - 1);
        match piece {
            Some(t) => cx.append(call, t),
            None => Ok(()),
        }
    }

    /// One `choices[j]` entry; answers its forwarded form, if anything of it is to be forwarded.
    fn read_choice(&mut self, cx: &mut Cx<'_>, j: usize, c: Value, header: &Map<String, Value>) -> Result<Option<Value>, GateError> {
        let path = index(&key(&[], "choices"), j);
        let Value::Object(mut c) = c else { return Err(cx.err(&path, "expected a choice object")) };
        only_chunk_members(cx, &path, &mut c, CHOICE_MEMBERS)?;
        let ix = cx.index(&path, &c, "index")?;
        let finish = cx.opt_str(&path, &c, "finish_reason")?.map(str::to_owned);
        let ci = self.choice(ix);
        let delta = match c.get_mut("delta").map(Value::take) {
            None | Some(Value::Null) => None,
            Some(Value::Object(m)) => Some(m),
            Some(_) => return Err(cx.err(&key(&path, "delta"), "expected an object")),
        };
        let mut forwarded_delta = None;
        if let Some(mut delta) = delta {
            let dp = key(&path, "delta");
            if delta.get("function_call").is_some_and(|v| !v.is_null()) {
                return Err(cx.err(&key(&dp, "function_call"), "the deprecated `function_call` delta is not read in streams; send tools and `tool_calls`"));
            }
            let role = cx.opt_str(&dp, &delta, "role")?.map(str::to_owned);
            let content = cx.opt_str(&dp, &delta, "content")?.map(str::to_owned);
            let refusal = cx.opt_str(&dp, &delta, "refusal")?.map(str::to_owned);
            cx.keep(content.as_ref().map_or(0, String::len) + refusal.as_ref().map_or(0, String::len))?;
            if let Some(st) = self.choices.get_mut(ci) {
                if role.is_some() {
                    st.role = role;
                }
                if let Some(t) = content {
                    st.content.get_or_insert_with(String::new).push_str(&t);
                }
                if let Some(t) = refusal {
                    st.refusal.get_or_insert_with(String::new).push_str(&t);
                }
            }
            match delta.shift_remove("tool_calls") {
                None | Some(Value::Null) => {}
                Some(Value::Array(frags)) => {
                    if !frags.is_empty() && self.choices.get(ci).is_some_and(|s| s.finish.is_some()) {
                        return Err(cx.err(&key(&dp, "tool_calls"), format!("a tool call after choice {ix} finished")));
                    }
                    for (k, f) in frags.iter().enumerate() {
                        self.fragment(cx, ci, &index(&key(&dp, "tool_calls"), k), f, header)?;
                    }
                }
                Some(_) => return Err(cx.err(&key(&dp, "tool_calls"), "expected an array")),
            }
            if !delta.is_empty() {
                forwarded_delta = Some(delta);
            }
        }
        if let Some(f) = &finish {
            self.close_open(cx, ci, header)?;
            if let Some(st) = self.choices.get_mut(ci) {
                st.finish = Some(f.clone());
            }
        }
        let logprobs = c.get("logprobs").is_some_and(|v| !v.is_null());
        if forwarded_delta.is_none() && finish.is_none() && !logprobs {
            return Ok(None);
        }
        c.insert("delta".into(), Value::Object(forwarded_delta.unwrap_or_default()));
        let all_dropped = self.choices.get(ci).is_some_and(|s| !s.calls.is_empty() && s.released == 0);
        if finish.as_deref() == Some("tool_calls") && all_dropped {
            c.insert("finish_reason".into(), json!("stop"));
        }
        Ok(Some(Value::Object(c)))
    }

    /// The assembled message of one choice, with its calls' slots.
    fn message(&self, cx: &Cx<'_>, pos: usize, st: &ChoiceState, slots: &mut Vec<Slot>) -> Value {
        let mut msg = Map::new();
        msg.insert("role".into(), json!(st.role.as_deref().unwrap_or("assistant")));
        msg.insert("content".into(), st.content.as_ref().map_or(Value::Null, |c| json!(c)));
        if let Some(r) = &st.refusal {
            msg.insert("refusal".into(), json!(r));
        }
        let mut calls: Vec<&CallState> = st.calls.iter().collect();
        calls.sort_by_key(|c| c.wire_index);
        if !calls.is_empty() {
            let mut list = Vec::with_capacity(calls.len());
            for (k, c) in calls.iter().enumerate() {
                let member = if c.kind == "function" { "arguments" } else { "input" };
                let text = cx.sh.call(c.call).map_or(String::new(), |t| t.text.clone());
                let mut tc = Map::new();
                if let Some(id) = &c.id {
                    tc.insert("id".into(), json!(id));
                }
                tc.insert("type".into(), json!(c.kind));
                tc.insert(c.kind.into(), json!({ "name": c.name, member: text }));
                list.push(Value::Object(tc));
                let slot = [
                    Seg::Key("choices".into()),
                    Seg::Index(pos),
                    Seg::Key("message".into()),
                    Seg::Key("tool_calls".into()),
                    Seg::Index(k),
                    Seg::Key(c.kind.into()),
                    Seg::Key(member.into()),
                ];
                slots.push(Slot { call: c.call, slot: slot.to_vec() });
            }
            msg.insert("tool_calls".into(), Value::Array(list));
        }
        Value::Object(msg)
    }
}

impl Assembler for OpenAiStream {
    fn event(&mut self, cx: &mut Cx<'_>, ev: Value) -> Result<(), GateError> {
        let Value::Object(mut chunk) = ev else { return Err(cx.err(&[], "expected a chunk object")) };
        if let Some(o) = chunk.get("object") {
            if o.as_str() != Some("chat.completion.chunk") {
                return Err(cx.err(&key(&[], "object"), format!("expected \"chat.completion.chunk\", got {o}")));
            }
        }
        only_chunk_members(cx, &[], &mut chunk, CHUNK_MEMBERS)?;
        let choices = match chunk.get_mut("choices").map(Value::take) {
            Some(Value::Array(a)) => a,
            Some(_) => return Err(cx.err(&key(&[], "choices"), "expected an array")),
            None => return Err(cx.err(&[], "missing `choices`")),
        };
        self.chunks += 1;
        if let Some(u) = chunk.get("usage").filter(|u| !u.is_null()) {
            self.usage = Some(u.clone());
        }
        let mut header = chunk.clone();
        header.shift_remove("choices");
        header.shift_remove("usage");
        header.shift_remove("obfuscation");
        if self.envelope.is_none() {
            cx.keep(cx.bytes)?;
            self.envelope = Some(header.clone());
        }
        let had_choices = !choices.is_empty();
        let mut forwarded = Vec::new();
        for (j, c) in choices.into_iter().enumerate() {
            if let Some(f) = self.read_choice(cx, j, c, &header)? {
                forwarded.push(f);
            }
        }
        if had_choices && forwarded.is_empty() {
            return Ok(()); // only held tool-call fragments
        }
        chunk.insert("choices".into(), Value::Array(forwarded));
        cx.pass(Value::Object(chunk))
    }

    fn done(&mut self, _cx: &mut Cx<'_>) -> Result<(), GateError> {
        self.done = true;
        Ok(())
    }

    fn ended(&self) -> Option<&'static str> {
        self.done.then_some("[DONE]")
    }

    fn finish(&mut self, cx: &mut Cx<'_>) -> Result<Assembled, GateError> {
        if self.chunks == 0 {
            return Err(cx.cut("before any chunk"));
        }
        if let Some(st) = self.choices.iter().find(|c| c.finish.is_none()) {
            let open = st.open.and_then(|p| st.calls.get(p)).map_or(String::new(), |c| {
                format!(
                    ", while tool call index {} (`{}`{}) was still streaming",
                    c.wire_index,
                    c.name,
                    c.id.as_deref().map_or(String::new(), |i| format!(", {i}"))
                )
            });
            return Err(cx.cut(format!("before the `finish_reason` of choice {}{open}", st.index)));
        }
        let mut order: Vec<&ChoiceState> = self.choices.iter().collect();
        order.sort_by_key(|c| c.index);
        let mut slots = Vec::new();
        let mut choices = Vec::with_capacity(order.len());
        for (pos, st) in order.iter().enumerate() {
            let message = self.message(cx, pos, st, &mut slots);
            choices.push(json!({ "index": st.index, "message": message, "logprobs": null, "finish_reason": st.finish }));
        }
        let mut payload = self.envelope.clone().unwrap_or_default();
        payload.insert("object".into(), json!("chat.completion"));
        payload.insert("choices".into(), Value::Array(choices));
        if let Some(u) = &self.usage {
            payload.insert("usage".into(), u.clone());
        }
        Ok(Assembled { payload: Value::Object(payload), calls: slots, provider_executed: Vec::new() })
    }
}
