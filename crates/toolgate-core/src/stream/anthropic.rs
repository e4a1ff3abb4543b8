//! Anthropic Messages stream: `message_start` (the message, content usually empty), then per
//! content block `content_block_start` / `content_block_delta` / `content_block_stop` keyed by
//! `index`, then `message_delta` (`stop_reason`, usage) and `message_stop`; `ping` and `error`
//! events may come between.
//!
//! A `tool_use` block is a call: its `input_json_delta.partial_json` pieces are held, and at
//! `content_block_stop` it is decided and, if allowed, released as start + one delta + stop.
//! Blocks are renumbered in the order forwarded (the SDK accumulator appends each started block
//! and addresses deltas by position). `tool_use` blocks already complete in `message_start`
//! (programmatic tool calling) are decided there. `stop_reason: "tool_use"` becomes `"end_turn"`
//! when every call was dropped. Server-run blocks (`server_tool_use`, `mcp_tool_use`) pass and
//! are reported as provider-executed.

use ahash::AHashMap;
use serde_json::{json, Map, Value};

use super::event::Cx;
use super::{Assembled, Assembler, Slot};
use crate::dialect::shape::{id_or_index, index, key};
use crate::dialect::ProviderCall;
use crate::error::GateError;
use crate::json::parse::ParseError;
use crate::json::pointer::Seg;

/// Blocks the server runs itself (as in the whole-turn codec).
const SERVER_TOOL_BLOCKS: [&str; 2] = ["server_tool_use", "mcp_tool_use"];

/// The Messages stream assembler.
#[derive(Debug, Default)]
pub(crate) struct AnthropicStream {
    /// `message_start.message`, its content moved into `blocks`, updated by `message_delta`.
    message: Option<Map<String, Value>>,
    /// Content blocks in the order started (prepopulated ones first), and their positions by
    /// wire index.
    blocks: Vec<Block>,
    by_wire: AHashMap<usize, usize>,
    /// The next forwarded block index.
    out_next: usize,
    /// Gated calls seen, and those forwarded.
    calls: usize,
    released: usize,
    /// `message_stop` was seen.
    stopped: bool,
}

#[derive(Debug)]
struct Block {
    /// The block's index on the wire.
    wire: usize,
    /// The block as assembled so far.
    value: Value,
    /// The tracked call, for `tool_use` blocks.
    call: Option<usize>,
    /// Forwarded index, for blocks passed through.
    out: Option<usize>,
    /// `input_json_delta` text of a server-run block.
    json: String,
    /// A duplicate or prototype key in a `tool_use` block's starting `input`.
    problem: Option<ParseError>,
    open: bool,
}

impl AnthropicStream {
    fn block(&self, cx: &Cx<'_>, path: &[Seg], m: &Map<String, Value>) -> Result<usize, GateError> {
        let wire = cx.index(path, m, "index")?;
        let pos = self.by_wire.get(&wire).copied().ok_or_else(|| cx.err(&key(path, "index"), format!("content block {wire} was never started")))?;
        if !self.blocks.get(pos).is_some_and(|b| b.open) {
            return Err(cx.err(&key(path, "index"), format!("content block {wire} already stopped")));
        }
        Ok(pos)
    }

