//! OpenAI Responses stream: semantic events. Output items open with `response.output_item.added`
//! and close with `response.output_item.done`, addressed by `output_index`; a `function_call`
//! item's arguments stream as `response.function_call_arguments.delta` pieces and arrive whole in
//! `.done` (a `custom_tool_call` item's input likewise, in `response.custom_tool_call_input.*`);
//! `response.completed` (or `.incomplete` / `.failed`) ends the stream carrying the whole
//! Response. Every event carries a `sequence_number`.
//!
//! Items are classified as the whole-turn codec classifies them (`dialect/openai_responses.rs`):
//! `function_call` / `custom_tool_call` are gated as text arguments (a `namespace` prefixes the
//! tool name); built-ins the host runs (`computer_call`, `local_shell_call`, `shell_call`,
//! `apply_patch_call`, a client `tool_search_call`, any other `*_call` with a `call_id`) are gated
//! under their item type with their action as arguments, decided at `output_item.done`;
//! server-run items pass and are reported as provider-executed.
//!
//! An item keeps what it was when added: its `output_item.done` form has the same `type`, the
//! same `id` (where both carry one) and the same classification (a server-run item never becomes
//! a call, nor a call server-run, nor a message a call), or the stream stops (`E_PAYLOAD`).
//!
//! A text call is decided at its first complete form (`.done`, or `output_item.done` if that comes
//! first); the other must agree. An allowed call is released whole (added, one delta and done for a
//! text call; then its `output_item.done`); a refused one is dropped with every event about it.
//! A built-in call's `output_item.added` is released as the item decided (its `output_item.done`
//! form, repairs written) with the status it was added with.
//! Forwarded items are renumbered in the order forwarded, sequence numbers renumbered, and the
//! `output` of lifecycle events rewritten to match (refused calls removed, repairs written).
//! Every item of a lifecycle event's `output` that names a tracked call (by `id` or `call_id`,
//! whatever its `type` now says) must restate the call as decided — the same type, name,
//! namespace and ids; a text call's arguments the decided text; a built-in call's item its
//! decided form in every member but `status` — or the stream stops (`E_PAYLOAD`): a client
//! reading the final Response (openai-node `finalResponse()`) runs only what was decided.

use ahash::AHashMap;
use serde_json::{json, Map, Value};

use super::event::Cx;
use super::{Assembled, Assembler, Slot};
use crate::dialect::openai_responses::{CLIENT_BUILTINS, SERVER_ITEMS};
use crate::dialect::shape::{id_or_index, index, key};
use crate::dialect::ProviderCall;
use crate::error::GateError;
use crate::json::pointer::Seg;

/// What an output item is to the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A call whose arguments are text streamed in deltas, in this member.
    Text(&'static str),
    /// A built-in call whose action arrives whole in `output_item.done`.
    Builtin,
    /// Run by the server: passed, reported.
    Provider,
    /// Anything else (messages, reasoning …): passed.
    Other,
}

fn classify(item: &Map<String, Value>) -> Kind {
    let kind = item.get("type").and_then(Value::as_str).unwrap_or("");
    match kind {
        "function_call" => Kind::Text("arguments"),
        "custom_tool_call" => Kind::Text("input"),
        "tool_search_call" if item.get("execution").and_then(Value::as_str) != Some("client") => Kind::Provider,
        k if SERVER_ITEMS.contains(&k) => Kind::Provider,
        k if CLIENT_BUILTINS.iter().any(|(n, _)| *n == k) => Kind::Builtin,
        k if k.ends_with("_call") && item.contains_key("call_id") => Kind::Builtin,
        k if k.ends_with("_call") => Kind::Provider,
        _ => Kind::Other,
    }
}

/// The member holding a built-in call's action.
fn builtin_member(item: &Map<String, Value>) -> &'static str {
    let kind = item.get("type").and_then(Value::as_str).unwrap_or("");
    if kind == "computer_call" && !item.contains_key("action") && item.contains_key("actions") {
        return "actions";
    }
    if let Some((_, m)) = CLIENT_BUILTINS.iter().find(|(n, _)| *n == kind) {
        return m;
    }
    ["arguments", "action", "input", "operation"].into_iter().find(|k| item.contains_key(*k)).unwrap_or("arguments")
}

