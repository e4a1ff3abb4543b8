//! Per-call timing of the core alone (no napi) over the bench corpus:
//! `cargo run --release -p toolgate-core --example timing [bench/corpus]`.
// the allocator of the Node binding, so these figures are the binding's
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::time::Instant;

fn main() {
    let dir = std::env::args().nth(1).unwrap_or_else(|| "bench/corpus".into());
    let config = std::fs::read_to_string(format!("{dir}/tools.json")).expect("tools.json");
    let cases: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(format!("{dir}/cases.json")).expect("cases.json")).unwrap();
    let gate = toolgate_core::Gate::from_json(&config).unwrap();
    let mut total = 0.0;
    let cases = cases.as_array().unwrap();
    for c in cases {
        let (tool, args) = (c["tool"].as_str().unwrap(), c["args"].as_str().unwrap());
        for _ in 0..2_000 {
            std::hint::black_box(gate.check(tool, args));
        }
        let n = 20_000;
        let t = Instant::now();
        for _ in 0..n {
            std::hint::black_box(gate.check(std::hint::black_box(tool), std::hint::black_box(args)));
        }
        let ns = t.elapsed().as_nanos() as f64 / n as f64;
        total += ns;
        println!("{ns:>8.0} ns  {}", c["id"].as_str().unwrap());
    }
    println!("{:>8.0} ns  mean over {} cases", total / cases.len() as f64, cases.len());
}