    fn message_start(&mut self, cx: &mut Cx<'_>, mut ev: Map<String, Value>) -> Result<(), GateError> {
        if self.message.is_some() {
            return Err(cx.err(&[], "a second `message_start` before `message_stop`"));
        }
        let mp = key(&[], "message");
        let mut msg = match ev.get_mut("message").map(Value::take) {
            Some(Value::Object(m)) => m,
            Some(_) => return Err(cx.err(&mp, "expected an object")),
            None => return Err(cx.err(&[], "missing `message`")),
        };
        let content = match msg.get_mut("content").map(Value::take) {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(a)) => a,
            Some(_) => return Err(cx.err(&key(&mp, "content"), "expected an array")),
        };
        cx.keep(cx.bytes)?;
        let mut forwarded = Vec::with_capacity(content.len());
        for (i, b) in content.into_iter().enumerate() {
            let bp = index(&key(&mp, "content"), i);
            let m = cx.obj(&bp, &b)?;
            let kind = cx.str(&bp, m, "type")?;
            let mut block = Block { wire: i, value: b.clone(), call: None, out: None, json: String::new(), problem: None, open: false };
            if kind == "tool_use" {
                let call = cx.open(&bp, Some(cx.str(&bp, m, "id")?), cx.str(&bp, m, "name")?, true)?;
                let problem = cx.claim(&key(&bp, "input"));
                cx.close_value(call, m.get("input"), problem)?;
                self.calls += 1;
                block.call = Some(call);
                // a refused call is dropped; an allowed one keeps the arguments to run with
                if let Some(args) = cx.sh.call(call).and_then(|t| t.verdict.as_ref()).and_then(|v| v.arguments.clone()) {
                    let mut kept = m.clone();
                    kept.insert("input".into(), args);
                    forwarded.push(Value::Object(kept));
                    self.released += 1;
                }
            } else {
                forwarded.push(b);
            }
            self.by_wire.insert(i, self.blocks.len());
            self.blocks.push(block);
        }
        self.out_next = forwarded.len();
        let mut fwd = msg.clone();
        fwd.insert("content".into(), Value::Array(forwarded));
        ev.insert("message".into(), Value::Object(fwd));
        self.message = Some(msg);
        cx.pass(Value::Object(ev))
    }

    fn block_start(&mut self, cx: &mut Cx<'_>, mut ev: Map<String, Value>) -> Result<(), GateError> {
        let wire = cx.index(&[], &ev, "index")?;
        if self.by_wire.contains_key(&wire) {
            return Err(cx.err(&key(&[], "index"), format!("content block {wire} started twice")));
        }
        let bp = key(&[], "content_block");
        let cb = cx.member_obj(&[], &ev, "content_block")?;
        let kind = cx.str(&bp, cb, "type")?;
        let mut block = Block { wire, value: Value::Object(cb.clone()), call: None, out: None, json: String::new(), problem: None, open: true };
        cx.keep(cx.bytes)?;
        if kind == "tool_use" {
            let call = cx.open(&bp, Some(cx.str(&bp, cb, "id")?), cx.str(&bp, cb, "name")?, true)?;
            self.calls += 1;
            block.call = Some(call);
            block.problem = cx.claim(&key(&bp, "input"));
            self.by_wire.insert(wire, self.blocks.len());
            self.blocks.push(block);
            return Ok(()); // held until content_block_stop
        }
        block.out = Some(self.out_next);
        ev.insert("index".into(), json!(self.out_next));
        self.out_next += 1;
        self.by_wire.insert(wire, self.blocks.len());
        self.blocks.push(block);
        cx.pass(Value::Object(ev))
    }

    fn block_delta(&mut self, cx: &mut Cx<'_>, mut ev: Map<String, Value>) -> Result<(), GateError> {
        let pos = self.block(cx, &[], &ev)?;
        let dp = key(&[], "delta");
        let delta = cx.member_obj(&[], &ev, "delta")?;
        let kind = cx.str(&dp, delta, "type")?.to_owned();
        let Some(b) = self.blocks.get_mut(pos) else { return Ok(()) };
        if let Some(call) = b.call {
            if kind != "input_json_delta" {
                return Err(cx.err(&key(&dp, "type"), format!("a {kind:?} delta in a tool_use block")));
            }
            let piece = cx.str(&dp, delta, "partial_json")?;
            return cx.append(call, piece);
        }
        let field = |k: &str| delta.get(k).and_then(Value::as_str).unwrap_or("");
        let grow = |v: &mut Value, k: &str, piece: &str| {
            if let Some(m) = v.as_object_mut() {
                let mut s = m.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
                s.push_str(piece);
                m.insert(k.to_owned(), Value::String(s));
            }
        };
        let added = match kind.as_str() {
            "text_delta" => {
                grow(&mut b.value, "text", field("text"));
                field("text").len()
            }
            "thinking_delta" => {
                grow(&mut b.value, "thinking", field("thinking"));
                field("thinking").len()
            }
            "signature_delta" => {
                if let Some(m) = b.value.as_object_mut() {
                    m.insert("signature".into(), json!(field("signature")));
                }
                field("signature").len()
            }
            "input_json_delta" => {
                b.json.push_str(field("partial_json"));
                field("partial_json").len()
            }
            "citations_delta" => {
                let c = delta.get("citation").cloned().unwrap_or(Value::Null);
                if let Some(m) = b.value.as_object_mut() {
                    if let Some(Value::Array(list)) = m.get_mut("citations") {
                        list.push(c);
                    } else {
                        m.insert("citations".into(), json!([c]));
                    }
                }
                cx.bytes
            }
            _ => 0,
        };
        let out = b.out;
        cx.keep(added)?;
        ev.insert("index".into(), json!(out));
        cx.pass(Value::Object(ev))
    }

    fn block_stop(&mut self, cx: &mut Cx<'_>, mut ev: Map<String, Value>) -> Result<(), GateError> {
        let pos = self.block(cx, &[], &ev)?;
        let Some(b) = self.blocks.get_mut(pos) else { return Ok(()) };
        b.open = false;
        let Some(call) = b.call else {
            if !b.json.is_empty() {
                let input = serde_json::from_str::<Value>(&b.json).unwrap_or(Value::Null);
                if let Some(m) = b.value.as_object_mut() {
                    m.insert("input".into(), input);
                }
            }
            ev.insert("index".into(), json!(b.out));
            return cx.pass(Value::Object(ev));
        };
        let start_input = b.value.get("input").filter(|v| v.as_object().is_some_and(|m| !m.is_empty())).cloned();
        let streamed = cx.sh.call(call).is_some_and(|t| !t.text.is_empty() || t.overflowed);
        match start_input {
            Some(input) if !streamed => {
                let problem = b.problem.take();
                cx.close_value(call, Some(&input), problem)?
            }
            _ => cx.close_text(&[], call, None, false)?,
        }
        let Some(text) = cx.sh.call(call).and_then(|t| t.allowed_text()) else { return Ok(()) };
        let out = self.out_next;
        self.out_next += 1;
        self.released += 1;
        let mut start = b.value.as_object().cloned().unwrap_or_default();
        start.insert("input".into(), json!({}));
        let weight = text.len() + 256;
        cx.emit(json!({ "type": "content_block_start", "index": out, "content_block": start }), 128)?;
        cx.emit(json!({ "type": "content_block_delta", "index": out, "delta": { "type": "input_json_delta", "partial_json": text } }), weight)?;
        cx.emit(json!({ "type": "content_block_stop", "index": out }), 64)
    }

    fn message_delta(&mut self, cx: &mut Cx<'_>, mut ev: Map<String, Value>) -> Result<(), GateError> {
        let dp = key(&[], "delta");
        let delta = cx.member_obj(&[], &ev, "delta")?.clone();
        let stop = cx.opt_str(&dp, &delta, "stop_reason")?;
        if let Some(msg) = self.message.as_mut() {
            for (k, v) in &delta {
                msg.insert(k.clone(), v.clone());
            }
            if let Some(Value::Object(u)) = ev.get("usage") {
                if let Some(Value::Object(mu)) = msg.get_mut("usage") {
                    for (k, v) in u {
                        mu.insert(k.clone(), v.clone());
                    }
                } else {
                    msg.insert("usage".into(), Value::Object(u.clone()));
                }
            }
        }
        if stop == Some("tool_use") && self.calls > 0 && self.released == 0 {
            if let Some(Value::Object(d)) = ev.get_mut("delta") {
                d.insert("stop_reason".into(), json!("end_turn"));
            }
        }
        cx.pass(Value::Object(ev))
    }
}

