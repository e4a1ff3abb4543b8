//! What a 50-rule policy adds to one `check`, in the core alone (no napi, no JavaScript): the
//! same tools with no `policy` block and with one, the same call and the same caller, as
//! `bench/policy.bench.ts` measures through the binding (issue 4: the policy must add < 1 µs p50).
//! `cargo run --release -p toolgate-core --example policy_timing`
//! (`… -- --spin <row> <seconds>` calls only that row — 0-based, in table order — for
//! `perf record`; the environment variable `POLICY_TIMING_CTX` replaces the caller's context,
//! e.g. with many more roles: the decisions are asserted as usual, so it must still be a caller
//! the last rule alone allows).
//!
//! The policy (built the same way as in `bench/policy.bench.ts`; both print the config's
//! fingerprint, so the two can be checked to time the same thing): 50 rules, the first 49 miss
//! the call and the last allows it; the 25 odd-numbered rules have a `when`.
//! - *worst case*: every rule names the called tool (`read_file`, `*`, `read_*` or action
//!   `read`), so none is pruned at compile time (`Policy::candidates`) and all 50 are evaluated
//!   per call; the misses are on roles, subjects, resources and `when` (most pass the cheap
//!   selectors first and miss late);
//! - *pruned*: the same rules, but 44 of the misses name other tools — the common case — so 6
//!   are evaluated per call.
//!
//! Loop and taint are not configured (no state is read or written).
// the allocator of the Node binding, so these figures are the binding's
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::hint::black_box;
use std::time::Instant;

use serde_json::{json, Value};
use toolgate_core::{CallContext, Gate, Outcome, Reason, Stage};

/// The call every row makes.
const TOOL: &str = "read_file";
const ARGS: &str = r#"{"path":"reports/2026/q3-summary.md"}"#;
/// The caller (as the host sends it; the binding parses this text on every call with a context).
const CTX: &str = r#"{"subject":"u-1842","roles":["employee","analyst"],"identity":{"tenant":"initech"},"purpose":"audit","session":"sess-9f2c"}"#;

/// Tools other than the called one: the pruned variant's misses name these.
const OTHER_TOOLS: [&str; 9] =
    ["write_file", "search_docs", "send_email", "list_orders", "get_doc", "transfer", "post_webhook", "export_report", "delete_user"];

/// `when` conditions that are false for the call (each reads something different).
const WHEN_MISSES: [&str; 8] = [
    "purpose == 'billing'",
    "purpose == 'audit' and roles has 'admin'",
    "context.region == 'eu' and purpose == 'audit'",
    "identity.tenant == 'acme'",
    "args.path matches 'reports/private/**'",
    "subject == 'u-0001' or roles has 'auditor'",
    "purpose in ['support', 'sales', 'billing'] and roles has 'analyst'",
    "resource matches 'file:secrets/**' or not (roles has 'employee')",
];

fn tools() -> Value {
    let s = |props: Value, required: &[&str]| json!({ "type": "object", "properties": props, "required": required, "additionalProperties": false });
    json!([
        { "name": "read_file", "action": "read", "resource": "file:{path*}", "inputSchema": s(json!({ "path": { "type": "string" } }), &["path"]) },
        { "name": "write_file", "action": "write", "resource": "file:{path*}", "inputSchema": s(json!({ "path": { "type": "string" }, "content": { "type": "string" } }), &["path", "content"]) },
        { "name": "search_docs", "inputSchema": s(json!({ "q": { "type": "string" }, "limit": { "type": "integer", "default": 10 } }), &["q"]) },
        { "name": "send_email", "inputSchema": s(json!({ "to": { "type": "string" }, "body": { "type": "string" } }), &["to", "body"]) },
        { "name": "list_orders", "resource": "orders:{owner}", "inputSchema": s(json!({ "owner": { "type": "string" } }), &["owner"]) },
        { "name": "get_doc", "resource": "doc:{id}", "inputSchema": s(json!({ "id": { "type": "string" } }), &["id"]) },
        { "name": "transfer", "inputSchema": s(json!({ "amount": { "type": "number" }, "to": { "type": "string" } }), &["amount", "to"]) },
        { "name": "post_webhook", "inputSchema": s(json!({ "url": { "type": "string" }, "body": { "type": "string" } }), &["url"]) },
        { "name": "export_report", "inputSchema": s(json!({ "path": { "type": "string" } }), &["path"]) },
        { "name": "delete_user", "inputSchema": s(json!({ "id": { "type": "string" } }), &["id"]) }
    ])
}

