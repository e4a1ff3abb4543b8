//! The Redis store against a real `redis-server` on loopback (no mock): the same semantics as the
//! in-memory store, tokens taken exactly once by 50 concurrent takers on separate connections,
//! TTLs on every key, and every failure (killed server, a peer answering garbage, a peer that
//! never answers) a `StateError` within the timeout — then normal answers once Redis is back.

mod common;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Barrier, LazyLock};
use std::time::{Duration, Instant};

use serde_json::json;
use toolgate_core::config::RedisConfig;
use toolgate_core::state::{LoopCheck, MemoryStore, PendingConfirm, RateCheck, Settle, StateStore, EVICTED};
use toolgate_core::{CallContext, Gate, Outcome, Reason, Stage, Verdict};
use toolgate_redis::RedisStore;

/// The labels of the store-level tests: `l0` … `l253`.
static LABELS: LazyLock<Vec<String>> = LazyLock::new(|| (0..254).map(|i| format!("l{i}")).collect());

fn store(url: &str, prefix: &str) -> RedisStore {
    RedisStore::new(&RedisConfig { url: url.into(), key_prefix: prefix.into(), timeout_ms: 200 }).unwrap()
}

fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64
}

fn pending(expires_ms: u64) -> PendingConfirm {
    PendingConfirm { tool: "w".into(), arguments: json!({"to": "x"}), subject: Some("alice".into()), scope: "s".into(), expires_ms, flags: Vec::new() }
}

fn rate_q(scope: &str, now_ms: u64, max: u32) -> Settle<'_> {
    Settle {
        scope,
        labels: &LABELS,
        now_ms,
        loop_check: None,
        sink_max: None,
        rates: vec![RateCheck { key: "lim:who".into(), window_ms: 60_000, max }],
        record: true,
        enforce: true,
        raise: None,
    }
}

fn raw(url: &str) -> redis::Connection {
    redis::Client::open(url).unwrap().get_connection().unwrap()
}

#[test]
fn settle_matches_the_memory_store() {
    let r = common::Redis::start();
    let s = store(&r.url(), "t1:");
    let now = now_ms();
    let lc = LoopCheck { key: 7, since_ms: now - 60_000, max: 2, keep: 3, window_ms: 60_000 };
    let q = Settle {
        scope: "sess",
        labels: &LABELS,
        now_ms: now,
        loop_check: Some(lc),
        sink_max: Some(0),
        rates: Vec::new(),
        record: true,
        enforce: true,
        raise: None,
    };
    assert_eq!(s.settle(&q).unwrap().loop_seen, 0);
    assert_eq!(s.settle(&q).unwrap().loop_seen, 1);
    let third = s.settle(&q).unwrap();
    assert_eq!((third.loop_seen, third.recorded), (2, false), "over the loop bound: not recorded");
    // taint: raised with a record, never lowered, refuses the sink
    let read = Settle { loop_check: None, sink_max: None, raise: Some(2), ..q.clone() };
    assert!(s.settle(&read).unwrap().recorded);
    s.raise_taint("sess", 1, &LABELS).unwrap();
    assert_eq!(s.taint("sess", &LABELS).unwrap(), 2);
    let sink = Settle { loop_check: None, sink_max: Some(1), ..q.clone() };
    let o = s.settle(&sink).unwrap();
    assert_eq!((o.taint, o.recorded), (2, false));
    assert!(s.settle(&Settle { enforce: false, ..sink.clone() }).unwrap().recorded, "shadow mode records anyway");
    // rate: exact, only admitted calls counted, reset at the window's end
    for i in 0..3 {
        let o = s.settle(&rate_q("x", now, 3)).unwrap();
        assert_eq!((o.rates[0].count, o.recorded), (i, true));
    }
    let o = s.settle(&rate_q("x", now, 3)).unwrap();
    assert_eq!((o.rates[0].count, o.recorded), (3, false));
    assert_eq!(o.rates[0].reset_ms, now - now % 60_000 + 60_000);
    assert_eq!(s.settle(&rate_q("x", now, 3)).unwrap().rates[0].count, 3, "a refused call is not counted");
    // another prefix is another gate
    assert_eq!(store(&r.url(), "other:").taint("sess", &LABELS).unwrap(), 0);
}

