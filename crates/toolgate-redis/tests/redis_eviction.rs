//! A Redis that may evict keys is refused. Every gate key has a TTL, so under any `volatile-*`
//! or `allkeys-*` policy another tenant filling Redis (through the gate itself: distinct
//! loop-guarded calls) evicts a victim's taint, rate counts and tokens, and a sink then passes.
//! So each new connection reads `INFO memory` and fails closed unless `maxmemory_policy` is
//! `noeviction` — or when Redis does not let the gate read it (ACL, renamed command) — with a
//! message saying what to change. Real `redis-server`s on loopback.

mod common;
#[path = "common/fake_redis.rs"]
mod fake_redis;

use std::sync::Arc;

use toolgate_core::config::RedisConfig;
use toolgate_core::state::{PendingConfirm, StateStore};
use toolgate_core::{Gate, Reason, Verdict};
use toolgate_redis::RedisStore;

fn store(url: &str) -> RedisStore {
    RedisStore::new(&RedisConfig { url: url.into(), key_prefix: "ev:".into(), timeout_ms: 500 }).unwrap()
}

fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64
}

fn raw(url: &str) -> redis::Connection {
    redis::Client::open(url).unwrap().get_connection().unwrap()
}

/// A decision that needs state (a labelled read, recorded as the scope's taint; rate limited),
/// by a gate keeping its state in `url`.
fn decide(url: &str) -> Verdict {
    let cfg = r#"{"labels":["public","secret"],"tools":[{"name":"read_secret","output":{"label":"secret"}}],
        "rateLimits":[{"tools":["read_secret"],"per":"subject","max":10,"windowSeconds":60}]}"#;
    Gate::from_json(cfg).unwrap().with_store(Arc::new(store(url))).check("read_secret", "{}")
}

/// The decision is refused `state_unavailable`, its message containing `needle`.
fn refused(url: &str, needle: &str) -> String {
    let v = decide(url);
    assert_eq!(v.reason, Some(Reason::StateUnavailable), "{v:?}");
    let m = v.message.unwrap_or_default();
    assert!(m.contains(needle) && m.contains("noeviction"), "{m}");
    m
}

fn pending() -> PendingConfirm {
    PendingConfirm {
        tool: "w".into(),
        arguments: serde_json::json!({}),
        subject: None,
        scope: "victim".into(),
        expires_ms: now_ms() + 60_000,
        flags: Vec::new(),
    }
}

/// Every operation of a store on this Redis fails, naming `needle`; nothing is written.
fn assert_refused(url: &str, needle: &str) {
    refused(url, needle);
    let s = store(url);
    // every operation, including those after a failed connect (backing off, the same reason)
    for _ in 0..2 {
        assert!(s.put_token("tok", pending()).is_err_and(|e| e.0.contains(needle)));
        assert!(s.take_token("tok", now_ms()).is_err_and(|e| e.0.contains(needle)));
        std::thread::sleep(std::time::Duration::from_millis(120));
    }
    let keys: Vec<String> = redis::cmd("KEYS").arg("ev:*").query(&mut raw(url)).unwrap();
    assert!(keys.is_empty(), "nothing is kept in it: {keys:?}");
}

#[test]
fn a_redis_that_may_evict_keys_is_refused() {
    // the ElastiCache default; then every other evicting policy on the same server
    let r = common::Redis::start_with(&["--maxmemory", "4mb", "--maxmemory-policy", "volatile-lru"]);
    assert_refused(&r.url(), "`volatile-lru`");
    let mut con = raw(&r.url());
    for policy in ["allkeys-lru", "volatile-lfu", "allkeys-lfu", "volatile-random", "allkeys-random", "volatile-ttl"] {
        let _: () = redis::cmd("CONFIG").arg("SET").arg("maxmemory-policy").arg(policy).query(&mut con).unwrap();
        assert_refused(&r.url(), &format!("`{policy}`"));
    }
    // set right, the same server is used (a new connection checks again)
    let _: () = redis::cmd("CONFIG").arg("SET").arg("maxmemory-policy").arg("noeviction").query(&mut con).unwrap();
    assert!(decide(&r.url()).allowed());
}

