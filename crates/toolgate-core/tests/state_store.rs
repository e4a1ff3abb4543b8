//! The gate over a state store that can fail, and rate limits, with a controlled clock: a store
//! that cannot answer refuses (`state_unavailable`), never allows; rate limits count only allowed
//! calls and say when to retry.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use toolgate_core::state::{Level, MemoryStore, Observed, PendingConfirm, Settle, StateError, StateStore};
use toolgate_core::time::Clock;
use toolgate_core::{CallContext, Gate, Outcome, Reason, Stage};

/// A memory store that fails every operation while `down` is set.
#[derive(Debug)]
struct Flaky {
    inner: MemoryStore,
    down: AtomicBool,
}

impl Flaky {
    fn up(&self) -> Result<(), StateError> {
        if self.down.load(Ordering::SeqCst) {
            Err(StateError("connection refused".into()))
        } else {
            Ok(())
        }
    }
}

impl StateStore for Flaky {
    fn settle(&self, q: &Settle<'_>) -> Result<Observed, StateError> {
        self.up()?;
        self.inner.settle(q)
    }
    fn taint(&self, scope: &str, labels: &[String]) -> Result<Level, StateError> {
        self.up()?;
        self.inner.taint(scope, labels)
    }
    fn raise_taint(&self, scope: &str, level: Level, labels: &[String]) -> Result<(), StateError> {
        self.up()?;
        self.inner.raise_taint(scope, level, labels)
    }
    fn put_token(&self, token: &str, p: PendingConfirm) -> Result<(), StateError> {
        self.up()?;
        self.inner.put_token(token, p)
    }
    fn take_token(&self, token: &str, now_ms: u64) -> Result<Option<PendingConfirm>, StateError> {
        self.up()?;
        self.inner.take_token(token, now_ms)
    }
}

const CONFIG: &str = r#"{
  "labels": ["public", "secret"],
  "tools": [
    { "name": "read_secret", "output": { "label": "secret" } },
    { "name": "post", "sink": { "maxLabel": "public" } },
    { "name": "search", "loop": { "maxIdentical": 2, "windowSeconds": 60 } },
    { "name": "send_mail", "writes": true },
    { "name": "free" }
  ],
  "rateLimits": [
    { "tools": ["search", "send_*", "post"], "per": "subject", "max": 3, "windowSeconds": 60 }
  ]
}"#;

fn gate(store: Arc<dyn StateStore>) -> (Gate, Arc<AtomicU64>) {
    // 10 s into a 60 s window
    let now = Arc::new(AtomicU64::new(1_800_000_010_000));
    let n = Arc::clone(&now);
    let g = Gate::from_json(CONFIG).unwrap().with_clock(Clock::from_fn(move || n.load(Ordering::SeqCst))).with_store(store);
    (g, now)
}

