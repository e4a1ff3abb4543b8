//! The MCP corpus (bench/corpus/mcp/: 64 published tool schemas, a four-role policy, four
//! callers, 38 calls) through the core alone — no napi, no JavaScript — as `bench/mcp.bench.ts`
//! measures it through the binding: per call with a caller parsed once (`CallContext` built
//! before the loop, as a prepared caller is), with the caller's JSON parsed on every call, and
//! on the same tools without the policy (same prepared caller).
//! `cargo run --release -p toolgate-core --example mcp_timing`
//! (`… -- --spin <seconds>` runs the whole corpus with prepared callers for that long, for
//! `perf record`; `--spin-unknown <seconds>` only the unknown-tool cases; `--guard-spin <seconds>
//! <turn file>` guards the three-call OpenAI turn of `bench/mcp.bench.ts` with the developer
//! caller and prints the mean per turn — write the turn with `npx tsx -e "import {turnCompletion}
//! from './bench/corpus/mcp/corpus.ts'; require('fs').writeFileSync('/tmp/turn.json',
//! turnCompletion())"`).
//! `… -- --scale` times "did you mean" (the unknown tool `read_fil`, the developer caller) on
//! the scale bench's gates of 10 / 100 / 1,000 / 10,000 tools (`scaledConfig` in
//! `bench/corpus/mcp/corpus.ts`), interleaved: the whole `check`, and the offered names alone
//! (`suggest::offered`) through the index and by scoring every name; `--scale-spin <tools>
//! <seconds>` runs one of the checks for `perf record`.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

use serde_json::{json, Value};
use toolgate_core::suggest::{offered, NameIndex};
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

/// The names every scaled gate holds (`SCALE_KEPT` in `bench/corpus/mcp/corpus.ts`): the known
/// tool and the three names `read_fil` is offered, so every size gives the same answers.
const SCALE_KEPT: [&str; 4] = ["read_text_file", "read_file", "read_file_1", "read_file_2"];

