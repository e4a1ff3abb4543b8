//! OpenAI Responses stream: semantic events. Output items open with `response.output_item.added`
//! and close with `response.output_item.done`, addressed by `output_index`; a `function_call`
//! item's arguments stream as `response.function_call_arguments.delta` pieces and arrive whole in
//! `.done` (a `custom_tool_call` item's input likewise, in `response.custom_tool_call_input.*`);
//! `response.completed` (or `.incomplete` / `.failed`) ends the stream carrying the whole
//! Response. Every event carries a `sequence_number`.
//!
//! A call is decided at its first complete form (`.done`, or `output_item.done` if that comes
//! first); the other must agree. An allowed call is released as added + one delta + done, then
//! its `output_item.done`. Forwarded items are renumbered in the order forwarded, sequence numbers
//! renumbered, and the `output` of lifecycle events rewritten to match (refused calls removed,
//! repaired arguments written). Client-run item types toolgate cannot gate (`computer_call`,
//! `local_shell_call`, `shell_call`, `apply_patch_call`) are `E_PAYLOAD`: they are never let
//! through unguarded. Other `*_call` items run on OpenAI's side: passed and reported.

use serde_json::{json, Map, Value};

use super::event::Cx;
use super::{Assembled, Assembler, Slot};
use crate::dialect::shape::{id_or_index, index, key};
use crate::dialect::ProviderCall;
use crate::error::GateError;
use crate::json::pointer::Seg;

/// Items the client must run that toolgate has no call shape for.
const UNGATED_CLIENT_ITEMS: [&str; 4] = ["computer_call", "local_shell_call", "shell_call", "apply_patch_call"];

/// The Responses stream assembler.
#[derive(Debug, Default)]
pub(crate) struct ResponsesStream {
    /// The last Response of a lifecycle event.
    response: Option<Map<String, Value>>,
    /// The terminal event's type, once seen.
    terminal: Option<&'static str>,
    /// Output items in the order added.
    items: Vec<Item>,
    out_next: usize,
    /// The next forwarded `sequence_number`, once the stream uses them.
    seq: Option<u64>,
}

#[derive(Debug)]
struct Item {
    wire: usize,
    /// The item as added, replaced by its `output_item.done` form.
    value: Map<String, Value>,
    /// For tool call items: the tracked call and its arguments member (`arguments` / `input`).
    call: Option<(usize, &'static str)>,
    /// Forwarded index (pass-through items at once, calls when released).
    out: Option<usize>,
    /// `output_item.done` was seen.
    done: bool,
    /// An allowed call's added/delta/done events were forwarded.
    released: bool,
}

fn call_member(kind: &str) -> Option<&'static str> {
    match kind {
        "function_call" => Some("arguments"),
        "custom_tool_call" => Some("input"),
        _ => None,
    }
}

impl ResponsesStream {
    fn item(&self, cx: &Cx<'_>, ev: &Map<String, Value>) -> Result<usize, GateError> {
        let wire = cx.index(&[], ev, "output_index")?;
        self.items.iter().position(|i| i.wire == wire).ok_or_else(|| cx.err(&key(&[], "output_index"), format!("output item {wire} was never added")))
    }

    /// Forwards `ev`, its sequence number renumbered.
    fn forward(&mut self, cx: &mut Cx<'_>, mut ev: Map<String, Value>, weight: usize) -> Result<(), GateError> {
        if ev.contains_key("sequence_number") {
            let n = self.seq.unwrap_or(0);
            ev.insert("sequence_number".into(), json!(n));
            self.seq = Some(n + 1);
        } else if let Some(n) = self.seq {
            ev.insert("sequence_number".into(), json!(n));
            self.seq = Some(n + 1);
        }
        cx.emit(Value::Object(ev), weight)
    }

