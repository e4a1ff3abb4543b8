//! Pending confirmations by token: bounded, soonest-expiring dropped first, taken once.

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use ahash::RandomState;

use super::PendingConfirm;

/// At most `cap` pending confirmations. A token dropped to make room, expired or taken is
/// unknown afterwards (the gate answers `token_invalid`: fail closed).
pub(crate) struct Pending {
    map: HashMap<Box<str>, (u64, PendingConfirm), RandomState>,
    /// (expires_ms, insertion seq) → token: the drop order, expired ones first.
    by_expiry: BTreeMap<(u64, u64), Box<str>>,
    seq: u64,
    cap: usize,
}

impl Pending {
    pub(crate) fn new(cap: usize, seeds: [u64; 8]) -> Pending {
        let [a, b, c, d, ..] = seeds;
        Pending { map: HashMap::with_hasher(RandomState::with_seeds(a, b, c, d)), by_expiry: BTreeMap::new(), seq: 0, cap: cap.max(1) }
    }

    /// Stores `pending` under `token` (replacing one already there). When full, drops the
    /// soonest-expiring entries (ties: the oldest), which are the expired ones if any.
    pub(crate) fn put(&mut self, token: &str, pending: PendingConfirm) {
        self.remove(token);
        while self.map.len() >= self.cap {
            let Some((_, dropped)) = self.by_expiry.pop_first() else { break };
            self.map.remove(&dropped);
        }
        self.seq += 1;
        self.by_expiry.insert((pending.expires_ms, self.seq), token.into());
        self.map.insert(token.into(), (self.seq, pending));
    }

    /// Removes and returns `token`'s entry if it is still valid at `now_ms`
    /// (`now_ms < expires_ms`). Expired entries are purged on the way.
    pub(crate) fn take(&mut self, token: &str, now_ms: u64) -> Option<PendingConfirm> {
        while let Some(entry) = self.by_expiry.first_entry() {
            if entry.key().0 > now_ms {
                break;
            }
            self.map.remove(&entry.remove());
        }
        self.remove(token)
    }

    fn remove(&mut self, token: &str) -> Option<PendingConfirm> {
        let (seq, pending) = self.map.remove(token)?;
        self.by_expiry.remove(&(pending.expires_ms, seq));
        Some(pending)
    }

    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }
}

impl fmt::Debug for Pending {
    /// Never prints tokens: they are secrets.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pending").field("len", &self.map.len()).field("cap", &self.cap).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::seed::random_seeds;
    use serde_json::json;

    pub(crate) fn confirm(tool: &str, expires_ms: u64) -> PendingConfirm {
        PendingConfirm { tool: tool.into(), arguments: json!({"path": "a"}), subject: Some("alice".into()), scope: "s1".into(), expires_ms, flags: Vec::new() }
    }

    #[test]
    fn taken_exactly_once() {
        let mut p = Pending::new(10, random_seeds());
        p.put("t1", confirm("write", 1000));
        assert_eq!(p.take("t1", 10), Some(confirm("write", 1000)));
        assert_eq!(p.take("t1", 10), None);
        assert_eq!(p.take("nope", 10), None);
        assert_eq!(p.len(), 0);
    }

    #[test]
    fn expiry() {
        let mut p = Pending::new(10, random_seeds());
        p.put("a", confirm("w", 1000));
        p.put("b", confirm("w", 2000));
        assert_eq!(p.take("a", 1000), None, "expired at expires_ms");
        assert_eq!(p.len(), 1, "expired entries purged");
        assert!(p.take("b", 1999).is_some());
    }

    #[test]
    fn full_map_drops_soonest_expiring() {
        let mut p = Pending::new(3, random_seeds());
        p.put("late", confirm("w", 9000));
        p.put("soon", confirm("w", 1000));
        p.put("mid", confirm("w", 5000));
        p.put("new", confirm("w", 7000));
        assert_eq!(p.len(), 3);
        assert_eq!(p.take("soon", 0), None);
        assert!(p.take("late", 0).is_some() && p.take("mid", 0).is_some() && p.take("new", 0).is_some());
        // Same expiry: the oldest goes.
        for t in ["x", "y", "z", "w"] {
            p.put(t, confirm("w", 100));
        }
        assert_eq!(p.take("x", 0), None);
        assert!(p.take("w", 0).is_some());
    }

    #[test]
    fn replacing_a_token_keeps_one_entry() {
        let mut p = Pending::new(3, random_seeds());
        p.put("t", confirm("a", 100));
        p.put("t", confirm("b", 200));
        assert_eq!(p.len(), 1);
        assert_eq!(p.by_expiry.len(), 1);
        assert_eq!(p.take("t", 0).unwrap().tool, "b");
    }
}