#[test]
fn every_key_has_a_ttl() {
    let r = common::Redis::start();
    let s = store(&r.url(), "ttl:");
    let now = now_ms();
    let q = Settle {
        scope: "sess",
        labels: &LABELS,
        now_ms: now,
        loop_check: Some(LoopCheck { key: 1, since_ms: 0, max: 5, keep: 6, window_ms: 30_000 }),
        sink_max: None,
        rates: vec![RateCheck { key: "a:b".into(), window_ms: 10_000, max: 5 }],
        record: true,
        enforce: true,
        raise: Some(1),
    };
    assert!(s.settle(&q).unwrap().recorded);
    s.put_token("tok", pending(now + 300_000)).unwrap();
    let mut con = raw(&r.url());
    let keys: Vec<String> = redis::cmd("KEYS").arg("ttl:*").query(&mut con).unwrap();
    assert_eq!(keys.len(), 5, "taint, loop hash and order, rate, token: {keys:?}");
    for k in keys {
        let pttl: i64 = redis::cmd("PTTL").arg(&k).query(&mut con).unwrap();
        assert!(pttl > 0, "{k} has no TTL ({pttl})");
        assert!(!k.contains("sess") && !k.contains("tok"), "{k} names what it holds");
    }
}

#[test]
fn a_token_is_taken_exactly_once_by_50_concurrent_takers() {
    let r = common::Redis::start();
    let issuer = store(&r.url(), "tok:");
    for round in 0..5 {
        let token = format!("token-{round}");
        issuer.put_token(&token, pending(now_ms() + 60_000)).unwrap();
        let barrier = Arc::new(Barrier::new(50));
        let url = r.url();
        let takers: Vec<_> = (0..50)
            .map(|_| {
                let (barrier, url, token) = (Arc::clone(&barrier), url.clone(), token.clone());
                std::thread::spawn(move || {
                    let s = store(&url, "tok:"); // its own connections, as another process
                    s.taint("warm", &LABELS).unwrap();
                    barrier.wait();
                    s.take_token(&token, now_ms()).unwrap().is_some()
                })
            })
            .collect();
        let won = takers.into_iter().map(|t| t.join().unwrap()).filter(|&w| w).count();
        assert_eq!(won, 1, "round {round}");
    }
    issuer.put_token("old", pending(now_ms() - 1)).unwrap_or(());
    assert_eq!(issuer.take_token("old", now_ms()).unwrap(), None, "expired");
}

#[test]
fn a_rate_limit_is_exact_across_50_stores() {
    let r = common::Redis::start();
    let now = now_ms();
    let barrier = Arc::new(Barrier::new(50));
    let workers: Vec<_> = (0..50)
        .map(|_| {
            let (barrier, url) = (Arc::clone(&barrier), r.url());
            std::thread::spawn(move || {
                let s = store(&url, "rate:");
                barrier.wait();
                (0..10).filter(|_| s.settle(&rate_q("x", now, 137)).unwrap().recorded).count()
            })
        })
        .collect();
    let admitted: usize = workers.into_iter().map(|w| w.join().unwrap()).sum();
    assert_eq!(admitted, 137);
}

#[test]
fn redis_killed_then_back() {
    let mut r = common::Redis::start();
    let s = store(&r.url(), "kill:");
    s.raise_taint("sess", 1, &LABELS).unwrap();
    r.kill();
    let t = Instant::now();
    for _ in 0..20 {
        assert!(s.settle(&rate_q("x", now_ms(), 100)).is_err());
        assert!(s.taint("sess", &LABELS).is_err());
        assert!(s.take_token("t", now_ms()).is_err());
    }
    assert!(t.elapsed() < Duration::from_secs(5), "failures are fast: {:?}", t.elapsed());
    r.restart();
    // reconnects by itself (after the 100 ms backoff); the script is loaded again (NOSCRIPT)
    let t = Instant::now();
    loop {
        if let Ok(o) = s.settle(&rate_q("x", now_ms(), 100)) {
            assert!(o.recorded);
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(5), "did not reconnect");
        std::thread::sleep(Duration::from_millis(20));
    }
    // data did not survive (no persistence): the taint reads clean, so a restart without
    // persistence loses taint — documented in docs/state.md
    assert_eq!(s.taint("sess", &LABELS).unwrap(), 0);
}