    /// Releases the call of item `pos` if it is decided, allowed and not yet released; with its
    /// `output_item.done` when that was seen.
    fn release(&mut self, cx: &mut Cx<'_>, pos: usize) -> Result<(), GateError> {
        let Some(it) = self.items.get(pos) else { return Ok(()) };
        let Some((call, member)) = it.call else { return Ok(()) };
        let Some(text) = cx.sh.call(call).and_then(|t| t.allowed_text()) else { return Ok(()) };
        if it.released {
            return Ok(());
        }
        let out = self.out_next;
        let item_id = it.value.get("id").cloned().unwrap_or(Value::Null);
        let (delta_kind, done_kind) = if member == "arguments" {
            ("response.function_call_arguments.delta", "response.function_call_arguments.done")
        } else {
            ("response.custom_tool_call_input.delta", "response.custom_tool_call_input.done")
        };
        let mut added = it.value.clone();
        added.insert(member.into(), json!(""));
        added.insert("status".into(), json!("in_progress"));
        let done_item = it.done.then(|| {
            let mut d = it.value.clone();
            d.insert(member.into(), json!(text));
            d
        });
        self.out_next += 1;
        if let Some(it) = self.items.get_mut(pos) {
            it.out = Some(out);
            it.released = true;
        }
        let w = text.len() + 256;
        self.forward(cx, obj(json!({ "type": "response.output_item.added", "output_index": out, "item": added })), 256)?;
        self.forward(cx, obj(json!({ "type": delta_kind, "item_id": item_id, "output_index": out, "delta": text })), w)?;
        self.forward(cx, obj(json!({ "type": done_kind, "item_id": item_id, "output_index": out, member: text })), w)?;
        if let Some(d) = done_item {
            self.forward(cx, obj(json!({ "type": "response.output_item.done", "output_index": out, "item": d })), w)?;
        }
        Ok(())
    }

    fn added(&mut self, cx: &mut Cx<'_>, mut ev: Map<String, Value>) -> Result<(), GateError> {
        let wire = cx.index(&[], &ev, "output_index")?;
        if self.items.iter().any(|i| i.wire == wire) {
            return Err(cx.err(&key(&[], "output_index"), format!("output item {wire} added twice")));
        }
        let ip = key(&[], "item");
        let item = cx.member_obj(&[], &ev, "item")?.clone();
        let kind = cx.str(&ip, &item, "type")?;
        if UNGATED_CLIENT_ITEMS.contains(&kind) {
            return Err(cx.err(&key(&ip, "type"), format!("a {kind:?} item: toolgate cannot gate it, so the stream is refused rather than let it through")));
        }
        cx.keep(cx.bytes)?;
        if let Some(member) = call_member(kind) {
            let name = cx.str(&ip, &item, "name")?;
            let call = cx.open(&ip, cx.opt_str(&ip, &item, "call_id")?, name, false)?;
            if let Some(first) = cx.opt_str(&ip, &item, member)?.filter(|s| !s.is_empty()) {
                cx.append(call, first)?;
            }
            self.items.push(Item { wire, value: item, call: Some((call, member)), out: None, done: false, released: false });
            return Ok(());
        }
        let out = self.out_next;
        self.out_next += 1;
        self.items.push(Item { wire, value: item, call: None, out: Some(out), done: false, released: false });
        ev.insert("output_index".into(), json!(out));
        let w = cx.bytes;
        self.forward(cx, ev, w)
    }

