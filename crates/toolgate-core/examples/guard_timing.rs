//! Per-turn timing of `Gate::guard` in the core alone (no napi, no JavaScript), over the turns of
//! `bench/guard.bench.ts`, broken down (the envelope parse, the three calls through `check`, the
//! whole `guard`, and `guard` plus serializing the report to the binding's wire):
//! `cargo run --release -p toolgate-core --example guard_timing [bench/corpus]`.
//! The difference from the Node figures is the napi crossing and the TypeScript layer.
// the allocator of the Node binding, so these figures are the binding's
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::hint::black_box;
use std::time::Instant;

use toolgate_core::json::parse::parse_payload;
use toolgate_core::{Dialect, DialectChoice, Gate, TurnOptions};

const TURNS: [(&str, Dialect); 2] = [("openai-chat.json", Dialect::OpenAi), ("anthropic-message.json", Dialect::Anthropic)];

/// Mean over a bulk loop, then p50 / p99 over individually timed runs; nanoseconds.
fn time(f: impl Fn() -> usize) -> (f64, f64, f64) {
    for _ in 0..5_000 {
        black_box(f());
    }
    let n = 50_000;
    let t = Instant::now();
    for _ in 0..n {
        black_box(f());
    }
    let mean = t.elapsed().as_nanos() as f64 / n as f64;
    let mut samples: Vec<u128> = (0..n)
        .map(|_| {
            let t = Instant::now();
            black_box(f());
            t.elapsed().as_nanos()
        })
        .collect();
    samples.sort_unstable();
    let q = |p: f64| samples[((samples.len() - 1) as f64 * p) as usize] as f64;
    (mean, q(0.5), q(0.99))
}

fn main() {
    let dir = std::env::args().nth(1).unwrap_or_else(|| "bench/corpus".into());
    let config = std::fs::read_to_string(format!("{dir}/tools.json")).expect("tools.json");
    let gate = Gate::from_json(&config).expect("the bench config compiles");
    let opts = TurnOptions::default();
    println!("{:<52} {:>8} {:>8} {:>8} {:>10}", "core only (ns)", "mean", "p50", "p99", "mean/call");
    for (file, d) in TURNS {
        let text = std::fs::read_to_string(format!("{dir}/turns/{file}")).expect("turn file");
        let text = text.trim();
        let report = gate.guard(DialectChoice::Is(d), text, &opts).expect("the turn guards");
        let calls = report.calls.len();
        // The same calls one by one through `check` (arguments as text), for the breakdown.
        let args = serde_json::from_str::<serde_json::Value>(text).expect("turn is JSON");
        let singles: Vec<(String, String)> = report.calls.iter().map(|c| (c.tool.clone(), arguments_text(&args, &c.call_id))).collect();
        let parse = || parse_payload(black_box(text), gate.limits(), gate.max_payload_bytes()).map(|p| p.problems.len()).unwrap_or(0);
        let checks = || singles.iter().map(|(t, a)| gate.check(black_box(t), black_box(a)).flags.len()).sum();
        let guard = || gate.guard(DialectChoice::Is(d), black_box(text), &opts).map(|r| r.calls.len()).unwrap_or(0);
        let wire = || gate.guard(DialectChoice::Is(d), black_box(text), &opts).map(|r| toolgate_wire::report_with_patches(&r).len()).unwrap_or(0);
        let rows: [(&str, &dyn Fn() -> usize); 4] = [
            ("parse_payload (the envelope, strictly)", &parse),
            ("the calls alone (3 x check)", &checks),
            ("guard", &guard),
            ("guard + toolgate_wire::report_with_patches (the binding)", &wire),
        ];
        for (label, f) in rows {
            let (mean, p50, p99) = time(f);
            println!("{:<52} {mean:>8.0} {p50:>8.0} {p99:>8.0} {:>10.0}", format!("{d}: {label}"), mean / calls as f64);
        }
    }
}

/// The arguments of call `id` as text: OpenAI's `arguments` string, or Anthropic's `input` serialized.
fn arguments_text(turn: &serde_json::Value, id: &str) -> String {
    if let Some(calls) = turn.pointer("/choices/0/message/tool_calls").and_then(|v| v.as_array()) {
        let c = calls.iter().find(|c| c["id"] == id).expect("call id");
        return c["function"]["arguments"].as_str().unwrap_or("").to_owned();
    }
    let blocks = turn["content"].as_array().expect("a message's content");
    blocks.iter().find(|b| b["id"] == id).map(|b| b["input"].to_string()).expect("block id")
}