/// A peer that accepts and then answers `reply` to everything (`None`: never answers).
fn hostile_peer(reply: Option<&'static [u8]>) -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for c in l.incoming().take(64) {
            let Ok(mut c) = c else { continue };
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n) = c.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    if let Some(r) = reply {
                        let _ = c.write_all(r);
                    }
                }
            });
        }
    });
    port
}

#[test]
fn garbage_and_silence_are_errors_within_the_timeout() {
    for (what, reply) in [("garbage", Some(&b"HTTP/1.1 400 Bad Request\r\n\r\n"[..])), ("wrong type", Some(&b"+OK\r\n"[..])), ("silence", None)] {
        let port = hostile_peer(reply);
        let s = store(&format!("redis://127.0.0.1:{port}"), "g:");
        let t = Instant::now();
        assert!(s.settle(&rate_q("x", now_ms(), 10)).is_err(), "{what}");
        assert!(s.take_token("t", now_ms()).is_err() || what == "wrong type", "{what}");
        assert!(t.elapsed() < Duration::from_millis(2_000), "{what}: {:?}", t.elapsed());
    }
}

#[test]
fn a_garbage_taint_reads_as_the_top_label_in_a_decision() {
    let r = common::Redis::start();
    let s = store(&r.url(), "gt:");
    s.raise_taint("sess", 1, &LABELS).unwrap();
    let mut con = raw(&r.url());
    let keys: Vec<String> = redis::cmd("KEYS").arg("gt:t:*").query(&mut con).unwrap();
    // Lua's tonumber reads "nan" as NaN (every comparison false) and "-1" as a number below
    // every label: each used to admit a sink
    for garbage in ["not a number", "nan", "-nan", "-1", "1.5", "inf", "1e999", "256", "0x10"] {
        let _: () = redis::cmd("SET").arg(&keys[0]).arg(garbage).query(&mut con).unwrap();
        let q = Settle {
            scope: "sess",
            labels: &LABELS,
            now_ms: now_ms(),
            loop_check: None,
            sink_max: Some(200),
            rates: Vec::new(),
            record: true,
            enforce: true,
            raise: None,
        };
        let o = s.settle(&q).unwrap();
        assert_eq!((o.taint, o.recorded), (EVICTED, false), "{garbage}");
        // a raise never lowers it to something admitted
        s.raise_taint("sess", 1, &LABELS).unwrap();
        let o = s.settle(&q).unwrap();
        assert_eq!((o.taint, o.recorded), (EVICTED, false), "{garbage} after a raise");
    }
    let _: () = redis::cmd("SET").arg(&keys[0]).arg("not a number").query(&mut con).unwrap();
    assert_eq!(s.taint("sess", &LABELS).unwrap(), EVICTED, "a direct read of garbage is the top label");
}

#[test]
fn a_garbage_rate_count_is_over_every_limit() {
    let r = common::Redis::start();
    let s = store(&r.url(), "gr:");
    assert!(s.settle(&rate_q("x", now_ms(), 10)).unwrap().recorded);
    let mut con = raw(&r.url());
    let keys: Vec<String> = redis::cmd("KEYS").arg("gr:r:*").query(&mut con).unwrap();
    for garbage in ["nan", "-nan", "-5", "2.5", "inf", "text"] {
        let _: () = redis::cmd("SET").arg(&keys[0]).arg(garbage).query(&mut con).unwrap();
        // refused as state_unavailable (an error) is closed too
        if let Ok(o) = s.settle(&rate_q("x", now_ms(), 10)) {
            assert!(!o.recorded, "{garbage}: admitted");
        }
    }
}

#[test]
fn close_releases_connections_and_fails_after() {
    let r = common::Redis::start();
    let s = store(&r.url(), "c:");
    s.taint("a", &LABELS).unwrap();
    assert_eq!(s.open_connections(), 1);
    s.close();
    assert_eq!(s.open_connections(), 0);
    assert!(s.taint("a", &LABELS).is_err());
}

/// The test servers' own guard: a server whose port another test's server already holds does not
/// count as started (the other may be killed by its test while this one's clients use it).
#[test]
fn a_test_server_is_only_the_one_spawned_here() {
    let first = common::Redis::start();
    assert!(common::Redis::start_on(first.port).is_none(), "another server's port was taken for this one's");
}

// Gate-level: the reviewer's reproductions (/tmp/review-redis), each through the public API.

fn gate_on(url: &str, prefix: &str, config: &str) -> Gate {
    Gate::from_json(config).unwrap().with_store(Arc::new(store(url, prefix)))
}