    fn item_done(&mut self, cx: &mut Cx<'_>, mut ev: Map<String, Value>) -> Result<(), GateError> {
        let pos = self.item(cx, &ev)?;
        let ip = key(&[], "item");
        let item = cx.member_obj(&[], &ev, "item")?.clone();
        let Some(it) = self.items.get_mut(pos) else { return Ok(()) };
        if it.done {
            return Err(cx.err(&key(&[], "output_index"), format!("output item {} done twice", it.wire)));
        }
        it.done = true;
        cx.keep(cx.bytes)?;
        let Some((call, member)) = it.call else {
            let out = it.out;
            it.value = item;
            ev.insert("output_index".into(), json!(out));
            let w = cx.bytes;
            return self.forward(cx, ev, w);
        };
        let whole = cx.opt_str(&ip, &item, member)?.map(str::to_owned);
        let was_released = it.released;
        let out = it.out;
        it.value = item;
        cx.close_text(&key(&ip, member), call, whole.as_deref(), true)?;
        if !was_released {
            return self.release(cx, pos);
        }
        let Some(text) = cx.sh.call(call).and_then(|t| t.allowed_text()) else { return Ok(()) };
        if let Some(Value::Object(m)) = ev.get_mut("item") {
            m.insert(member.into(), json!(text));
        }
        ev.insert("output_index".into(), json!(out));
        let w = cx.bytes + text.len();
        self.forward(cx, ev, w)
    }

    /// A `.delta` or `.done` of a tool call item's arguments.
    fn call_piece(&mut self, cx: &mut Cx<'_>, ev: &Map<String, Value>, done: Option<&'static str>) -> Result<(), GateError> {
        let pos = self.item(cx, ev)?;
        let Some((call, _)) = self.items.get(pos).and_then(|i| i.call) else {
            return Err(cx.err(&key(&[], "output_index"), "tool call arguments for an item that is not a tool call"));
        };
        match done {
            None => cx.append(call, cx.str(&[], ev, "delta")?),
            Some(member) => {
                cx.close_text(&key(&[], member), call, Some(cx.str(&[], ev, member)?), true)?;
                self.release(cx, pos)
            }
        }
    }

    /// Rewrites `response.output` to what was forwarded. In the terminal Response every tool call
    /// must be one the stream announced, with the arguments decided.
    fn rewrite_output(&self, cx: &Cx<'_>, response: &mut Map<String, Value>, terminal: bool) -> Result<(), GateError> {
        let op = key(&key(&[], "response"), "output");
        let Some(Value::Array(output)) = response.get_mut("output") else { return Ok(()) };
        let mut kept = Vec::with_capacity(output.len());
        for (i, item) in std::mem::take(output).into_iter().enumerate() {
            let kind = item.get("type").and_then(Value::as_str).unwrap_or("");
            let Some(member) = call_member(kind) else {
                kept.push(item);
                continue;
            };
            let call_id = item.get("call_id").and_then(Value::as_str);
            let tracked = self.items.iter().filter_map(|it| it.call).find(|&(c, _)| cx.sh.call(c).is_some_and(|t| t.wire_id.as_deref() == call_id));
            let Some((c, _)) = tracked else {
                if terminal {
                    return Err(cx.err(&index(&op, i), format!("the final output holds a {kind} ({}) the stream never announced", call_id.unwrap_or("no call_id"))));
                }
                continue;
            };
            let Some(t) = cx.sh.call(c) else { continue };
            let sent = item.get(member).and_then(Value::as_str);
            if terminal && t.verdict.is_some() && !t.overflowed && sent.is_some_and(|s| s != t.text) {
                return Err(cx.err(&key(&index(&op, i), member), format!("the final arguments of call {:?} differ from those decided", t.call_id)));
            }
            if let (Some(text), Value::Object(mut m)) = (t.allowed_text(), item) {
                m.insert(member.into(), json!(text));
                kept.push(Value::Object(m));
            }
        }
        *output = kept;
        Ok(())
    }

    fn lifecycle(&mut self, cx: &mut Cx<'_>, mut ev: Map<String, Value>, terminal: Option<&'static str>) -> Result<(), GateError> {
        let mut response = cx.member_obj(&[], &ev, "response")?.clone();
        cx.keep(cx.bytes)?;
        let mut forwarded = response.clone();
        self.rewrite_output(cx, &mut forwarded, terminal.is_some())?;
        response.remove("output");
        self.response = Some(response);
        self.terminal = terminal;
        ev.insert("response".into(), Value::Object(forwarded));
        let w = cx.bytes;
        self.forward(cx, ev, w)
    }
}

fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

