//! `timeoutMs` bounds a whole Redis operation (connect, writes and reads together), not each
//! socket read. Against a fake Redis on loopback that trickles its replies one byte every 80 ms
//! (each byte well within the 100 ms timeout), an operation fails within the timeout (plus
//! slack) and the gate refuses the call `state_unavailable`. With a timeout per read, a reply
//! was waited for byte after byte (the reviewer measured 1.5 s and 10 s) and then used.

#[path = "common/fake_redis.rs"]
mod fake_redis;

use std::sync::Arc;
use std::time::{Duration, Instant};

use toolgate_core::config::RedisConfig;
use toolgate_core::state::{StateError, StateStore};
use toolgate_core::{Gate, Reason};
use toolgate_redis::RedisStore;

use fake_redis::Trickle;

const TIMEOUT_MS: u64 = 100;
/// Scheduling slack on a loaded machine (tests run in parallel on few cores).
const SLACK: Duration = Duration::from_millis(250);
/// Between two trickled bytes: within the timeout.
const GAP: Duration = Duration::from_millis(80);

fn fake(trickle: Trickle) -> u16 {
    fake_redis::start(fake_redis::info_with_policy("noeviction"), trickle)
}

fn store(port: u16) -> RedisStore {
    RedisStore::new(&RedisConfig { url: format!("redis://127.0.0.1:{port}"), key_prefix: "dl:".into(), timeout_ms: TIMEOUT_MS }).unwrap()
}

fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64
}

fn bound() -> Duration {
    Duration::from_millis(TIMEOUT_MS) + SLACK
}

/// A timeout error within `TIMEOUT_MS` plus slack.
fn assert_bounded<T: std::fmt::Debug>(what: &str, took: Duration, out: Result<T, StateError>) {
    assert!(took < bound(), "{what}: took {took:?}, more than {:?} ({out:?})", bound());
    let e = out.expect_err(what);
    assert!(e.0.contains("timed out"), "{what}: {e}");
}

/// A gate whose only tool is rate limited, so every decision settles in the store.
fn gate(port: u16) -> Gate {
    let cfg = r#"{"tools":[{"name":"post"}],"rateLimits":[{"tools":["post"],"per":"subject","max":10,"windowSeconds":60}]}"#;
    Gate::from_json(cfg).unwrap().with_store(Arc::new(store(port)))
}

#[test]
fn the_fake_speaks_enough_redis() {
    // the control: answering at once, the fake is a Redis the store and the gate use
    let port = fake(Trickle::Nothing);
    assert_eq!(store(port).take_token("t", now_ms()).unwrap(), None);
    assert!(gate(port).check("post", "{}").allowed());
}

#[test]
fn a_reply_trickled_byte_by_byte_fails_within_the_timeout() {
    let s = store(fake(Trickle::Commands { gap: GAP }));
    for i in 0..2 {
        let t = Instant::now();
        let out = s.take_token("t", now_ms());
        assert_bounded(&format!("a trickled GETDEL, attempt {i}"), t.elapsed(), out);
    }
}

#[test]
fn four_concurrent_trickled_operations_each_hold_their_thread_at_most_the_timeout() {
    let s = Arc::new(store(fake(Trickle::Commands { gap: GAP })));
    let t = Instant::now();
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let s = Arc::clone(&s);
            std::thread::spawn(move || {
                let t = Instant::now();
                let out = s.take_token("t", now_ms());
                (t.elapsed(), out)
            })
        })
        .collect();
    for (i, th) in threads.into_iter().enumerate() {
        let (took, out) = th.join().unwrap();
        assert_bounded(&format!("operation {i}"), took, out);
    }
    assert!(t.elapsed() < bound(), "all four: {:?}", t.elapsed());
}

#[test]
fn a_trickled_handshake_fails_within_the_timeout() {
    // connecting is part of the operation: a peer trickling the replies to the connection's
    // setup cannot hold the thread past the deadline either
    let s = store(fake(Trickle::All { gap: GAP }));
    let t = Instant::now();
    let out = s.take_token("t", now_ms());
    assert_bounded("a trickled connect", t.elapsed(), out);
}

#[test]
fn the_gate_refuses_a_trickled_decision_state_unavailable() {
    let g = gate(fake(Trickle::Commands { gap: GAP }));
    let t = Instant::now();
    let v = g.check("post", "{}");
    let took = t.elapsed();
    assert!(!v.allowed(), "fails closed: {v:?}");
    assert_eq!(v.reason, Some(Reason::StateUnavailable), "{v:?}");
    assert!(took < bound(), "took {took:?}");
}

#[test]
fn a_host_name_is_resolved_within_the_deadline_then_used() {
    // resolved on the store's helper thread (src/resolve.rs), then connected as an address is
    let port = fake(Trickle::Nothing);
    let named = RedisStore::new(&RedisConfig { url: format!("redis://localhost:{port}"), key_prefix: "dl:".into(), timeout_ms: 2000 }).unwrap();
    assert_eq!(named.take_token("t", now_ms()).unwrap(), None);
    // a name that cannot exist (RFC 6761) is a state error naming the lookup, never a pass
    let missing = RedisStore::new(&RedisConfig { url: "redis://no-such-host.invalid:6379".into(), key_prefix: "dl:".into(), timeout_ms: 2000 }).unwrap();
    let e = missing.take_token("t", now_ms()).expect_err("no such host");
    assert!(e.0.contains("resolving its host name"), "{e}");
}