fn who(subject: &str, session: &str) -> CallContext {
    CallContext::from_json(&format!(r#"{{"subject":"{subject}","session":"{session}"}}"#)).unwrap()
}

#[test]
fn a_rate_limit_counts_allowed_calls_per_subject_and_says_when_to_retry() {
    let (g, now) = gate(Arc::new(MemoryStore::new(100)));
    let alice = who("alice", "s1");
    let alice2 = who("alice", "s2");
    let check = |tool: &str, args: &str, c: &CallContext| g.check_as(tool, args, &g.who(c, Stage::Full));
    assert!(check("search", r#"{"q":1}"#, &alice).arguments.is_some());
    assert!(check("search", r#"{"q":2}"#, &alice2).arguments.is_some(), "per subject: other sessions share the count");
    // refused by the loop guard? no: different args. A confirmation request does not count.
    assert_eq!(check("send_mail", r#"{}"#, &alice).outcome, Outcome::Confirm);
    g.raise_for_test();
    assert!(check("post", r#"{"x":1}"#, &who("alice", "tainted")).outcome == Outcome::Denied, "taint refusal, not counted");
    assert!(check("search", r#"{"q":3}"#, &alice).arguments.is_some(), "third allowed call");
    let v = check("search", r#"{"q":4}"#, &alice);
    assert_eq!((v.outcome, v.reason), (Outcome::Denied, Some(Reason::RateLimited)));
    let m = v.message.unwrap();
    assert!(m.contains("at most 3 calls per 60 seconds") && m.contains("again in 50 seconds"), "{m}");
    assert!(check("search", r#"{"q":5}"#, &who("bob", "s9")).arguments.is_some(), "bob has his own count");
    assert!(check("free", r#"{}"#, &alice).arguments.is_some(), "an unlimited tool");
    now.fetch_add(50_000, Ordering::SeqCst);
    assert!(check("search", r#"{"q":6}"#, &alice).arguments.is_some(), "a new window");
}

trait RaiseForTest {
    fn raise_for_test(&self);
}
impl RaiseForTest for Gate {
    fn raise_for_test(&self) {
        self.mark_session("tainted", "secret").unwrap();
    }
}

#[test]
fn an_unreachable_store_refuses_everything_stateful_and_recovers() {
    let flaky = Arc::new(Flaky { inner: MemoryStore::new(100), down: AtomicBool::new(false) });
    let (g, _) = gate(Arc::clone(&flaky) as Arc<dyn StateStore>);
    let alice = who("alice", "s1");
    let w = || g.who(&alice, Stage::Full);
    let token = g.check_as("send_mail", "{}", &w()).confirmation.unwrap().token;
    assert!(g.check_as("read_secret", "{}", &w()).arguments.is_some());
    flaky.down.store(true, Ordering::SeqCst);
    for (tool, args) in [("search", r#"{"q":1}"#), ("read_secret", "{}"), ("post", "{}"), ("send_mail", "{}")] {
        let v = g.check_as(tool, args, &w());
        assert_eq!((v.outcome, v.reason), (Outcome::Denied, Some(Reason::StateUnavailable)), "{tool}");
        assert!(v.message.unwrap().contains("shared state could not be reached"));
    }
    assert!(g.check_as("free", "{}", &w()).arguments.is_some(), "a call that needs no state still runs");
    let (_, v) = g.confirm(&token, &w());
    assert_eq!(v.reason, Some(Reason::StateUnavailable));
    let e = g.mark_session("s1", "secret").unwrap_err();
    assert_eq!(e.code(), "E_STATE");
    flaky.down.store(false, Ordering::SeqCst);
    assert_eq!(g.check_as("post", "{}", &w()).reason, Some(Reason::Taint), "the taint raised before the outage holds");
    let (_, v) = g.confirm(&token, &w());
    assert!(v.arguments.is_some(), "the token survived the outage: {v:?}");
}

#[test]
fn shadow_mode_lets_a_rate_limited_call_through_and_says_so() {
    let cfg = CONFIG.replacen('{', r#"{ "mode": "shadow","#, 1);
    let g = Gate::from_json(&cfg).unwrap();
    let alice = who("alice", "s1");
    for i in 0..3 {
        assert!(!g.check_as("search", &format!(r#"{{"q":{i}}}"#), &g.who(&alice, Stage::Full)).shadow);
    }
    let v = g.check_as("search", r#"{"q":9}"#, &g.who(&alice, Stage::Full));
    assert!(v.arguments.is_some() && v.shadow && v.would_be == Some(Reason::RateLimited), "{v:?}");
}

#[test]
fn rate_limits_are_checked_against_declared_tools() {
    let bad = CONFIG.replace(r#""send_*", "post""#, r#""snd_*""#);
    let e = Gate::from_json(&bad).unwrap_err();
    assert!(e.to_string().contains("rateLimits[0].tools[1]"), "{e}");
    let bad = CONFIG.replace(r#""per": "subject""#, r#""per": "tenant""#);
    assert!(Gate::from_json(&bad).is_err());
}

/// A reload keeps the process's store (`GateState`) and builds gates with the new config: a label
/// inserted below `secret` must not turn a session that read secret data into `internal`
/// (reviewer: labels_reorder_memory.js; the stored taint was the position 1).
#[test]
fn a_reload_that_inserts_a_label_keeps_the_taint_at_its_name() {
    let store: Arc<dyn StateStore> = Arc::new(MemoryStore::new(100));
    let v1 = Gate::from_json(
        r#"{ "labels": ["public", "secret"], "tools": [
          { "name": "read_secret", "output": { "label": "secret" } }, { "name": "post", "sink": { "maxLabel": "public" } } ] }"#,
    )
    .unwrap()
    .with_store(Arc::clone(&store));
    let v2 = Gate::from_json(
        r#"{ "labels": ["public", "internal", "secret"], "tools": [
          { "name": "read_secret", "output": { "label": "secret" } }, { "name": "share_internal", "sink": { "maxLabel": "internal" } } ] }"#,
    )
    .unwrap()
    .with_store(Arc::clone(&store));
    let v3 = Gate::from_json(
        r#"{ "labels": ["public", "internal", "confidential"], "tools": [
          { "name": "share_internal", "sink": { "maxLabel": "internal" } } ] }"#,
    )
    .unwrap()
    .with_store(Arc::clone(&store));
    let alice = who("alice", "a1");
    assert!(v1.check_as("read_secret", "{}", &v1.who(&alice, Stage::Full)).arguments.is_some());
    let v = v2.check_as("share_internal", "{}", &v2.who(&alice, Stage::Full));
    assert_eq!((v.outcome, v.reason), (Outcome::Denied, Some(Reason::Taint)), "{v:?}");
    assert!(v.message.unwrap().contains("`secret`"));
    // `secret` renamed away: the name is unknown, read as the top label
    let v = v3.check_as("share_internal", "{}", &v3.who(&alice, Stage::Full));
    assert_eq!((v.outcome, v.reason), (Outcome::Denied, Some(Reason::Taint)), "{v:?}");
    // a clean session is not affected
    let bob = who("bob", "b1");
    assert!(v2.check_as("share_internal", "{}", &v2.who(&bob, Stage::Full)).arguments.is_some());
}