/// Rule `i` (0..49) of the policy; `pruned`: most misses name other tools.
fn rule(i: usize, pruned: bool) -> Value {
    if i == 49 {
        return json!({ "id": "analysts-read-reports", "effect": "allow", "roles": ["analyst"], "tools": ["read_file"],
                       "resources": ["file:reports/**"], "when": "purpose == 'audit'" });
    }
    let mut r = serde_json::Map::new();
    r.insert("id".into(), json!(format!("r{i}")));
    if i % 2 == 1 {
        // a `when` rule: the caller and resource selectors pass, the condition misses
        r.insert("effect".into(), json!(if i % 4 == 3 { "deny" } else { "allow" }));
        r.insert("roles".into(), json!(["analyst"]));
        if !i.is_multiple_of(3) {
            r.insert("resources".into(), json!(["file:reports/**"]));
        }
        r.insert("when".into(), json!(WHEN_MISSES[(i / 2) % WHEN_MISSES.len()]));
    } else {
        match (i / 2) % 5 {
            0 => {
                r.insert("effect".into(), json!("allow"));
                r.insert("roles".into(), json!(["admin", "finance"]));
            }
            1 => {
                r.insert("effect".into(), json!("allow"));
                r.insert("roles".into(), json!(["analyst"]));
                r.insert("subjects".into(), json!(["svc-*", "bot-*"]));
            }
            2 => {
                r.insert("effect".into(), json!("allow"));
                r.insert("roles".into(), json!(["analyst", "employee"]));
                r.insert("resources".into(), json!(["file:secrets/**", "file:home/{subject}/**"]));
            }
            3 => {
                r.insert("effect".into(), json!("deny"));
                r.insert("resources".into(), json!(["file:reports/private/**", "file:tmp/**"]));
            }
            _ => {
                r.insert("effect".into(), json!("deny"));
                r.insert("subjects".into(), json!(["mallory", "guest-*"]));
            }
        }
    }
    // the selector: the called tool (never pruned), or — pruned variant — another tool
    let (key, sel) = if pruned && !i.is_multiple_of(10) {
        ("tools", json!([OTHER_TOOLS[i % OTHER_TOOLS.len()]]))
    } else {
        match i % 4 {
            0 => ("tools", json!(["read_file"])),
            1 => ("tools", json!(["*"])),
            2 => ("tools", json!(["read_*", "list_*"])),
            _ => ("actions", json!(["read"])),
        }
    };
    r.insert(key.into(), sel);
    Value::Object(r)
}

/// The config: `None` no policy block; else the 50 rules (`take` of them), pruned or not.
fn config(policy: Option<(bool, usize)>) -> String {
    let mut c = json!({ "version": 1, "tools": tools() });
    if let Some((pruned, take)) = policy {
        c["policy"] = json!({ "rules": (0..take).map(|i| rule(i, pruned)).collect::<Vec<_>>() });
    }
    serde_json::to_string(&c).expect("serializes")
}

/// FNV-1a 64 of the config text (printed by both benchmarks to show they time the same config).
fn fingerprint(s: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

// Many short batches (~1 ms each) rather than a few long ones: on a shared machine a batch the
// scheduler preempts is an outlier the median ignores, not a bias in every batch.
const BATCHES: usize = 301;
const PER_BATCH: usize = 1_000;
const SAMPLES: usize = 150_500;

struct Row {
    label: &'static str,
    f: Box<dyn Fn() -> usize>,
    batch_means: Vec<f64>,
    samples: Vec<u64>,
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn quantile(sorted: &[u64], q: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * q) as usize] as f64
}

