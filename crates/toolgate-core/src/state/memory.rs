//! The bounded in-memory [`StateStore`]: the default, per process.

use std::fmt;
use std::sync::{Mutex, MutexGuard, PoisonError};

use super::names::Names;
use super::pending::Pending;
use super::rate::Rates;
use super::seed::random_seeds;
use super::sessions::Sessions;
use super::settle::{Observed, Settle};
use super::{Level, PendingConfirm, StateError, StateStore, EVICTED};

/// The default [`StateStore`]: everything in memory, bounded by `max_sessions`.
///
/// - **Sessions** (a scope's taint and loop counters): at most `max_sessions`, least recently
///   used forgotten first. Each holds at most 1024 call keys (the stalest forgotten first) and
///   at most `keep` timestamps per key.
/// - **Eviction fails closed.** Forgotten scopes go into a fixed-size Bloom filter (32 bits per
///   session rounded up to a power of two, at most 256 MiB, allocated on the first eviction;
///   3 positions from `ahash` with random per-store seeds). A forgotten scope reads as
///   [`EVICTED`] forever, and if it is used again its stored taint starts at [`EVICTED`]
///   (sticky). A false positive only makes a never-seen scope read as [`EVICTED`]: over-strict,
///   never lax. That rate grows with the evictions over the process's life (1% after ~2.6 ×
///   `max_sessions` evictions): [`MemoryStore::false_taint_rate`] reports it. Loop counters of a
///   forgotten scope are lost (its counts restart).
/// - **Taint is kept by label name** (see [`Level`]): a store shared across a reload that
///   changes `labels` reads each session's taint in the new labels, at the place of the names
///   it was raised to; a name no longer there reads as [`EVICTED`]. At most 4096 distinct names
///   per store (over every config it served); past that a raise to a new name reads as the top.
/// - **Tokens**: at most `max_sessions` pending confirmations; when full the soonest-expiring
///   (expired first, ties: oldest) is dropped, and is unknown afterwards. Expired tokens are
///   purged as tokens are taken.
/// - **Rate counters**: one fixed-window count per limit and caller, at most `max_sessions`;
///   when full, the counter whose window ends soonest is forgotten (its count restarts).
///
/// Never fails. Two `std::sync::Mutex`es (sessions with rate counters, tokens), each held for one
/// short operation, so a [`StateStore::settle`] is atomic across threads; a poisoned lock is
/// recovered, never a panic. `Debug` never prints tokens or scopes.
pub struct MemoryStore {
    max_sessions: usize,
    sessions: Mutex<(Sessions, Rates, Names)>,
    tokens: Mutex<Pending>,
}

impl MemoryStore {
    /// An empty store holding at most `max_sessions` sessions and as many pending
    /// confirmations (`0` is treated as `1`). Allocates nothing up front.
    pub fn new(max_sessions: usize) -> MemoryStore {
        let max_sessions = max_sessions.max(1);
        MemoryStore {
            max_sessions,
            sessions: Mutex::new((Sessions::new(max_sessions, random_seeds()), Rates::new(max_sessions), Names::default())),
            tokens: Mutex::new(Pending::new(max_sessions, random_seeds())),
        }
    }

    /// The bound given to [`MemoryStore::new`] (at least 1).
    pub fn max_sessions(&self) -> usize {
        self.max_sessions
    }

    /// The probability, now, that a scope never seen reads as [`EVICTED`] because of the
    /// eviction filter (0 until the first eviction). For monitoring: when it climbs, raise
    /// `state.maxSessions` or restart the process.
    pub fn false_taint_rate(&self) -> f64 {
        self.sessions().0.false_taint_rate()
    }

