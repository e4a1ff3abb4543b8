//! The JSON envelopes the Node binding hands `src-ts`: a turn's report ([`report`],
//! [`report_with_patches`]) and a stream's newly decided calls ([`calls`]). The core answers with
//! Rust values ([`TurnReport`], [`TurnCall`]) and knows none of these shapes; the readers are
//! `readTurnWire` / `readCallsWire` in `src-ts/turn.ts` (the Python binding builds Python values
//! instead: `crates/toolgate-python/src/convert.rs`). Calls carry `argumentsJson` (not `arguments`: the host parses it once),
//! the report carries `payload` only when it changed — or, for a host holding the payload it
//! passed, the patches that make it. A turn of one plain call has a shorter answer for hosts that
//! forward the text they decided ([`single_call`], read by `readSingleCallWire`).

use serde::Serialize;
use serde_json::Value;
use toolgate_core::json::pointer::Seg;
use toolgate_core::{TurnCall, TurnRefusal, TurnReport};

/// A report as the hosts read it (see the module docs).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WireReport<'a> {
    dialect: &'static str,
    calls: Vec<WireCall<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    payload: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    patches: Option<Vec<WirePatch<'a>>>,
    feedback: &'a [Value],
    provider_executed: Vec<WireProvider<'a>>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    turn_refusals: &'a [TurnRefusal],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WirePatch<'a> {
    call: usize,
    path: Vec<WireSeg<'a>>,
    as_text: bool,
}

#[derive(Serialize)]
#[serde(untagged)]
enum WireSeg<'a> {
    Key(&'a str),
    Index(usize),
}

/// A path as the host walks it: keys as strings, indices as numbers.
fn wire_path(path: &[Seg]) -> Vec<WireSeg<'_>> {
    path.iter()
        .map(|s| match s {
            Seg::Key(k) => WireSeg::Key(k),
            Seg::Index(i) => WireSeg::Index(*i),
        })
        .collect()
}

/// The removals `Gate::filter_tools_removals` answers, as JSON: an array of paths, each an
/// array of object keys (strings) and array indices (numbers), e.g. `[["tools",2],["tools",5]]`.
pub fn paths(paths: &[Vec<Seg>]) -> String {
    let w: Vec<Vec<WireSeg<'_>>> = paths.iter().map(|p| wire_path(p)).collect();
    serde_json::to_string(&w).unwrap_or_default()
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WireCall<'a> {
    call_id: &'a str,
    tool: &'a str,
    outcome: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    arguments_json: Option<&'a str>,
    flags: &'a [toolgate_core::Flag],
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'static str>,
    #[serde(flatten)]
    facts: toolgate_core::Facts<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WireProvider<'a> {
    call_id: &'a str,
    tool: &'a str,
    kind: &'a str,
}

impl<'a> WireCall<'a> {
    fn of(c: &'a TurnCall) -> Self {
        WireCall {
            call_id: &c.call_id,
            tool: &c.tool,
            outcome: c.verdict.outcome.as_str(),
            arguments_json: c.arguments_json.as_deref(),
            flags: &c.verdict.flags,
            message: c.verdict.message.as_deref(),
            reason: c.verdict.reason.map(|r| r.as_str()),
            facts: c.verdict.facts(),
        }
    }
}

/// Serializes calls in the per-call shape of [`report`] (a JSON array), for a stream's `push`
/// (read by `readCallsWire` in `src-ts/turn.ts` and by the Python package's stream).
pub fn calls(calls: &[TurnCall]) -> String {
    serde_json::to_string(&calls.iter().map(WireCall::of).collect::<Vec<_>>()).unwrap_or_else(|_| "[]".to_owned())
}

/// Serializes `r` for a host that holds no payload of its own (a stream's report, the Python
/// package): with the whole payload when it changed.
pub fn report(r: &TurnReport) -> String {
    wire(r, false)
}

/// Serializes `r` for a host that holds the payload it passed: instead of the payload, the
/// patches that turn it into [`TurnReport::payload`] (cheaper to send and to read).
pub fn report_with_patches(r: &TurnReport) -> String {
    wire(r, true)
}

fn wire(r: &TurnReport, patches: bool) -> String {
    let w = WireReport {
        dialect: r.dialect.as_str(),
        calls: r.calls.iter().map(WireCall::of).collect(),
        payload: if patches { None } else { r.payload.as_ref() },
        patches: patches.then(|| r.patches.iter().map(|p| WirePatch { call: p.call, path: wire_path(&p.path), as_text: p.as_text }).collect()),
        feedback: &r.feedback,
        provider_executed: r.provider_executed.iter().map(|p| WireProvider { call_id: &p.call_id, tool: &p.tool, kind: &p.kind }).collect(),
        turn_refusals: &r.turn_refusals,
    };
    serde_json::to_string(&w).unwrap_or_default()
}

