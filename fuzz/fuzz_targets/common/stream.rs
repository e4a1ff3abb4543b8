//! The oracle shared by the `stream_<name>` targets: a streamed turn, as untrusted text, through
//! `Gate::stream` in one dialect. The input is split on `\n`; each line is pushed as one event
//! (an SSE line such as `data: {...}` or `event: x`, or bare JSON), and `forward` is drained
//! after every push, as a proxy would.
//!
//! The gate is built from `__test__/fixtures/dialects/tools.json` (the config the stream fixtures,
//! and so the seeds, are written against). Input bytes become text with `String::from_utf8_lossy`.
//!
//! Oracle (a panic = a finding):
//! 1. `push`, `forward` and `end` never panic, whatever the events (after an error the stream is
//!    ended and nothing more is pushed, as the binding does).
//! 2. When `end` answers a report: no call id is returned by two pushes, and every call a push
//!    returned is in the report with the same verdict (a call is decided once).
//! 3. The forwarded events, pushed into a fresh stream, never panic either.
//! 4. What is forwarded is what was decided: when the stream ended in a report, the forwarded
//!    events, pushed into a fresh stream of the same gate as a client's reader takes them, end in
//!    a report too, whose calls are exactly the allowed calls of the first — same tools, same
//!    arguments (the repaired ones as repaired), in the order the pushes decided them (the order
//!    they completed in) — each `passed` as it stands. A refused
//!    call that reached the forwarded events, or arguments other than those decided, is a
//!    finding. (Compared by tool and arguments, not id: dialects without ids number calls by
//!    position, which the refused calls' absence shifts. When nothing was forwarded at all — a
//!    stream of refused calls only — there is no stream to read, and no call may have been
//!    allowed.)

use std::sync::OnceLock;

use toolgate_core::{Dialect, Gate, Outcome, TurnCall};

const CONFIG: &str = include_str!("../../../__test__/fixtures/dialects/tools.json");

fn gate() -> &'static Gate {
    static GATE: OnceLock<Gate> = OnceLock::new();
    GATE.get_or_init(|| Gate::from_json(CONFIG).expect("the fixture config compiles"))
}

/// Pushes `lines` one by one, draining `forward` after each; returns the calls the pushes
/// returned, the forwarded events, and the report when the stream ended well.
fn play<'a>(d: Dialect, lines: impl Iterator<Item = &'a str>) -> (Vec<TurnCall>, Vec<serde_json::Value>, Option<toolgate_core::TurnReport>) {
    let gate = gate();
    let Ok(mut s) = gate.stream(d) else { return (Vec::new(), Vec::new(), None) };
    let mut pushed = Vec::new();
    let mut forwarded = Vec::new();
    for line in lines {
        match s.push(gate, line) {
            Ok(calls) => pushed.extend(calls),
            Err(_) => return (pushed, forwarded, None),
        }
        forwarded.extend(s.forward());
    }
    let report = s.end(gate).ok();
    (pushed, forwarded, report)
}

/// Runs the oracle on one input.
pub fn run(d: Dialect, data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let (pushed, forwarded, report) = play(d, text.split('\n'));
    if let Some(report) = &report {
        for (i, p) in pushed.iter().enumerate() {
            assert!(!pushed[..i].iter().any(|q| q.call_id == p.call_id), "call {} was returned by two pushes", p.call_id);
            let in_report = report.calls.iter().find(|c| c.call_id == p.call_id);
            assert_eq!(in_report, Some(p), "call {} was decided again at the end", p.call_id);
        }
    }
    // an event forwarded as a string (OpenAI's `[DONE]`) is written as its text, as a proxy does
    let again: Vec<String> = forwarded.iter().map(|e| e.as_str().map_or_else(|| e.to_string(), str::to_owned)).collect();
    let (_, _, replayed) = play(d, again.iter().map(String::as_str));
    if let Some(report) = report {
        // in the order the pushes decided them: the order they completed in, which is the order
        // they are forwarded in (a stream may complete its calls out of their numbered order)
        let decided: Vec<(&str, Option<&serde_json::Value>)> =
            pushed.iter().filter(|c| c.verdict.allowed()).map(|c| (c.tool.as_str(), c.verdict.arguments.as_ref())).collect();
        let allowed_in_report = report.calls.iter().filter(|c| c.verdict.allowed()).count();
        assert_eq!(decided.len(), allowed_in_report, "an allowed call of the report was never returned by a push");
        if again.is_empty() {
            // every event was held back (a stream of one refused call): nothing allowed may be lost
            assert!(decided.is_empty(), "allowed calls were never forwarded: {decided:?}");
            return;
        }
        let Some(replayed) = replayed else {
            panic!("the stream ended in a report, but the events it forwarded do not: {again:?}");
        };
        let forwarded: Vec<(&str, Option<&serde_json::Value>)> = replayed.calls.iter().map(|c| (c.tool.as_str(), c.verdict.arguments.as_ref())).collect();
        assert_eq!(forwarded, decided, "the forwarded events hold other calls than the allowed ones: {again:?}");
        for c in &replayed.calls {
            assert_eq!(c.verdict.outcome, Outcome::Passed, "a forwarded call is not passed as it stands ({}): {again:?}", c.tool);
        }
    }
}
