//! The MCP corpus (bench/corpus/mcp/: 64 published tool schemas, a four-role policy, four
//! callers, 38 calls) through the core alone — no napi, no JavaScript — as `bench/mcp.bench.ts`
//! measures it through the binding: per call with a caller parsed once (`CallContext` built
//! before the loop, as a prepared caller is), with the caller's JSON parsed on every call, and
//! on the same tools without the policy (same prepared caller).
//! `cargo run --release -p toolgate-core --example mcp_timing`
//! (`… -- --spin <seconds>` runs the whole corpus with prepared callers for that long, for
//! `perf record`; `--spin-unknown <seconds>` only the unknown-tool cases).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

use serde_json::{json, Value};
use toolgate_core::{CallContext, Gate, Stage};

fn read(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))).expect("corpus JSON")
}

/// The config `bench/corpus/mcp/corpus.ts` builds: every server's tools (files in name order),
/// destructive ones marked, and the policy.
fn config(dir: &Path) -> Value {
    let mut files: Vec<_> = std::fs::read_dir(dir.join("servers"))
        .expect("servers/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let policy = read(&dir.join("policy.json"));
    let destructive: Vec<&str> = policy["destructive"].as_array().expect("destructive").iter().filter_map(Value::as_str).collect();
    let mut tools = Vec::new();
    for f in files {
        for t in read(&f)["tools"].as_array().expect("tools") {
            let mut tool = json!({ "name": t["name"], "inputSchema": t["inputSchema"] });
            if let Some(d) = t.get("description") {
                tool["description"] = d.clone();
            }
            if destructive.contains(&t["name"].as_str().unwrap_or_default()) {
                tool["destructive"] = json!(true);
            }
            tools.push(tool);
        }
    }
    json!({ "version": 1, "tools": tools, "policy": policy["policy"] })
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(|a, b| a.total_cmp(b));
    xs[xs.len() / 2]
}

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/corpus/mcp");
    let cfg = config(&dir);
    let gate = Gate::from_json(&cfg.to_string()).expect("corpus config compiles");
    // the same tools without the policy: what the policy (and the caller's part in it) costs
    let mut open = cfg.clone();
    open.as_object_mut().expect("config").remove("policy");
    let open = Gate::from_json(&open.to_string()).expect("corpus config compiles");
    let callers = read(&dir.join("callers.json"));
    let cases = read(&dir.join("cases.json"));
    let cases: Vec<(String, String, String, String)> = cases
        .as_array()
        .expect("cases")
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_owned(),
                c["caller"].as_str().unwrap().to_owned(),
                c["tool"].as_str().unwrap().to_owned(),
                c["args"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let ctx_text = |name: &str| callers[name].to_string();
    let ctxs: Vec<CallContext> = cases.iter().map(|c| CallContext::from_json(&ctx_text(&c.1)).expect("caller")).collect();
    let texts: Vec<String> = cases.iter().map(|c| ctx_text(&c.1)).collect();

    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--spin" || a == "--spin-unknown") {
        let secs: f64 = args.get(i + 1).and_then(|s| s.parse().ok()).unwrap_or(10.0);
        let only_unknown = args[i] == "--spin-unknown";
        let t = Instant::now();
        let mut n = 0u64;
        while t.elapsed().as_secs_f64() < secs {
            for (c, ctx) in cases.iter().zip(&ctxs) {
                if only_unknown && !c.0.starts_with("unknown") {
                    continue;
                }
                black_box(gate.check_as(&c.2, &c.3, &gate.who(ctx, Stage::Full)));
                n += 1;
            }
        }
        println!("{n} calls");
        return;
    }

    let rounds = 2000;
    let mut prepared = vec![Vec::with_capacity(rounds); cases.len()];
    let mut parsed = vec![Vec::with_capacity(rounds); cases.len()];
    let mut no_policy = vec![Vec::with_capacity(rounds); cases.len()];
    for _ in 0..200 {
        for (c, ctx) in cases.iter().zip(&ctxs) {
            black_box(gate.check_as(&c.2, &c.3, &gate.who(ctx, Stage::Full)));
        }
    }
    for _ in 0..rounds {
        for (i, c) in cases.iter().enumerate() {
            let t = Instant::now();
            black_box(gate.check_as(&c.2, &c.3, &gate.who(&ctxs[i], Stage::Full)));
            prepared[i].push(t.elapsed().as_nanos() as f64);
            let t = Instant::now();
            let ctx = CallContext::from_json(&texts[i]).expect("caller");
            black_box(gate.check_as(&c.2, &c.3, &gate.who(&ctx, Stage::Full)));
            parsed[i].push(t.elapsed().as_nanos() as f64);
            let t = Instant::now();
            black_box(open.check_as(&c.2, &c.3, &open.who(&ctxs[i], Stage::Full)));
            no_policy[i].push(t.elapsed().as_nanos() as f64);
        }
    }
    println!("{:<32} {:>9} {:>9} {:>9}", "case (ns, p50)", "prepared", "ctx JSON", "no policy");
    let (mut all_p, mut all_j, mut all_n) = (Vec::new(), Vec::new(), Vec::new());
    for (i, c) in cases.iter().enumerate() {
        println!("{:<32} {:>9.0} {:>9.0} {:>9.0}", c.0, median(prepared[i].clone()), median(parsed[i].clone()), median(no_policy[i].clone()));
        all_p.extend_from_slice(&prepared[i]);
        all_j.extend_from_slice(&parsed[i]);
        all_n.extend_from_slice(&no_policy[i]);
    }
    let mean = |xs: &[f64]| xs.iter().sum::<f64>() / xs.len() as f64;
    println!("{:<32} {:>9.0} {:>9.0} {:>9.0}", "all calls, p50", median(all_p.clone()), median(all_j.clone()), median(all_n.clone()));
    println!("{:<32} {:>9.0} {:>9.0} {:>9.0}", "all calls, mean", mean(&all_p), mean(&all_j), mean(&all_n));
}