#[test]
fn a_noeviction_redis_is_used() {
    let r = common::Redis::start_with(&["--maxmemory", "4mb", "--maxmemory-policy", "noeviction"]);
    assert!(decide(&r.url()).allowed());
    let s = store(&r.url());
    s.put_token("tok", pending()).unwrap();
    assert!(s.take_token("tok", now_ms()).unwrap().is_some());
    // the URL's database is selected on connecting
    store(&format!("{}/3", r.url())).put_token("in-db-3", pending()).unwrap();
    let in_3: Vec<String> = redis::cmd("KEYS").arg("ev:c:*").query(&mut raw(&format!("{}/3", r.url()))).unwrap();
    let in_0: Vec<String> = redis::cmd("KEYS").arg("ev:c:*").query(&mut raw(&r.url())).unwrap();
    assert_eq!((in_3.len(), in_0.len()), (1, 0), "{in_3:?} {in_0:?}");
    // full: Redis refuses writes rather than evicting, and the gate refuses the decision
    // rather than allowing it unrecorded
    let mut con = raw(&r.url());
    let filler = vec![b'x'; 1_000];
    let full =
        (0..20_000).any(|i| redis::cmd("SET").arg(format!("filler:{i}")).arg(&filler).query::<()>(&mut con).is_err_and(|e| e.to_string().contains("OOM")));
    assert!(full, "Redis refused a write");
    let v = decide(&r.url());
    assert_eq!(v.reason, Some(Reason::StateUnavailable), "{v:?}");
    assert!(v.message.as_deref().is_some_and(|m| m.contains("OOM")), "{v:?}");
}

#[test]
fn a_redis_that_does_not_let_the_gate_read_info_is_refused_and_the_documented_acl_works() {
    let r = common::Redis::start();
    let mut admin = raw(&r.url());
    // a managed-Redis style user: everything but the dangerous commands (INFO is one)
    let _: () = redis::cmd("ACL").arg("SETUSER").arg("app").arg("on").arg(">app-pw").arg("~ev:*").arg("+@all").arg("-@dangerous").query(&mut admin).unwrap();
    let url = format!("redis://app:app-pw@127.0.0.1:{}", r.port);
    let m = refused(&url, "refused `INFO memory` (NOPERM)");
    assert!(m.contains("+info") && !m.contains("app-pw"), "{m}");
    // docs/state.md's recipe: the same user, with `+info`
    let _: () = redis::cmd("ACL")
        .arg("SETUSER")
        .arg("toolgate")
        .arg("on")
        .arg(">tg-pw")
        .arg("~ev:*")
        .arg("+@all")
        .arg("-@dangerous")
        .arg("+info")
        .query(&mut admin)
        .unwrap();
    let url = format!("redis://toolgate:tg-pw@127.0.0.1:{}", r.port);
    assert!(decide(&url).allowed());
    let s = store(&url);
    s.put_token("tok", pending()).unwrap();
    assert!(s.take_token("tok", now_ms()).unwrap().is_some());
    // a wrong password: refused, and the password is not in the message
    let e = store(&format!("redis://toolgate:not-it@127.0.0.1:{}", r.port)).take_token("tok", now_ms()).expect_err("wrong password");
    assert!(e.0.contains("AUTH") && !e.0.contains("not-it"), "{e}");
}

#[test]
fn a_redis_with_info_renamed_away_or_silent_on_the_policy_is_refused() {
    // `rename-command INFO ""` (a managed Redis), an INFO without the field, a made-up policy
    let renamed = b"-ERR unknown command 'INFO', with args beginning with: 'memory'\r\n".to_vec();
    for (what, info, needle) in [
        ("renamed", renamed, "refused `INFO memory` (ERR)"),
        ("no field", fake_redis::bulk("# Memory\r\nused_memory:1000000\r\n"), "does not report maxmemory_policy"),
        ("made up", fake_redis::info_with_policy("evict-everything\u{1b}[31m"), "`evict-everything31m`"),
    ] {
        let port = fake_redis::start(info, fake_redis::Trickle::Nothing);
        let e = store(&format!("redis://127.0.0.1:{port}")).take_token("tok", now_ms()).expect_err(what);
        assert!(e.0.contains(needle) && e.0.contains("noeviction"), "{what}: {e}");
    }
    // the control: the same fake saying noeviction is used
    let port = fake_redis::start(fake_redis::info_with_policy("noeviction"), fake_redis::Trickle::Nothing);
    assert_eq!(store(&format!("redis://127.0.0.1:{port}")).take_token("tok", now_ms()).unwrap(), None);
}