/// The Responses stream assembler.
#[derive(Debug, Default)]
pub(crate) struct ResponsesStream {
    /// The last Response of a lifecycle event.
    response: Option<Map<String, Value>>,
    /// The terminal event's type, once seen.
    terminal: Option<&'static str>,
    /// Output items in the order added; their positions by `output_index`, and (calls only) by
    /// item `id` and by `call_id`.
    items: Vec<Item>,
    by_wire: AHashMap<usize, usize>,
    calls_by_id: AHashMap<String, usize>,
    calls_by_call_id: AHashMap<String, usize>,
    out_next: usize,
    /// The next forwarded `sequence_number`, once the stream uses them.
    seq: Option<u64>,
}

#[derive(Debug)]
struct Item {
    wire: usize,
    /// The item as added.
    added: Map<String, Value>,
    /// The item as added, replaced by its `output_item.done` form.
    value: Map<String, Value>,
    /// What the item is to the gate.
    kind: Kind,
    /// For calls: the tracked call.
    call: Option<usize>,
    /// Forwarded index (pass-through items at once, calls when released).
    out: Option<usize>,
    /// `output_item.done` was seen.
    done: bool,
    /// An allowed call's added/delta/done events were forwarded.
    released: bool,
}

impl ResponsesStream {
    fn item(&self, cx: &Cx<'_>, ev: &Map<String, Value>) -> Result<usize, GateError> {
        let wire = cx.index(&[], ev, "output_index")?;
        self.by_wire.get(&wire).copied().ok_or_else(|| cx.err(&key(&[], "output_index"), format!("output item {wire} was never added")))
    }

    /// Forwards `ev`, its sequence number renumbered (and given, once the stream uses them).
    fn forward(&mut self, cx: &mut Cx<'_>, mut ev: Map<String, Value>, weight: usize) -> Result<(), GateError> {
        if let Some(n) = self.seq {
            ev.insert("sequence_number".into(), json!(n));
            self.seq = Some(n + 1);
        }
        cx.emit(Value::Object(ev), weight)
    }

    /// The item as it is to be forwarded once its call is allowed: the arguments member holding
    /// what runs (`None` while undecided or refused).
    fn allowed_item(&self, cx: &Cx<'_>, it: &Item, mut item: Map<String, Value>) -> Option<Map<String, Value>> {
        let t = cx.sh.call(it.call?)?;
        match it.kind {
            Kind::Text(member) => {
                item.insert(member.into(), json!(t.allowed_text()?));
            }
            _ => {
                let v = t.verdict.as_ref().filter(|v| v.allowed())?;
                if !v.untouched {
                    item.insert(builtin_member(&item).into(), v.arguments.clone()?);
                }
            }
        }
        Some(item)
    }

    /// Releases the call of item `pos` once decided and allowed: added (and, for a text call,
    /// one delta and done) at the next forwarded index; its `output_item.done` too when seen.
    fn release(&mut self, cx: &mut Cx<'_>, pos: usize) -> Result<(), GateError> {
        let Some(it) = self.items.get(pos) else { return Ok(()) };
        if it.released {
            return Ok(());
        }
        let Some(done_form) = self.allowed_item(cx, it, it.value.clone()) else { return Ok(()) };
        let out = self.out_next;
        let mut events = Vec::with_capacity(4);
        if let Kind::Text(member) = it.kind {
            let text = done_form.get(member).cloned().unwrap_or(Value::Null);
            let item_id = it.value.get("id").cloned().unwrap_or(Value::Null);
            let (delta_kind, done_kind) = if member == "arguments" {
                ("response.function_call_arguments.delta", "response.function_call_arguments.done")
            } else {
                ("response.custom_tool_call_input.delta", "response.custom_tool_call_input.done")
            };
            let mut added = it.value.clone();
            added.insert(member.into(), json!(""));
            added.insert("status".into(), json!("in_progress"));
            events.push(json!({ "type": "response.output_item.added", "output_index": out, "item": added }));
            events.push(json!({ "type": delta_kind, "item_id": item_id, "output_index": out, "delta": text }));
            events.push(json!({ "type": done_kind, "item_id": item_id, "output_index": out, member: text }));
        } else {
            // the item as decided (the action that runs), with the status it was added with: a
            // client acting on `output_item.added` must not read another action than the one decided
            let mut added = done_form.clone();
            match it.added.get("status") {
                Some(s) => added.insert("status".into(), s.clone()),
                None => added.remove("status"),
            };
            events.push(json!({ "type": "response.output_item.added", "output_index": out, "item": added }));
        }
        if it.done {
            events.push(json!({ "type": "response.output_item.done", "output_index": out, "item": done_form }));
        }
        self.out_next += 1;
        if let Some(it) = self.items.get_mut(pos) {
            it.out = Some(out);
            it.released = true;
        }
        for e in events {
            let w = e.to_string().len();
            self.forward(cx, obj(e), w)?;
        }
        Ok(())
    }