/// `scaledConfig` of `bench/corpus/mcp/corpus.ts`: the corpus's tools cycled under new names
/// (`read_file_3` …), [`SCALE_KEPT`] first, cut to `n`; its allow rules given every tool.
fn scaled(cfg: &Value, n: usize) -> Value {
    let base = cfg["tools"].as_array().expect("tools");
    let cycled: Vec<Value> = (0..n.max(3 * base.len()))
        .map(|i| {
            let mut t = base[i % base.len()].clone();
            if i >= base.len() {
                t["name"] = json!(format!("{}_{}", t["name"].as_str().expect("name"), i / base.len()));
            }
            t
        })
        .collect();
    let kept = |t: &&Value| SCALE_KEPT.iter().any(|k| t["name"] == *k);
    let first = SCALE_KEPT.iter().map(|k| cycled.iter().find(|t| t["name"] == *k).expect("a kept name").clone());
    let tools: Vec<Value> = first.chain(cycled.iter().filter(|t| !kept(t)).cloned()).take(n).collect();
    let rules: Vec<Value> = cfg["policy"]["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .filter(|r| r["effect"] == "allow")
        .map(|r| {
            let mut r = r.clone();
            r["tools"] = json!(["*"]);
            r
        })
        .collect();
    json!({ "version": 1, "tools": tools, "policy": { "rules": rules } })
}

/// `--scale` and `--scale-spin`: the unknown tool `read_fil` on gates of 10 → 10,000 tools.
fn scale(cfg: &Value, callers: &Value, args: &[String]) {
    let dev = CallContext::from_json(&callers["developer"].to_string()).expect("caller");
    let sizes = [10, 100, 1_000, 10_000];
    let gates: Vec<Gate> = sizes.iter().map(|&n| Gate::from_json(&scaled(cfg, n).to_string()).expect("scaled config compiles")).collect();
    let (tool, call) = ("read_fil", r#"{"path":"/srv/app/README.md"}"#);
    if let Some(i) = args.iter().position(|a| a == "--scale-spin") {
        let n: usize = args.get(i + 1).and_then(|s| s.parse().ok()).unwrap_or(10_000);
        let secs: f64 = args.get(i + 2).and_then(|s| s.parse().ok()).unwrap_or(5.0);
        let g = &gates[sizes.iter().position(|&s| s == n).expect("10, 100, 1000 or 10000")];
        let t = Instant::now();
        let mut calls = 0u64;
        while t.elapsed().as_secs_f64() < secs {
            black_box(g.check_as(tool, call, &g.who(&dev, Stage::Full)));
            calls += 1;
        }
        println!("{calls} calls");
        return;
    }
    let rounds = 5_000;
    let mut times = vec![Vec::with_capacity(rounds); gates.len()];
    for round in 0..rounds + 500 {
        for (g, ts) in gates.iter().zip(&mut times) {
            let t = Instant::now();
            black_box(g.check_as(tool, call, &g.who(&dev, Stage::Full)));
            if round >= 500 {
                ts.push(t.elapsed().as_nanos() as f64);
            }
        }
    }
    // "did you mean" alone (`suggest::offered`, every tool visible): through the index, and by
    // scoring every name (what the index replaces)
    let configs: Vec<Value> = sizes.iter().map(|&n| scaled(cfg, n)).collect();
    let names: Vec<Vec<(String, String)>> = configs
        .iter()
        .map(|c| c["tools"].as_array().expect("tools").iter().map(|t| t["name"].as_str().expect("name")).map(|n| (n.to_owned(), n.to_lowercase())).collect())
        .collect();
    let tools: Vec<Vec<(&str, &str)>> = names.iter().map(|ns| ns.iter().map(|(n, l)| (n.as_str(), l.as_str())).collect()).collect();
    let indexes: Vec<NameIndex> = tools.iter().map(|ts| NameIndex::new(ts)).collect();
    // the two apart: a scan of 10,000 names leaves the caches cold for the next call
    let mut alone = vec![(Vec::with_capacity(rounds), Vec::with_capacity(rounds)); gates.len()];
    for scan in [false, true] {
        for round in 0..rounds + 500 {
            for ((ts, ix), (by_index, by_scan)) in tools.iter().zip(&indexes).zip(&mut alone) {
                let t = Instant::now();
                black_box(offered(tool, ts, (!scan).then_some(ix), |_| true));
                if round >= 500 {
                    if scan { by_scan } else { by_index }.push(t.elapsed().as_nanos() as f64);
                }
            }
        }
    }
    println!("unknown tool `{tool}` (ns, p50 of {rounds}, interleaved)");
    println!("{:>12} {:>9} {:>9} {:>9}", "", "check", "offered", "scan");
    for ((n, ts), (a, b)) in sizes.iter().zip(times).zip(alone) {
        println!("{n:>6} tools {:>9.0} {:>9.0} {:>9.0}", median(ts), median(a), median(b));
    }
    for g in &gates {
        let m = g.check_as(tool, call, &g.who(&dev, Stage::Full)).message.unwrap_or_default();
        println!("{}", &m[..m.find(" Call one").unwrap_or(m.len())]);
    }
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
    if args.iter().any(|a| a == "--scale" || a == "--scale-spin") {
        scale(&cfg, &callers, &args);
        return;
    }
    if let Some(i) = args.iter().position(|a| a == "--guard-spin") {
        // the three-call OpenAI turn of `bench/mcp.bench.ts` (its text written to a file by
        // `turnCompletion()`), the developer caller prepared once
        let secs: f64 = args.get(i + 1).and_then(|s| s.parse().ok()).unwrap_or(10.0);
        let turn = std::fs::read_to_string(args.get(i + 2).expect("--guard-spin <seconds> <turn file>")).expect("turn file");
        let ctx = CallContext::from_json(&ctx_text("developer")).expect("caller");
        let opts = toolgate_core::TurnOptions::default();
        let choice = toolgate_core::DialectChoice::Is(toolgate_core::Dialect::OpenAi);
        let t = Instant::now();
        let mut n = 0u64;
        while t.elapsed().as_secs_f64() < secs {
            let r = gate.guard_as(choice, black_box(&turn), &opts, &gate.who(&ctx, Stage::Full)).expect("guard");
            black_box(r);
            n += 1;
        }
        println!("{n} turns, {:.0} ns each", t.elapsed().as_nanos() as f64 / n as f64);
        return;
    }
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