fn decide(g: &Gate, tool: &str, args: &str, session: &str) -> Verdict {
    let ctx = CallContext::from_json(&format!(r#"{{"subject":"alice","session":"{session}"}}"#)).unwrap();
    g.check_as(tool, args, &g.who(&ctx, Stage::Full))
}

fn keys(con: &mut redis::Connection, pattern: &str) -> Vec<String> {
    redis::cmd("KEYS").arg(pattern).query(con).unwrap()
}

/// Loop timestamps kept under `prefix`, whatever the layout (one sorted set per call key before,
/// one hash of `t1,t2,…` per scope now).
fn stamps(con: &mut redis::Connection, prefix: &str) -> usize {
    let mut n = 0;
    for k in keys(con, &format!("{prefix}l:*")) {
        let kind: String = redis::cmd("TYPE").arg(&k).query(con).unwrap();
        n += match kind.as_str() {
            "zset" => redis::cmd("ZCARD").arg(&k).query::<usize>(con).unwrap(),
            "hash" => redis::cmd("HVALS").arg(&k).query::<Vec<String>>(con).unwrap().iter().map(|v| v.split(',').count()).sum(),
            _ => 0,
        };
    }
    n
}

const SECRET_THEN_PUBLIC: &str = r#"{ "labels": ["public", "secret"], "tools": [
  { "name": "read_secret", "output": { "label": "secret" } }, { "name": "post", "sink": { "maxLabel": "public" } }, { "name": "noop" } ] }"#;

/// Reviewer (labels_reorder.js): the taint was stored as a position in `labels`, so a rolling
/// deploy that inserts `internal` below `secret` read a session that read secret data as
/// `internal`, and an `internal` sink passed. Now the name is kept; a name the new labels do not
/// hold, and an older release's digits, read as the top label.
#[test]
fn a_change_of_labels_never_reads_a_taint_lower_than_it_was_raised() {
    let r = common::Redis::start();
    let v1 = gate_on(&r.url(), "lr:", SECRET_THEN_PUBLIC);
    let v2 = gate_on(
        &r.url(),
        "lr:",
        r#"{ "labels": ["public", "internal", "secret"], "tools": [
          { "name": "read_secret", "output": { "label": "secret" } }, { "name": "share_internal", "sink": { "maxLabel": "internal" } } ] }"#,
    );
    let v3 = gate_on(&r.url(), "lr:", r#"{ "labels": ["public", "internal"], "tools": [ { "name": "share_internal", "sink": { "maxLabel": "internal" } } ] }"#);
    assert!(decide(&v1, "read_secret", "{}", "a1").arguments.is_some());
    let v = decide(&v2, "share_internal", "{}", "a1");
    assert_eq!((v.outcome, v.reason), (Outcome::Denied, Some(Reason::Taint)), "{v:?}");
    assert!(v.message.unwrap().contains("`secret`"), "read at its name");
    v2.mark_session("a1", "internal").unwrap();
    assert_eq!(decide(&v2, "share_internal", "{}", "a1").reason, Some(Reason::Taint), "a lower raise keeps it");
    let v = decide(&v3, "share_internal", "{}", "a1");
    assert_eq!((v.outcome, v.reason), (Outcome::Denied, Some(Reason::Taint)), "`secret` removed: the top label: {v:?}");
    // an older release's level in digits (here 1: `internal` in v2's labels) reads as the top
    assert!(decide(&v1, "read_secret", "{}", "legacy").arguments.is_some());
    let mut con = raw(&r.url());
    let before: Vec<String> = keys(&mut con, "lr:t:*");
    v1.mark_session("legacy-marker", "secret").unwrap();
    let legacy = keys(&mut con, "lr:t:*").into_iter().find(|k| !before.contains(k)).unwrap();
    let _: () = redis::cmd("DEL").arg(&legacy).query(&mut con).unwrap();
    let _: () = redis::cmd("SET").arg(&legacy).arg("1").query(&mut con).unwrap();
    let v = decide(&v2, "share_internal", "{}", "legacy-marker");
    assert_eq!((v.outcome, v.reason), (Outcome::Denied, Some(Reason::Taint)), "digits: {v:?}");
    assert!(decide(&v2, "share_internal", "{}", "clean").arguments.is_some(), "a clean session is not affected");
}