    fn added(&mut self, cx: &mut Cx<'_>, mut ev: Map<String, Value>) -> Result<(), GateError> {
        let wire = cx.index(&[], &ev, "output_index")?;
        if self.by_wire.contains_key(&wire) {
            return Err(cx.err(&key(&[], "output_index"), format!("output item {wire} added twice")));
        }
        let ip = key(&[], "item");
        let item = cx.member_obj(&[], &ev, "item")?.clone();
        let kind_name = cx.str(&ip, &item, "type")?;
        cx.keep(cx.bytes)?;
        let kind = classify(&item);
        let call = match kind {
            Kind::Text(member) => {
                let name = cx.str(&ip, &item, "name")?;
                let tool = match cx.opt_str(&ip, &item, "namespace")? {
                    Some(ns) if !ns.is_empty() => format!("{ns}.{name}"),
                    _ => name.to_owned(),
                };
                let call = cx.open(&ip, Some(cx.str(&ip, &item, "call_id")?), &tool, false)?;
                if let Some(first) = cx.opt_str(&ip, &item, member)?.filter(|s| !s.is_empty()) {
                    cx.append(call, first)?;
                }
                Some(call)
            }
            Kind::Builtin => Some(cx.open(&ip, cx.opt_str(&ip, &item, "call_id")?, kind_name, true)?),
            Kind::Provider | Kind::Other => None,
        };
        let mut it = Item { wire, added: item.clone(), value: item, kind, call, out: None, done: false, released: false };
        self.by_wire.insert(wire, self.items.len());
        if call.is_some() {
            let pos = self.items.len();
            if let Some(id) = it.value.get("id").and_then(Value::as_str) {
                self.calls_by_id.insert(id.to_owned(), pos);
            }
            if let Some(id) = it.value.get("call_id").and_then(Value::as_str) {
                self.calls_by_call_id.insert(id.to_owned(), pos);
            }
            self.items.push(it);
            return Ok(()); // held until decided
        }
        it.out = Some(self.out_next);
        ev.insert("output_index".into(), json!(self.out_next));
        self.out_next += 1;
        self.items.push(it);
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
        // an item keeps the kind it was added with: a message or a server-run item completed as a
        // call (or a call as server-run) would reach the client undecided
        if let Some(k) = other_kind(&it.added, &item, it.kind) {
            return Err(cx.err(&key(&ip, k), format!("`output_item.done` restates output item {} with another `{k}` than it was added with", it.wire)));
        }
        if it.call.is_some() {
            if let Some(k) = restated_differently(&it.added, &item) {
                return Err(cx.err(&key(&ip, k), format!("`output_item.done` restates output item {} with another `{k}` than the call decided", it.wire)));
            }
        }
        it.done = true;
        it.value = item.clone();
        let (kind, call, released, out) = (it.kind, it.call, it.released, it.out);
        cx.keep(cx.bytes)?;
        let Some(call) = call else {
            ev.insert("output_index".into(), json!(out));
            let w = cx.bytes;
            return self.forward(cx, ev, w);
        };
        match kind {
            Kind::Text(member) => {
                let whole = cx.opt_str(&ip, &item, member)?.map(str::to_owned);
                cx.close_text(&key(&ip, member), call, whole.as_deref(), true)?;
            }
            _ => {
                let member = builtin_member(&item);
                let problem = cx.claim(&key(&ip, member));
                cx.close_value(call, item.get(member), problem)?;
            }
        }
        if !released {
            return self.release(cx, pos);
        }
        let Some(it) = self.items.get(pos) else { return Ok(()) };
        let Some(done_form) = self.allowed_item(cx, it, item) else { return Ok(()) };
        ev.insert("item".into(), Value::Object(done_form));
        ev.insert("output_index".into(), json!(out));
        let w = cx.bytes;
        self.forward(cx, ev, w)
    }