/// A turn holding exactly one call, for a host that forwards the very text it decided (the MCP
/// proxy): the call's decision in a line-oriented answer the host reads without a JSON parse —
///
/// - `=`: allowed, the arguments untouched (the text as given is what runs);
/// - `~` `ARGS` `\n` `OUTCOME` `\n` `FLAGS`: allowed with these arguments written back (repaired,
///   or normalised), `FLAGS` the flags' JSON array (neither it nor `OUTCOME` holds a newline, so a
///   reader takes them from the end and `ARGS` is the rest, whatever it holds);
/// - `!` `REASON` `\n` `FEEDBACK` `\n` `TOOL`: refused, `FEEDBACK` the one feedback message as
///   JSON (never holding a raw newline), `TOOL` the rest of the text;
///
/// and, for anything else (several calls or none, a confirmation, a receipt, shadow mode, an
/// engine question, a turn refusal, a provider-executed call), the whole
/// [`report_with_patches`] (which starts with `{`). Same decisions as [`report_with_patches`]:
/// only the shape differs.
pub fn single_call(r: &TurnReport) -> String {
    let plain = |c: &TurnCall| {
        let f = c.verdict.facts();
        f.confirmation.is_none() && f.engine.is_none() && f.receipt.is_none() && !f.shadow
    };
    let [c] = r.calls.as_slice() else {
        return report_with_patches(r);
    };
    if !plain(c) || !r.turn_refusals.is_empty() || !r.provider_executed.is_empty() {
        return report_with_patches(r);
    }
    let v = &c.verdict;
    match (&c.arguments_json, r.patches.as_slice(), r.feedback.as_slice()) {
        (Some(_), [], []) if v.untouched => "=".to_owned(),
        (Some(args), [p], []) if p.call == 0 => {
            let Ok(flags) = serde_json::to_string(&v.flags) else {
                return report_with_patches(r);
            };
            let outcome = v.outcome.as_str();
            let mut out = String::with_capacity(args.len() + outcome.len() + flags.len() + 3);
            for part in ["~", args, "\n", outcome, "\n", &flags] {
                out.push_str(part);
            }
            out
        }
        (None, [], [fb]) => {
            let (Some(reason), Ok(fb)) = (v.reason, serde_json::to_string(fb)) else {
                return report_with_patches(r);
            };
            let mut out = String::with_capacity(fb.len() + c.tool.len() + 32);
            for part in ["!", reason.as_str(), "\n", &fb, "\n", &c.tool] {
                out.push_str(part);
            }
            out
        }
        _ => report_with_patches(r),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolgate_core::{DialectChoice, Gate, TurnOptions};

    fn gate() -> Gate {
        let cfg = r#"{"version":1,"tools":[{"name":"echo","inputSchema":{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}},
            {"name":"drop","writes":true,"inputSchema":{"type":"object"}}]}"#;
        Gate::from_json(cfg).expect("config")
    }

    fn single(g: &Gate, line: &str) -> String {
        single_call(&g.guard(DialectChoice::Is(toolgate_core::Dialect::Mcp), line, &TurnOptions::default()).expect("guard"))
    }

    #[test]
    fn one_plain_call_answers_short_and_anything_else_the_whole_report() {
        let g = gate();
        assert_eq!(single(&g, r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"n":5}}}"#), "=");
        assert_eq!(
            single(&g, r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"n":"5"}}}"#),
            "~{\"n\":5}\nrepaired\n[{\"code\":\"StringToInteger\",\"path\":\"/n\",\"from\":\"5\",\"to\":5}]"
        );
        // the tool name comes last: whatever it holds is read whole
        let refused = single(&g, r#"{"jsonrpc":"2.0","id":"a\nb","method":"tools/call","params":{"name":"ec\nho","arguments":{}}}"#);
        let (head, tool) = refused.split_at(refused.rfind("\nec").expect("tool") + 1);
        assert_eq!(tool, "ec\nho");
        let mut parts = head.trim_end_matches('\n').splitn(2, '\n');
        assert_eq!(parts.next(), Some("!unknown_tool"));
        let fb: Value = serde_json::from_str(parts.next().expect("feedback")).expect("feedback JSON");
        assert_eq!(fb["id"], "a\nb");
        // a confirmation, and a message with no call: the whole report
        let confirm = single(&g, r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"drop","arguments":{}}}"#);
        assert!(confirm.starts_with('{') && confirm.contains("\"outcome\":\"confirm\""), "{confirm}");
        let none = single(&g, r#"{"jsonrpc":"2.0","id":3,"result":{}}"#);
        assert!(none.starts_with("{\"dialect\":\"mcp\",\"calls\":[]"), "{none}");
    }
}

/// One question of a pending turn as the host reads it (see [`questions`]).
#[derive(Serialize)]
struct WireQuestion<'a> {
    index: usize,
    tool: &'a str,
    arguments: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    action: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    resource: Option<&'a str>,
    engine: &'static str,
}

/// The calls a pending turn puts to the plugged engines (`toolgate_core::PendingTurn::questions`),
/// as a JSON array in payload order: `{index, tool, arguments, action?, resource?, engine}`, where
/// `index` is the call's position in the turn (its answer's index) and `engine` the rules'
/// answer (`allow` / `no_rule`). Read by `readQuestionsWire` in `src-ts/turn.ts`.
pub fn questions(turn: &toolgate_core::PendingTurn) -> String {
    let w: Vec<WireQuestion<'_>> = turn
        .questions()
        .map(|q| WireQuestion { index: q.index, tool: q.tool, arguments: q.arguments, action: q.action, resource: q.resource, engine: q.rules.as_str() })
        .collect();
    serde_json::to_string(&w).unwrap_or_default()
}