/// Median cost of an empty `Instant` pair (subtracted from individually timed calls).
fn timer_overhead() -> u64 {
    let mut s: Vec<u64> = (0..200_000)
        .map(|_| {
            let t = Instant::now();
            black_box(());
            t.elapsed().as_nanos() as u64
        })
        .collect();
    s.sort_unstable();
    s[s.len() / 2]
}

fn main() {
    let off_text = config(None);
    let worst_text = config(Some((false, 50)));
    let pruned_text = config(Some((true, 50)));
    let off = Gate::from_json(&off_text).expect("the no-policy config compiles");
    let worst = Gate::from_json(&worst_text).expect("the worst-case config compiles");
    let pruned = Gate::from_json(&pruned_text).expect("the pruned config compiles");
    let ctx_text: &'static str = match std::env::var("POLICY_TIMING_CTX") {
        Ok(t) => Box::leak(t.into_boxed_str()),
        Err(_) => CTX,
    };
    let ctx = CallContext::from_json(ctx_text).expect("the context parses");

    println!("policy timing, core only (mimalloc, release) — {TOOL} {ARGS}");
    println!("ctx {ctx_text}");
    println!(
        "config fingerprints (FNV-1a of the JSON text; bench/policy.bench.ts prints the same): off {}, worst {}, pruned {}",
        fingerprint(&off_text),
        fingerprint(&worst_text),
        fingerprint(&pruned_text)
    );

    // Decisions first: every row must allow the call with the same facts, and the 49 missing
    // rules alone must allow nothing and deny nothing.
    let expect_pass = |label: &str, v: toolgate_core::Verdict, facts: bool| {
        assert_eq!(v.outcome, Outcome::Passed, "{label}: {v:?}");
        if facts {
            assert_eq!(v.action.as_deref(), Some("read"), "{label}");
        }
        assert_eq!(v.resource.as_deref(), Some("file:reports/2026/q3-summary.md"), "{label}");
    };
    expect_pass("off, no ctx", off.check(TOOL, ARGS), false);
    expect_pass("off, ctx", off.check_as(TOOL, ARGS, &off.who(&ctx, Stage::Full)), false);
    expect_pass("worst", worst.check_as(TOOL, ARGS, &worst.who(&ctx, Stage::Full)), true);
    expect_pass("pruned", pruned.check_as(TOOL, ARGS, &pruned.who(&ctx, Stage::Full)), true);
    for pruned_variant in [false, true] {
        let g = Gate::from_json(&config(Some((pruned_variant, 49)))).expect("49 rules compile");
        let v = g.check_as(TOOL, ARGS, &g.who(&ctx, Stage::Full));
        assert_eq!(v.reason, Some(Reason::NoRule), "the 49 misses (pruned: {pruned_variant}) must neither allow nor deny: {v:?}");
    }
    println!("decisions: all four rows pass with action `read` and resource `file:reports/2026/q3-summary.md`; the first 49 rules alone answer no_rule (both variants)");
    println!();

    let mut rows: Vec<Row> = Vec::new();
    let mut add = |label: &'static str, f: Box<dyn Fn() -> usize>| rows.push(Row { label, f, batch_means: Vec::new(), samples: Vec::new() });
    let (o, w, p) = (std::rc::Rc::new(off), std::rc::Rc::new(worst), std::rc::Rc::new(pruned));
    let c = std::rc::Rc::new(ctx);
    {
        let o = o.clone();
        add("policy off, Gate::check (no ctx)", Box::new(move || o.check(black_box(TOOL), black_box(ARGS)).flags.len()));
    }
    {
        let (o, c) = (o.clone(), c.clone());
        add("policy off, check_as(ctx)", Box::new(move || o.check_as(black_box(TOOL), black_box(ARGS), &o.who(&c, Stage::Full)).flags.len()));
    }
    {
        let (p, c) = (p.clone(), c.clone());
        add("policy on, pruned (6 rules evaluated)", Box::new(move || p.check_as(black_box(TOOL), black_box(ARGS), &p.who(&c, Stage::Full)).flags.len()));
    }
    {
        let (w, c) = (w.clone(), c.clone());
        add("policy on, worst case (50 rules evaluated)", Box::new(move || w.check_as(black_box(TOOL), black_box(ARGS), &w.who(&c, Stage::Full)).flags.len()));
    }
    add(
        "ref: CallContext::from_json(ctx) (binding, per call)",
        Box::new(move || CallContext::from_json(black_box(ctx_text)).map(|c| c.roles.len()).unwrap_or(0)),
    );

    // `--spin <row> <seconds>`: only call that row in a loop (for `perf record`), then stop.
    let argv: Vec<String> = std::env::args().collect();
    if let [_, flag, row, secs] = &argv[..] {
        if flag == "--spin" {
            let (k, secs): (usize, f64) = (row.parse().expect("row index"), secs.parse().expect("seconds"));
            let r = &rows[k];
            let t = Instant::now();
            let mut calls = 0u64;
            while t.elapsed().as_secs_f64() < secs {
                for _ in 0..10_000 {
                    black_box((r.f)());
                }
                calls += 10_000;
            }
            println!("{}: {calls} calls, {:.0} ns per call", r.label, t.elapsed().as_nanos() as f64 / calls as f64);
            return;
        }
    }
    // warm-up
    for r in &rows {
        for _ in 0..20_000 {
            black_box((r.f)());
        }
    }
    let overhead = timer_overhead();
    // Interleaved batches, the starting row rotating: a slow stretch of a shared machine hits
    // every row alike. Each batch: a bulk loop (mean per call), then individually timed calls.
    let n = rows.len();
    for b in 0..BATCHES {
        for k in 0..n {
            let r = &mut rows[(b + k) % n];
            let t = Instant::now();
            for _ in 0..PER_BATCH {
                black_box((r.f)());
            }
            r.batch_means.push(t.elapsed().as_nanos() as f64 / PER_BATCH as f64);
            for _ in 0..SAMPLES / BATCHES {
                let t = Instant::now();
                black_box((r.f)());
                r.samples.push((t.elapsed().as_nanos() as u64).saturating_sub(overhead));
            }
        }
    }

    println!("{BATCHES} interleaved batches of {PER_BATCH} calls per row (median of the batch means), and {} individually timed calls per row (p50 / p99, empty timer pair of {overhead} ns subtracted); ns per call", (SAMPLES / BATCHES) * BATCHES);
    println!("{:<54} {:>10} {:>8} {:>8}", "", "batch med", "p50", "p99");
    let mut stats = Vec::new();
    for r in &mut rows {
        r.samples.sort_unstable();
        let m = median(&mut r.batch_means);
        let (p50, p99) = (quantile(&r.samples, 0.5), quantile(&r.samples, 0.99));
        println!("{:<54} {m:>10.0} {p50:>8.0} {p99:>8.0}", r.label);
        stats.push((m, p50, p99));
    }
    println!();
    let (off_ctx, worst_s, pruned_s, bare) = (stats[1], stats[3], stats[2], stats[0]);
    println!("policy on − off (same ctx), batch median / p50 / p99:");
    for (label, s) in [("worst case", worst_s), ("pruned", pruned_s)] {
        println!(
            "  {label:<12} {:>+6.0} / {:>+6.0} / {:>+6.0} ns   ratio on/off (batch median) {:.2}   target < 1000 ns at p50: {}",
            s.0 - off_ctx.0,
            s.1 - off_ctx.1,
            s.2 - off_ctx.2,
            s.0 / off_ctx.0,
            if s.1 - off_ctx.1 < 1000.0 { "met" } else { "NOT met" }
        );
    }
    println!("  ctx vs no ctx, policy off (who() with a context; no parse here): {:+.0} / {:+.0} ns", off_ctx.0 - bare.0, off_ctx.1 - bare.1);
}