    /// A `.delta` or `.done` of a text call's arguments.
    fn call_piece(&mut self, cx: &mut Cx<'_>, ev: &Map<String, Value>, done: Option<&'static str>) -> Result<(), GateError> {
        let pos = self.item(cx, ev)?;
        let Some((call, Kind::Text(_))) = self.items.get(pos).and_then(|i| Some((i.call?, i.kind))) else {
            return Err(cx.err(&key(&[], "output_index"), "tool call arguments for an item that is not a function or custom tool call"));
        };
        match done {
            None => cx.append(call, cx.str(&[], ev, "delta")?),
            Some(member) => {
                cx.close_text(&key(&[], member), call, Some(cx.str(&[], ev, member)?), true)?;
                self.release(cx, pos)
            }
        }
    }

    /// Rewrites `response.output` to what was forwarded. Every item naming a call the stream
    /// tracks (by item `id` or `call_id`, whatever its type now says) must restate that call as
    /// decided, in any lifecycle event: a text call's arguments (where present) are the decided
    /// text, a built-in call's item is its `output_item.done` form in every member but `status`;
    /// anything else stops the stream. In the terminal Response every call must be one the
    /// stream announced.
    fn rewrite_output(&self, cx: &Cx<'_>, response: &mut Map<String, Value>, terminal: bool) -> Result<(), GateError> {
        let op = key(&key(&[], "response"), "output");
        let Some(Value::Array(output)) = response.get_mut("output") else { return Ok(()) };
        let mut kept = Vec::with_capacity(output.len());
        for (i, item) in std::mem::take(output).into_iter().enumerate() {
            let Value::Object(m) = item else {
                kept.push(item);
                continue;
            };
            let by = |map: &AHashMap<String, usize>, k: &str| m.get(k).and_then(Value::as_str).and_then(|id| map.get(id)).copied();
            let pos = by(&self.calls_by_id, "id").or_else(|| by(&self.calls_by_call_id, "call_id"));
            let Some(it) = pos.and_then(|p| self.items.get(p)) else {
                if matches!(classify(&m), Kind::Provider | Kind::Other) {
                    kept.push(Value::Object(m));
                } else if terminal {
                    let id = m.get("call_id").or_else(|| m.get("id")).and_then(Value::as_str).unwrap_or("no id");
                    let t = m.get("type").and_then(Value::as_str).unwrap_or("call");
                    return Err(cx.err(&index(&op, i), format!("the final output holds a {t} ({id}) the stream never announced")));
                }
                continue;
            };
            let call_id = || it.added.get("call_id").and_then(Value::as_str).unwrap_or("?");
            if let Some(k) = restated_differently(&it.added, &m) {
                return Err(cx.err(&key(&index(&op, i), k), format!("the output restates call {:?} with another `{k}` than the one decided", call_id())));
            }
            if let Some(k) = self.differs_from_decision(cx, it, &m) {
                return Err(cx.err(&key(&index(&op, i), &k), format!("the output restates call {:?} with another `{k}` than the one decided", call_id())));
            }
            if let Some(item) = self.allowed_item(cx, it, m) {
                kept.push(Value::Object(item));
            }
        }
        *output = kept;
        Ok(())
    }

    /// The member by which `later` (an item of a Response's `output`) restates a DECIDED call
    /// otherwise than it was decided, or `None`. A text call: its arguments member, when present,
    /// must be the text decided (not the repair: the text the model sent). A built-in call was
    /// decided on its `output_item.done` item as a whole (its action, and whatever else the host
    /// reads beside it: `actions`, `pending_safety_checks` …), so every member but `status` must
    /// be that item's. An undecided call is dropped from the output, never compared.
    fn differs_from_decision(&self, cx: &Cx<'_>, it: &Item, later: &Map<String, Value>) -> Option<String> {
        let t = cx.sh.call(it.call?)?;
        if t.verdict.is_none() || t.overflowed {
            return None;
        }
        match it.kind {
            Kind::Text(member) => later.get(member).is_some_and(|v| v.as_str() != Some(t.text.as_str())).then(|| member.to_owned()),
            _ => {
                let decided = &it.value;
                let differs = |k: &String| k != "status" && decided.get(k) != later.get(k);
                later.keys().find(|k| differs(k)).or_else(|| decided.keys().find(|k| differs(k))).cloned()
            }
        }
    }

