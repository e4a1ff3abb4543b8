//! The bounded in-memory [`StateStore`]: the default, per process.

use std::fmt;
use std::sync::{Mutex, MutexGuard, PoisonError};

use super::pending::Pending;
use super::seed::random_seeds;
use super::sessions::Sessions;
use super::{Level, PendingConfirm, StateStore, EVICTED};

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
/// - **Tokens**: at most `max_sessions` pending confirmations; when full the soonest-expiring
///   (expired first, ties: oldest) is dropped, and is unknown afterwards. Expired tokens are
///   purged as tokens are taken.
///
/// Two `std::sync::Mutex`es (sessions, tokens), each held for one short operation; a poisoned
/// lock is recovered, never a panic. `Debug` never prints tokens or scopes.
pub struct MemoryStore {
    max_sessions: usize,
    sessions: Mutex<Sessions>,
    tokens: Mutex<Pending>,
}

impl MemoryStore {
    /// An empty store holding at most `max_sessions` sessions and as many pending
    /// confirmations (`0` is treated as `1`). Allocates nothing up front.
    pub fn new(max_sessions: usize) -> MemoryStore {
        let max_sessions = max_sessions.max(1);
        MemoryStore {
            max_sessions,
            sessions: Mutex::new(Sessions::new(max_sessions, random_seeds())),
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
        self.sessions().false_taint_rate()
    }

    fn sessions(&self) -> MutexGuard<'_, Sessions> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn tokens(&self) -> MutexGuard<'_, Pending> {
        self.tokens.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl StateStore for MemoryStore {
    fn loop_count(&self, scope: &str, key: u128, since_ms: u64) -> u32 {
        self.sessions().get(scope).map_or(0, |s| s.loops.count(key, since_ms))
    }

    fn loop_record(&self, scope: &str, key: u128, now_ms: u64, keep: u32) {
        self.sessions().get_or_insert(scope).loops.record(key, now_ms, keep);
    }

    fn taint(&self, scope: &str) -> Level {
        let mut sessions = self.sessions();
        if let Some(s) = sessions.get(scope) {
            return s.taint;
        }
        if sessions.was_evicted(scope) {
            EVICTED
        } else {
            0
        }
    }

    fn raise_taint(&self, scope: &str, level: Level) {
        let mut sessions = self.sessions();
        let session = sessions.get_or_insert(scope);
        session.taint = session.taint.max(level);
    }

    fn put_token(&self, token: &str, pending: PendingConfirm) {
        self.tokens().put(token, pending);
    }

    fn take_token(&self, token: &str, now_ms: u64) -> Option<PendingConfirm> {
        self.tokens().take(token, now_ms)
    }
}

impl fmt::Debug for MemoryStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryStore")
            .field("max_sessions", &self.max_sessions)
            .field("sessions", &self.sessions().len())
            .field("tokens", &self.tokens().len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::Arc;

    fn confirm(expires_ms: u64) -> PendingConfirm {
        PendingConfirm { tool: "w".into(), arguments: json!({}), subject: None, scope: "s".into(), expires_ms, flags: Vec::new() }
    }

    #[test]
    fn taint_rises_never_lowers() {
        let s = MemoryStore::new(10);
        assert_eq!(s.taint("a"), 0);
        s.raise_taint("a", 2);
        s.raise_taint("a", 1);
        assert_eq!(s.taint("a"), 2);
        s.raise_taint("a", EVICTED);
        s.raise_taint("a", 0);
        assert_eq!(s.taint("a"), EVICTED);
    }

    #[test]
    fn reads_do_not_create_sessions() {
        let s = MemoryStore::new(2);
        s.raise_taint("a", 1);
        s.raise_taint("b", 1);
        for i in 0..100 {
            assert_eq!(s.taint(&format!("x{i}")), 0);
            assert_eq!(s.loop_count(&format!("x{i}"), 1, 0), 0);
        }
        assert_eq!((s.taint("a"), s.taint("b")), (1, 1));
        assert_eq!(s.false_taint_rate(), 0.0);
    }

    #[test]
    fn evicted_scope_reads_evicted_forever() {
        let s = MemoryStore::new(100);
        for i in 0..10_000 {
            s.raise_taint(&format!("s{i}"), 0);
            s.loop_record(&format!("s{i}"), 1, 5, 3);
        }
        for i in 0..9_900 {
            assert_eq!(s.taint(&format!("s{i}")), EVICTED, "s{i}");
        }
        for i in 9_900..10_000 {
            assert_eq!(s.loop_count(&format!("s{i}"), 1, 0), 1);
        }
        // Seen again: stored taint starts (and stays) at EVICTED, counts restart.
        s.loop_record("s0", 1, 6, 3);
        assert_eq!(s.taint("s0"), EVICTED);
        assert_eq!(s.loop_count("s0", 1, 0), 1);
        s.raise_taint("s0", 1);
        assert_eq!(s.taint("s0"), EVICTED);
        assert!(s.false_taint_rate() > 0.0);
    }

    #[test]
    fn loop_window_and_keep() {
        let s = MemoryStore::new(10);
        for t in [100, 200, 300, 400] {
            s.loop_record("a", 9, t, 3);
        }
        assert_eq!(s.loop_count("a", 9, 0), 3);
        assert_eq!(s.loop_count("a", 9, 300), 2);
        assert_eq!(s.loop_count("a", 8, 0), 0);
        assert_eq!(s.loop_count("b", 9, 0), 0);
    }

    #[test]
    fn tokens_once_and_expiring() {
        let s = MemoryStore::new(2);
        s.put_token("t1", confirm(1000));
        assert_eq!(s.take_token("t1", 999), Some(confirm(1000)));
        assert_eq!(s.take_token("t1", 999), None);
        s.put_token("t2", confirm(1000));
        assert_eq!(s.take_token("t2", 1000), None);
        for t in ["a", "b", "c"] {
            s.put_token(t, confirm(5000));
        }
        assert_eq!(s.take_token("a", 0), None, "dropped when full");
        assert!(s.take_token("b", 0).is_some() && s.take_token("c", 0).is_some());
    }

    #[test]
    fn debug_hides_secrets() {
        let s = MemoryStore::new(4);
        s.put_token("secret-token", confirm(10));
        s.raise_taint("secret-scope", 1);
        let d = format!("{s:?}");
        assert!(!d.contains("secret"), "{d}");
        assert_eq!(d, "MemoryStore { max_sessions: 4, sessions: 1, tokens: 1 }");
    }

    #[test]
    fn shared_by_four_threads() {
        let s: Arc<dyn StateStore> = Arc::new(MemoryStore::new(1000));
        for i in 0..1000 {
            s.put_token(&format!("t{i}"), confirm(u64::MAX));
        }
        let workers: Vec<_> = (0..4)
            .map(|w| {
                let s = Arc::clone(&s);
                std::thread::spawn(move || {
                    let mut taken = 0;
                    for i in 0..1000u64 {
                        s.loop_record("shared", 1, i, 10_000);
                        s.loop_record(&format!("own{w}"), 2, i, 10_000);
                        s.raise_taint("shared", (w + 1) as Level);
                        s.loop_record(&format!("churn{w}-{i}"), 3, i, 1);
                        taken += usize::from(s.take_token(&format!("t{i}"), 0).is_some());
                    }
                    taken
                })
            })
            .collect();
        let taken: usize = workers.into_iter().map(|w| w.join().unwrap()).sum();
        assert_eq!(taken, 1000, "each token taken exactly once");
        let (count, taint) = (s.loop_count("shared", 1, 0), s.taint("shared"));
        // Every iteration touches "shared", so the churn (at most 8 inserts between touches)
        // never evicts it.
        assert_eq!((count, taint), (4000, 4));
    }

    #[test]
    fn poisoned_lock_is_recovered() {
        let s = Arc::new(MemoryStore::new(4));
        s.raise_taint("a", 1);
        let s2 = Arc::clone(&s);
        let _ = std::thread::spawn(move || {
            let _guard = s2.sessions.lock().unwrap();
            panic!("poison");
        })
        .join();
        assert!(s.sessions.is_poisoned());
        assert_eq!(s.taint("a"), 1);
        s.raise_taint("a", 2);
        assert_eq!(s.taint("a"), 2);
    }
}