    fn sessions(&self) -> MutexGuard<'_, (Sessions, Rates, Names)> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn tokens(&self) -> MutexGuard<'_, Pending> {
        self.tokens.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl MemoryStore {
    fn taint_of(sessions: &mut Sessions, names: &Names, scope: &str, labels: &[String]) -> Level {
        if let Some(s) = sessions.get(scope) {
            return names.level(&s.taint, labels);
        }
        if sessions.was_evicted(scope) {
            EVICTED
        } else {
            0
        }
    }
}

impl StateStore for MemoryStore {
    fn settle(&self, q: &Settle<'_>) -> Result<Observed, StateError> {
        let mut guard = self.sessions();
        let (sessions, rates, names) = &mut *guard;
        let mut o = Observed::default();
        if let Some(l) = q.loop_check {
            o.loop_seen = sessions.get(q.scope).map_or(0, |s| s.loops.count(l.key, l.since_ms));
        }
        if q.sink_max.is_some() {
            o.taint = Self::taint_of(sessions, names, q.scope, q.labels);
        }
        o.rates = q.rates.iter().map(|r| rates.seen(&r.key, q.now_ms, r.window_ms)).collect();
        if q.records(&o) {
            let session = sessions.get_or_insert(q.scope);
            if let Some(l) = q.loop_check {
                session.loops.record(l.key, q.now_ms, l.keep);
            }
            if let Some(level) = q.raise {
                names.raise(&mut session.taint, level, q.labels);
            }
            for r in &q.rates {
                rates.add(&r.key, q.now_ms, r.window_ms);
            }
            o.recorded = true;
        }
        Ok(o)
    }

    fn taint(&self, scope: &str, labels: &[String]) -> Result<Level, StateError> {
        let mut guard = self.sessions();
        let (sessions, _, names) = &mut *guard;
        Ok(Self::taint_of(sessions, names, scope, labels))
    }

    fn raise_taint(&self, scope: &str, level: Level, labels: &[String]) -> Result<(), StateError> {
        let mut guard = self.sessions();
        let (sessions, _, names) = &mut *guard;
        names.raise(&mut sessions.get_or_insert(scope).taint, level, labels);
        Ok(())
    }

    fn put_token(&self, token: &str, pending: PendingConfirm) -> Result<(), StateError> {
        self.tokens().put(token, pending);
        Ok(())
    }

    fn take_token(&self, token: &str, now_ms: u64) -> Result<Option<PendingConfirm>, StateError> {
        Ok(self.tokens().take(token, now_ms))
    }
}

impl fmt::Debug for MemoryStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryStore")
            .field("max_sessions", &self.max_sessions)
            .field("sessions", &self.sessions().0.len())
            .field("tokens", &self.tokens().len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::{LoopCheck, RateCheck};
    use serde_json::json;
    use std::sync::{Arc, LazyLock};

    static LABELS: LazyLock<Vec<String>> = LazyLock::new(|| (0..5).map(|i| format!("l{i}")).collect());

    fn loop_count(s: &dyn StateStore, scope: &str, key: u128, since_ms: u64) -> u32 {
        let q = Settle {
            scope,
            labels: &LABELS,
            now_ms: 0,
            loop_check: Some(LoopCheck { key, since_ms, max: u32::MAX, keep: 0, window_ms: 0 }),
            sink_max: None,
            rates: Vec::new(),
            record: false,
            enforce: true,
            raise: None,
        };
        s.settle(&q).unwrap().loop_seen
    }

    fn loop_record(s: &dyn StateStore, scope: &str, key: u128, now_ms: u64, keep: u32) {
        let q = Settle {
            scope,
            labels: &LABELS,
            now_ms,
            loop_check: Some(LoopCheck { key, since_ms: 0, max: u32::MAX, keep, window_ms: 0 }),
            sink_max: None,
            rates: Vec::new(),
            record: true,
            enforce: false,
            raise: None,
        };
        assert!(s.settle(&q).unwrap().recorded);
    }

    fn confirm(expires_ms: u64) -> PendingConfirm {
        PendingConfirm { tool: "w".into(), arguments: json!({}), subject: None, scope: "s".into(), expires_ms, flags: Vec::new() }
    }

    #[test]
    fn taint_rises_never_lowers() {
        let s = MemoryStore::new(10);
        assert_eq!(s.taint("a", &LABELS).unwrap(), 0);
        s.raise_taint("a", 2, &LABELS).unwrap();
        s.raise_taint("a", 1, &LABELS).unwrap();
        assert_eq!(s.taint("a", &LABELS).unwrap(), 2);
        s.raise_taint("a", EVICTED, &LABELS).unwrap();
        s.raise_taint("a", 0, &LABELS).unwrap();
        assert_eq!(s.taint("a", &LABELS).unwrap(), EVICTED);
    }

    /// Reviewer: a store shared across a reload read a taint raised to `secret` (position 1 of
    /// `["public","secret"]`) as `internal` once a label was inserted below it.
    #[test]
    fn taint_is_read_by_name_in_the_labels_of_the_read() {
        let labels = |names: &[&str]| names.iter().map(|&n| n.to_owned()).collect::<Vec<_>>();
        let (old, new) = (labels(&["public", "secret"]), labels(&["public", "internal", "secret"]));
        let s = MemoryStore::new(10);
        s.raise_taint("a", 1, &old).unwrap();
        assert_eq!(s.taint("a", &new).unwrap(), 2);
        let sink =
            Settle { scope: "a", labels: &new, now_ms: 1, loop_check: None, sink_max: Some(1), rates: Vec::new(), record: true, enforce: true, raise: None };
        let o = s.settle(&sink).unwrap();
        assert_eq!((o.taint, o.recorded), (2, false), "an `internal` sink is refused");
        // raised by a decision, read after the labels were reordered, renamed or removed
        let q = Settle { scope: "b", raise: Some(1), sink_max: None, labels: &old, ..sink.clone() };
        assert!(s.settle(&q).unwrap().recorded);
        assert_eq!(s.taint("b", &labels(&["internal", "secret", "public"])).unwrap(), 1);
        assert_eq!(s.taint("b", &labels(&["public", "internal"])).unwrap(), EVICTED, "secret removed: the top");
        assert_eq!(s.taint("b", &[]).unwrap(), EVICTED);
        assert_eq!(s.taint("clean", &new).unwrap(), 0);
    }

    #[test]
    fn reads_do_not_create_sessions() {
        let s = MemoryStore::new(2);
        s.raise_taint("a", 1, &LABELS).unwrap();
        s.raise_taint("b", 1, &LABELS).unwrap();
        for i in 0..100 {
            assert_eq!(s.taint(&format!("x{i}"), &LABELS).unwrap(), 0);
            assert_eq!(loop_count(&s, &format!("x{i}"), 1, 0), 0);
        }
        assert_eq!((s.taint("a", &LABELS).unwrap(), s.taint("b", &LABELS).unwrap()), (1, 1));
        assert_eq!(s.false_taint_rate(), 0.0);
    }

    #[test]
    fn evicted_scope_reads_evicted_forever() {
        let s = MemoryStore::new(100);
        for i in 0..10_000 {
            s.raise_taint(&format!("s{i}"), 0, &LABELS).unwrap();
            loop_record(&s, &format!("s{i}"), 1, 5, 3);
        }
        for i in 0..9_900 {
            assert_eq!(s.taint(&format!("s{i}"), &LABELS).unwrap(), EVICTED, "s{i}");
        }
        for i in 9_900..10_000 {
            assert_eq!(loop_count(&s, &format!("s{i}"), 1, 0), 1);
        }
        // Seen again: stored taint starts (and stays) at EVICTED, counts restart.
        loop_record(&s, "s0", 1, 6, 3);
        assert_eq!(s.taint("s0", &LABELS).unwrap(), EVICTED);
        assert_eq!(loop_count(&s, "s0", 1, 0), 1);
        s.raise_taint("s0", 1, &LABELS).unwrap();
        assert_eq!(s.taint("s0", &LABELS).unwrap(), EVICTED);
        assert!(s.false_taint_rate() > 0.0);
    }

    #[test]
    fn loop_window_and_keep() {
        let s = MemoryStore::new(10);
        for t in [100, 200, 300, 400] {
            loop_record(&s, "a", 9, t, 3);
        }
        assert_eq!(loop_count(&s, "a", 9, 0), 3);
        assert_eq!(loop_count(&s, "a", 9, 300), 2);
        assert_eq!(loop_count(&s, "a", 8, 0), 0);
        assert_eq!(loop_count(&s, "b", 9, 0), 0);
    }

    #[test]
    fn tokens_once_and_expiring() {
        let s = MemoryStore::new(2);
        s.put_token("t1", confirm(1000)).unwrap();
        assert_eq!(s.take_token("t1", 999).unwrap(), Some(confirm(1000)));
        assert_eq!(s.take_token("t1", 999).unwrap(), None);
        s.put_token("t2", confirm(1000)).unwrap();
        assert_eq!(s.take_token("t2", 1000).unwrap(), None);
        for t in ["a", "b", "c"] {
            s.put_token(t, confirm(5000)).unwrap();
        }
        assert_eq!(s.take_token("a", 0).unwrap(), None, "dropped when full");
        assert!(s.take_token("b", 0).unwrap().is_some() && s.take_token("c", 0).unwrap().is_some());
    }

    #[test]
    fn debug_hides_secrets() {
        let s = MemoryStore::new(4);
        s.put_token("secret-token", confirm(10)).unwrap();
        s.raise_taint("secret-scope", 1, &LABELS).unwrap();
        let d = format!("{s:?}");
        assert!(!d.contains("secret"), "{d}");
        assert_eq!(d, "MemoryStore { max_sessions: 4, sessions: 1, tokens: 1 }");
    }

    #[test]
    fn shared_by_four_threads() {
        let s: Arc<dyn StateStore> = Arc::new(MemoryStore::new(1000));
        for i in 0..1000 {
            s.put_token(&format!("t{i}"), confirm(u64::MAX)).unwrap();
        }
        let workers: Vec<_> = (0..4)
            .map(|w| {
                let s = Arc::clone(&s);
                std::thread::spawn(move || {
                    let mut taken = 0;
                    for i in 0..1000u64 {
                        loop_record(&*s, "shared", 1, i, 10_000);
                        loop_record(&*s, &format!("own{w}"), 2, i, 10_000);
                        s.raise_taint("shared", (w + 1) as Level, &LABELS).unwrap();
                        loop_record(&*s, &format!("churn{w}-{i}"), 3, i, 1);
                        taken += usize::from(s.take_token(&format!("t{i}"), 0).unwrap().is_some());
                    }
                    taken
                })
            })
            .collect();
        let taken: usize = workers.into_iter().map(|w| w.join().unwrap()).sum();
        assert_eq!(taken, 1000, "each token taken exactly once");
        let (count, taint) = (loop_count(&*s, "shared", 1, 0), s.taint("shared", &LABELS).unwrap());
        // Every iteration touches "shared", so the churn (at most 8 inserts between touches)
        // never evicts it.
        assert_eq!((count, taint), (4000, 4));
    }

    #[test]
    fn settle_counts_only_admitted_calls() {
        let s = MemoryStore::new(10);
        let q = |now_ms, record| Settle {
            scope: "a",
            labels: &LABELS,
            now_ms,
            loop_check: None,
            sink_max: None,
            rates: vec![RateCheck { key: "r".into(), window_ms: 1000, max: 2 }],
            record,
            enforce: true,
            raise: Some(1),
        };
        assert!(!s.settle(&q(10, false)).unwrap().recorded, "a read records nothing");
        assert!(s.settle(&q(10, true)).unwrap().recorded);
        assert!(s.settle(&q(20, true)).unwrap().recorded);
        let over = s.settle(&q(30, true)).unwrap();
        assert_eq!((over.recorded, over.rates[0].count, over.rates[0].reset_ms), (false, 2, 1000));
        assert_eq!(s.settle(&q(40, true)).unwrap().rates[0].count, 2, "a refused call is not counted");
        assert!(s.settle(&q(1000, true)).unwrap().recorded, "a new window");
        assert_eq!(s.taint("a", &LABELS).unwrap(), 1, "taint raised with the record");
    }

    #[test]
    fn rate_limit_exact_under_four_threads() {
        let s: Arc<dyn StateStore> = Arc::new(MemoryStore::new(100));
        let admitted: usize = (0..4)
            .map(|_| {
                let s = Arc::clone(&s);
                std::thread::spawn(move || {
                    let q = Settle {
                        scope: "x",
                        labels: &LABELS,
                        now_ms: 5,
                        loop_check: None,
                        sink_max: None,
                        rates: vec![RateCheck { key: "r".into(), window_ms: 1_000_000, max: 250 }],
                        record: true,
                        enforce: true,
                        raise: None,
                    };
                    (0..1000).filter(|_| s.settle(&q).unwrap().recorded).count()
                })
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|w| w.join().unwrap())
            .sum();
        assert_eq!(admitted, 250);
    }

    #[test]
    fn poisoned_lock_is_recovered() {
        let s = Arc::new(MemoryStore::new(4));
        s.raise_taint("a", 1, &LABELS).unwrap();
        let s2 = Arc::clone(&s);
        let _ = std::thread::spawn(move || {
            let _guard = s2.sessions.lock().unwrap();
            panic!("poison");
        })
        .join();
        assert!(s.sessions.is_poisoned());
        assert_eq!(s.taint("a", &LABELS).unwrap(), 1);
        s.raise_taint("a", 2, &LABELS).unwrap();
        assert_eq!(s.taint("a", &LABELS).unwrap(), 2);
    }
}