    fn lifecycle(&mut self, cx: &mut Cx<'_>, mut ev: Map<String, Value>, terminal: Option<&'static str>) -> Result<(), GateError> {
        let mut response = cx.member_obj(&[], &ev, "response")?.clone();
        cx.keep(cx.bytes)?;
        let mut forwarded = response.clone();
        self.rewrite_output(cx, &mut forwarded, terminal.is_some())?;
        if let Some(o) = response.get_mut("output") {
            o.take();
        }
        self.response = Some(response);
        self.terminal = terminal;
        ev.insert("response".into(), Value::Object(forwarded));
        let w = cx.bytes;
        self.forward(cx, ev, w)
    }
}

/// The member by which a later form of a call item (`output_item.done`, a Response's `output`)
/// names another call than the item as added — `type`, `name`, `namespace`, `call_id`, and `id`
/// where both carry one — or `None` when it is the same call. The gate decided the call as added;
/// a client reading the later form must not run anything else.
fn restated_differently(added: &Map<String, Value>, later: &Map<String, Value>) -> Option<&'static str> {
    for k in ["type", "name", "namespace", "call_id"] {
        if added.get(k) != later.get(k) {
            return Some(k);
        }
    }
    match (added.get("id"), later.get("id")) {
        (Some(a), Some(b)) if a != b => Some("id"),
        _ => None,
    }
}

/// The member by which `done` (an item's `output_item.done` form) is another item than `added`,
/// classified `kind` when added: another `type`, another `id` where both carry one, or, whatever
/// the members, another classification (a server-run `tool_search_call` done as a client one, a
/// `*_call` that gains a `call_id`) — `execution` or `call_id` then named. `None`: the same item.
fn other_kind(added: &Map<String, Value>, done: &Map<String, Value>, kind: Kind) -> Option<&'static str> {
    if added.get("type") != done.get("type") {
        return Some("type");
    }
    if let (Some(a), Some(b)) = (added.get("id"), done.get("id")) {
        if a != b {
            return Some("id");
        }
    }
    if classify(done) != kind {
        return Some(if added.get("execution") != done.get("execution") { "execution" } else { "call_id" });
    }
    None
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
                .filter(|i| i.call.is_some_and(|c| cx.sh.call(c).is_some_and(|t| t.verdict.is_none())))
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
            let member = match it.kind {
                Kind::Text(member) => member,
                _ => builtin_member(&v),
            };
            match (it.kind, it.call) {
                (Kind::Text(_), Some(call)) => {
                    v.insert(member.into(), json!(cx.sh.call(call).map_or("", |t| t.text.as_str())));
                }
                (_, Some(call)) => {
                    v.insert(member.into(), cx.value_of(call));
                }
                (Kind::Provider, None) => {
                    let id = v.get("id").and_then(Value::as_str).filter(|s| !s.is_empty()).or_else(|| v.get("call_id").and_then(Value::as_str));
                    let kind = v.get("type").and_then(Value::as_str).unwrap_or("item");
                    provider.push(ProviderCall {
                        call_id: id_or_index(id, provider.len()),
                        tool: v.get("name").and_then(Value::as_str).unwrap_or(kind).to_owned(),
                        kind: kind.to_owned(),
                    });
                }
                _ => {}
            }
            if let Some(call) = it.call {
                slots.push(Slot { call, slot: vec![Seg::Key("output".into()), Seg::Index(pos), Seg::Key(member.into())] });
            }
            output.push(Value::Object(v));
        }
        payload.insert("output".into(), Value::Array(output));
        Ok(Assembled { payload: Value::Object(payload), calls: slots, provider_executed: provider })
    }
}