impl Assembler for AnthropicStream {
    fn event(&mut self, cx: &mut Cx<'_>, ev: Value) -> Result<(), GateError> {
        let Value::Object(ev) = ev else { return Err(cx.err(&[], "expected an event object")) };
        let kind = cx.str(&[], &ev, "type")?.to_owned();
        if kind != "message_start" && kind != "ping" && kind != "error" && self.message.is_none() {
            return Err(cx.err(&[], "an event before `message_start`"));
        }
        match kind.as_str() {
            "message_start" => self.message_start(cx, ev),
            "content_block_start" => self.block_start(cx, ev),
            "content_block_delta" => self.block_delta(cx, ev),
            "content_block_stop" => self.block_stop(cx, ev),
            "message_delta" => self.message_delta(cx, ev),
            "message_stop" => {
                self.stopped = true;
                cx.pass(Value::Object(ev))
            }
            _ => cx.pass(Value::Object(ev)), // ping, error, and events of newer API versions
        }
    }

    fn ended(&self) -> Option<&'static str> {
        self.stopped.then_some("message_stop")
    }

    fn finish(&mut self, cx: &mut Cx<'_>) -> Result<Assembled, GateError> {
        let Some(msg) = self.message.clone() else { return Err(cx.cut("before `message_start`")) };
        if !self.stopped {
            let open: Vec<String> = self
                .blocks
                .iter()
                .filter(|b| b.open)
                .map(|b| {
                    let what = b.value.get("type").and_then(Value::as_str).unwrap_or("block");
                    let name = b.value.get("name").and_then(Value::as_str).map_or(String::new(), |n| format!(" `{n}`"));
                    format!("content block {} ({what}{name})", b.wire)
                })
                .collect();
            let open = if open.is_empty() { String::new() } else { format!(" ({} still open)", open.join(", ")) };
            return Err(cx.cut(format!("without `message_stop`{open}")));
        }
        let mut slots = Vec::new();
        let mut provider = Vec::new();
        let mut content = Vec::with_capacity(self.blocks.len());
        for (pos, b) in self.blocks.iter().enumerate() {
            let mut v = b.value.clone();
            if let Some(call) = b.call {
                if let Some(m) = v.as_object_mut() {
                    m.insert("input".into(), cx.value_of(call));
                }
                slots.push(Slot { call, slot: vec![Seg::Key("content".into()), Seg::Index(pos), Seg::Key("input".into())] });
            } else if let Some(kind) = v.get("type").and_then(Value::as_str).filter(|k| SERVER_TOOL_BLOCKS.contains(k)) {
                provider.push(ProviderCall {
                    call_id: id_or_index(v.get("id").and_then(Value::as_str), pos),
                    tool: v.get("name").and_then(Value::as_str).unwrap_or(kind).to_owned(),
                    kind: kind.to_owned(),
                });
            }
            content.push(v);
        }
        let mut payload = msg;
        payload.insert("content".into(), Value::Array(content));
        Ok(Assembled { payload: Value::Object(payload), calls: slots, provider_executed: provider })
    }
}
