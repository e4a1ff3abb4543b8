//! In-memory rate-limit counters: one fixed-window count per counter key, bounded.

use std::collections::{BTreeMap, HashMap};

use super::settle::{window_start, RateSeen};

/// Fixed-window counters, at most `cap` of them. When full, the counter whose window ends
/// soonest (an expired one first) is forgotten; a forgotten counter restarts at 0, so the bound
/// is documented as a limit (it holds as many live counters as `state.maxSessions`).
#[derive(Debug)]
pub(crate) struct Rates {
    cap: usize,
    counters: HashMap<String, Counter>,
    /// (window end, sequence) → key: the eviction order.
    by_end: BTreeMap<(u64, u64), String>,
    seq: u64,
}

#[derive(Debug, Clone, Copy)]
struct Counter {
    start: u64,
    end: u64,
    seq: u64,
    count: u32,
}

impl Rates {
    pub(crate) fn new(cap: usize) -> Rates {
        Rates { cap: cap.max(1), counters: HashMap::new(), by_end: BTreeMap::new(), seq: 0 }
    }

    /// The count of `key`'s window holding `now_ms` and when that window ends.
    pub(crate) fn seen(&self, key: &str, now_ms: u64, window_ms: u64) -> RateSeen {
        let start = window_start(now_ms, window_ms);
        let end = start.saturating_add(window_ms.max(1));
        let count = self.counters.get(key).filter(|c| c.start == start).map_or(0, |c| c.count);
        RateSeen { count, reset_ms: end }
    }

    /// Counts one call on `key` in the window holding `now_ms`.
    pub(crate) fn add(&mut self, key: &str, now_ms: u64, window_ms: u64) {
        let start = window_start(now_ms, window_ms);
        let end = start.saturating_add(window_ms.max(1));
        if let Some(c) = self.counters.get_mut(key) {
            if c.start == start {
                c.count = c.count.saturating_add(1);
                return;
            }
            self.by_end.remove(&(c.end, c.seq));
            self.seq += 1;
            *c = Counter { start, end, seq: self.seq, count: 1 };
            self.by_end.insert((end, self.seq), key.to_owned());
            return;
        }
        while self.counters.len() >= self.cap {
            let Some((_, old)) = self.by_end.pop_first() else { break };
            self.counters.remove(&old);
        }
        self.seq += 1;
        self.counters.insert(key.to_owned(), Counter { start, end, seq: self.seq, count: 1 });
        self.by_end.insert((end, self.seq), key.to_owned());
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.counters.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_per_window() {
        let mut r = Rates::new(10);
        r.add("a", 1_000, 1_000);
        r.add("a", 1_999, 1_000);
        assert_eq!(r.seen("a", 1_500, 1_000), RateSeen { count: 2, reset_ms: 2_000 });
        assert_eq!(r.seen("a", 2_000, 1_000), RateSeen { count: 0, reset_ms: 3_000 });
        r.add("a", 2_000, 1_000);
        assert_eq!(r.seen("a", 2_001, 1_000).count, 1);
        assert_eq!(r.seen("b", 2_001, 1_000).count, 0);
    }

    #[test]
    fn bounded_soonest_ending_first() {
        let mut r = Rates::new(3);
        r.add("long", 0, 1_000_000);
        for i in 0..100 {
            r.add(&format!("k{i}"), 10, 100);
        }
        assert_eq!(r.len(), 3);
        assert_eq!(r.seen("long", 10, 1_000_000).count, 1, "the longest window outlives the churn");
    }
}
