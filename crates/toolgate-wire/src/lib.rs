//! The JSON envelopes the bindings hand their host-language layers: a turn's report
//! ([`report`], [`report_with_patches`]) and a stream's newly decided calls ([`calls`]). The core
//! answers with Rust values ([`TurnReport`], [`TurnCall`]) and knows none of these shapes; the
//! readers are `readTurnWire` / `readCallsWire` in `src-ts/turn.ts` (Node) and the Python
//! package's `_report.py` / `_stream.py`. Calls carry `argumentsJson` (not `arguments`: the host parses it once),
//! the report carries `payload` only when it changed — or, for a host holding the payload it
//! passed, the patches that make it.

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
        patches: patches.then(|| {
            r.patches
                .iter()
                .map(|p| WirePatch {
                    call: p.call,
                    path: p
                        .path
                        .iter()
                        .map(|s| match s {
                            Seg::Key(k) => WireSeg::Key(k),
                            Seg::Index(i) => WireSeg::Index(*i),
                        })
                        .collect(),
                    as_text: p.as_text,
                })
                .collect()
        }),
        feedback: &r.feedback,
        provider_executed: r.provider_executed.iter().map(|p| WireProvider { call_id: &p.call_id, tool: &p.tool, kind: &p.kind }).collect(),
        turn_refusals: &r.turn_refusals,
    };
    serde_json::to_string(&w).unwrap_or_default()
}