impl Assembler for ResponsesStream {
    fn event(&mut self, cx: &mut Cx<'_>, ev: Value) -> Result<(), GateError> {
        let Value::Object(ev) = ev else { return Err(cx.err(&[], "expected an event object")) };
        if self.seq.is_none() && ev.contains_key("sequence_number") {
            self.seq = Some(0);
        }
        let kind = cx.str(&[], &ev, "type")?.to_owned();
        match kind.as_str() {
            "response.created" | "response.queued" | "response.in_progress" => self.lifecycle(cx, ev, None),
            "response.completed" => self.lifecycle(cx, ev, Some("response.completed")),
            "response.incomplete" => self.lifecycle(cx, ev, Some("response.incomplete")),
            "response.failed" => self.lifecycle(cx, ev, Some("response.failed")),
            "response.output_item.added" => self.added(cx, ev),
            "response.output_item.done" => self.item_done(cx, ev),
            "response.function_call_arguments.delta" | "response.custom_tool_call_input.delta" => self.call_piece(cx, &ev, None),
            "response.function_call_arguments.done" => self.call_piece(cx, &ev, Some("arguments")),
            "response.custom_tool_call_input.done" => self.call_piece(cx, &ev, Some("input")),
            _ if ev.contains_key("output_index") => {
                let pos = self.item(cx, &ev)?;
                let Some(it) = self.items.get(pos) else { return Ok(()) };
                if it.call.is_some() {
                    return Ok(()); // anything else about a held call stays held
                }
                let mut ev = ev;
                ev.insert("output_index".into(), json!(it.out));
                if kind == "response.output_text.delta" {
                    cx.keep(ev.get("delta").and_then(Value::as_str).map_or(0, str::len))?;
                }
                let w = cx.bytes;
                self.forward(cx, ev, w)
            }
            _ => {
                let w = cx.bytes;
                self.forward(cx, ev, w)
            }
        }
    }

    fn ended(&self) -> Option<&'static str> {
        self.terminal
    }

    fn finish(&mut self, cx: &mut Cx<'_>) -> Result<Assembled, GateError> {
        if self.terminal.is_none() {
            let open: Vec<String> = self
                .items
                .iter()
                .filter(|i| i.call.is_some_and(|(c, _)| cx.sh.call(c).is_some_and(|t| t.verdict.is_none())))
                .map(|i| format!("output item {} (`{}`)", i.wire, i.value.get("name").and_then(Value::as_str).unwrap_or("?")))
                .collect();
            let open = if open.is_empty() { String::new() } else { format!(" ({} still streaming)", open.join(", ")) };
            return Err(cx.cut(format!("without `response.completed`, `response.incomplete` or `response.failed`{open}")));
        }
        let mut payload = self.response.clone().unwrap_or_default();
        let mut order: Vec<&Item> = self.items.iter().collect();
        order.sort_by_key(|i| i.wire);
        let mut slots = Vec::new();
        let mut provider = Vec::new();
        let mut output = Vec::with_capacity(order.len());
        for (pos, it) in order.iter().enumerate() {
            let mut v = it.value.clone();
            if let Some((call, member)) = it.call {
                v.insert(member.into(), json!(cx.sh.call(call).map_or("", |t| t.text.as_str())));
                slots.push(Slot { call, slot: vec![Seg::Key("output".into()), Seg::Index(pos), Seg::Key(member.into())] });
            } else if let Some(kind) = v.get("type").and_then(Value::as_str).filter(|k| k.ends_with("_call")) {
                provider.push(ProviderCall {
                    call_id: id_or_index(v.get("id").and_then(Value::as_str), pos),
                    tool: v.get("name").and_then(Value::as_str).unwrap_or(kind).to_owned(),
                    kind: kind.to_owned(),
                });
            }
            output.push(Value::Object(v));
        }
        payload.insert("output".into(), Value::Array(output));
        Ok(Assembled { payload: Value::Object(payload), calls: slots, provider_executed: provider })
    }
}