/// Reviewer (ttl_refresh.js): the taint key's TTL was refreshed only by recorded calls, so a
/// session refused at a sink again and again saw its taint expire 24 h after its last read.
#[test]
fn a_sink_check_refreshes_the_taint_even_when_refused() {
    let r = common::Redis::start();
    let g = gate_on(&r.url(), "tr:", SECRET_THEN_PUBLIC);
    assert!(decide(&g, "read_secret", "{}", "a1").arguments.is_some());
    let mut con = raw(&r.url());
    let key = keys(&mut con, "tr:t:*").pop().unwrap();
    let _: () = redis::cmd("PEXPIRE").arg(&key).arg(60_000).query(&mut con).unwrap(); // 23 h 59 min later
    assert_eq!(decide(&g, "post", "{}", "a1").reason, Some(Reason::Taint));
    let pttl: i64 = redis::cmd("PTTL").arg(&key).query(&mut con).unwrap();
    assert!(pttl > 23 * 3600 * 1000, "refreshed by the refused sink check: {pttl} ms left");
}

/// Reviewer (growth.js): one session's distinct loop-guarded calls made one key each (20,000
/// calls → 20,000 keys, TTL up to 7 days). Now one hash of at most 1024 call keys per scope,
/// forgetting the least recently used (recorded or counted) first — decision for decision what
/// the in-memory store does.
#[test]
fn loop_counters_are_bounded_per_scope_as_in_memory() {
    const CONFIG: &str = r#"{ "tools": [ { "name": "search", "loop": { "maxIdentical": 2, "windowSeconds": 604800 } } ] }"#;
    let r = common::Redis::start();
    let remote = gate_on(&r.url(), "lg:", CONFIG);
    let local = Gate::from_json(CONFIG).unwrap().with_store(Arc::new(MemoryStore::new(10)));
    let mut calls: Vec<String> = vec!["a".into(), "a".into(), "b".into(), "b".into()];
    calls.extend((0..1022).map(|i| format!("c{i}"))); // 1024 keys: full
                                                      // `a` refused as a loop (and so counted: most recently used), `d` then forgets the stalest, `b`
    calls.extend(["a", "d", "b", "a", "b", "b", "c1", "c1", "c1"].map(String::from));
    let run = |g: &Gate| calls.iter().map(|q| decide(g, "search", &format!(r#"{{"q":"{q}"}}"#), "one").reason).collect::<Vec<_>>();
    let (want, got) = (run(&local), run(&remote));
    let tail: Vec<_> = want[want.len() - 9..].iter().map(|r| *r == Some(Reason::Loop)).collect();
    assert_eq!(tail, [true, false, false, true, false, true, false, true, true], "the memory store's reference");
    if let Some(i) = (0..want.len()).find(|&i| got[i] != want[i]) {
        panic!("decision {i} (`{}`): Redis {:?}, memory {:?}", calls[i], got[i], want[i]);
    }
    for i in 0..1200 {
        decide(&remote, "search", &format!(r#"{{"q":"more{i}"}}"#), "one");
    }
    let mut con = raw(&r.url());
    let all = keys(&mut con, "lg:*");
    assert_eq!(all.len(), 2, "one hash and its order: {}", all.len());
    for k in all {
        let n: usize = redis::cmd(if k.starts_with("lg:l:") { "HLEN" } else { "ZCARD" }).arg(&k).query(&mut con).unwrap();
        assert_eq!(n, 1024, "{k}");
        let pttl: i64 = redis::cmd("PTTL").arg(&k).query(&mut con).unwrap();
        assert!(pttl > 0 && pttl <= 604_800_000, "{k}: {pttl}");
    }
}

/// Reviewer (wrongtype.js): with a list planted at the taint key the decision script failed
/// after it had written the loop entry: the call was refused yet counted. Now every key is
/// checked before the first write: a decision either errors having written nothing, or counts
/// exactly the calls it allows. Also a malformed rate count in shadow mode (recorded regardless:
/// `INCR` failed after the loop entry was written).
#[test]
fn a_script_error_writes_nothing() {
    let r = common::Redis::start();
    let mut con = raw(&r.url());
    // a list at the taint key
    let g = gate_on(
        &r.url(),
        "wt:",
        r#"{ "labels": ["public", "secret"], "tools": [
          { "name": "read_secret", "output": { "label": "secret" }, "loop": { "maxIdentical": 2, "windowSeconds": 60 } },
          { "name": "post", "sink": { "maxLabel": "public" } } ] }"#,
    );
    g.mark_session("s1", "secret").unwrap();
    let key = keys(&mut con, "wt:t:*").pop().unwrap();
    let _: () = redis::cmd("DEL").arg(&key).query(&mut con).unwrap();
    let _: () = redis::cmd("RPUSH").arg(&key).arg("0").query(&mut con).unwrap();
    let allowed = (0..3).filter(|_| decide(&g, "read_secret", "{}", "s1").arguments.is_some()).count();
    assert_eq!(stamps(&mut con, "wt:"), allowed, "counted exactly the calls allowed");
    assert_eq!(decide(&g, "post", "{}", "s1").outcome, Outcome::Denied, "and the sink stays closed");
    // a malformed rate count, in shadow mode
    let g = gate_on(
        &r.url(),
        "ws:",
        r#"{ "mode": "shadow", "tools": [ { "name": "ping", "loop": { "maxIdentical": 5, "windowSeconds": 60 } } ],
          "rateLimits": [ { "tools": ["ping"], "per": "subject", "max": 5, "windowSeconds": 3600 } ] }"#,
    );
    assert!(decide(&g, "ping", r#"{"n":0}"#, "s2").arguments.is_some());
    let rate = keys(&mut con, "ws:r:*").pop().unwrap();
    let _: () = redis::cmd("SET").arg(&rate).arg("text").query(&mut con).unwrap();
    let allowed = (1..4).filter(|i| decide(&g, "ping", &format!(r#"{{"n":{i}}}"#), "s2").arguments.is_some()).count();
    assert_eq!(stamps(&mut con, "ws:"), 1 + allowed, "counted exactly the calls allowed");
    let text: String = redis::cmd("GET").arg(&rate).query(&mut con).unwrap();
    assert_eq!(text, "text", "a malformed count is never written over");
}

/// A key of the wrong type where the script writes: refused `state_unavailable`, and nothing at
/// all written (no taint raised, no loop entry, no rate count).
#[test]
fn a_key_of_the_wrong_type_refuses_and_writes_nothing() {
    let r = common::Redis::start();
    let s = store(&r.url(), "wk:");
    let now = now_ms();
    let q = Settle {
        scope: "sess",
        labels: &LABELS,
        now_ms: now,
        loop_check: Some(LoopCheck { key: 9, since_ms: now - 60_000, max: 5, keep: 6, window_ms: 60_000 }),
        sink_max: None,
        rates: vec![RateCheck { key: "a:b".into(), window_ms: 60_000, max: 5 }],
        record: true,
        enforce: true,
        raise: Some(3),
    };
    assert!(s.settle(&q).unwrap().recorded);
    let mut con = raw(&r.url());
    let snapshot = |con: &mut redis::Connection| -> Vec<(String, String)> {
        let mut ks = keys(con, "wk:*");
        ks.sort();
        ks.into_iter()
            .map(|k| {
                let dump: Option<Vec<u8>> = redis::cmd("DUMP").arg(&k).query(con).unwrap();
                (k, format!("{dump:?}"))
            })
            .collect()
    };
    for (pattern, plant) in [("wk:l:*", "SET"), ("wk:u:*", "SET"), ("wk:r:*", "RPUSH")] {
        let key = keys(&mut con, pattern).pop().unwrap();
        let saved: Vec<u8> = redis::cmd("DUMP").arg(&key).query(&mut con).unwrap();
        let _: () = redis::cmd("DEL").arg(&key).query(&mut con).unwrap();
        let _: () = redis::cmd(plant).arg(&key).arg("x").query(&mut con).unwrap();
        let before = snapshot(&mut con);
        let e = s.settle(&Settle { raise: Some(7), ..q.clone() }).unwrap_err();
        assert!(e.0.contains("nothing was written"), "{pattern}: {e}");
        assert_eq!(snapshot(&mut con), before, "{pattern}: a failed script wrote");
        let _: () = redis::cmd("DEL").arg(&key).query(&mut con).unwrap();
        let _: () = redis::cmd("RESTORE").arg(&key).arg(0).arg(saved).query(&mut con).unwrap();
    }
    assert_eq!(s.taint("sess", &LABELS).unwrap(), 3, "never raised to 7");
}
