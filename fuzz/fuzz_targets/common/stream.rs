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

use std::sync::OnceLock;

use toolgate_core::{Dialect, Gate, TurnCall};

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
    if let Some(report) = report {
        for (i, p) in pushed.iter().enumerate() {
            assert!(!pushed[..i].iter().any(|q| q.call_id == p.call_id), "call {} was returned by two pushes", p.call_id);
            let in_report = report.calls.iter().find(|c| c.call_id == p.call_id);
            assert_eq!(in_report, Some(p), "call {} was decided again at the end", p.call_id);
        }
    }
    let again: Vec<String> = forwarded.iter().map(|e| e.to_string()).collect();
    let _ = play(d, again.iter().map(String::as_str));
}
