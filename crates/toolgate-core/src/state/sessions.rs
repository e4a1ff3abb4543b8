//! Sessions (scope → taint + loop counters) in a bounded LRU: a slab of slots threaded on a
//! doubly linked list (most recent first), O(1) touch, insert and evict.

use std::collections::HashMap;

use ahash::RandomState;

use super::bloom::Evicted;
use super::loops::Loops;
use super::names::{Taint, TOP};

const NIL: usize = usize::MAX;

/// What the store keeps per scope.
#[derive(Debug)]
pub(crate) struct Session {
    /// The names raised to (see [`super::names`]).
    pub(crate) taint: Taint,
    pub(crate) loops: Loops,
}

#[derive(Debug)]
struct Slot {
    scope: Box<str>,
    session: Session,
    prev: usize,
    next: usize,
}

/// At most `cap` sessions; inserting past it evicts the least recently used one into
/// [`Evicted`], so it reads as the top label afterwards, and again if it comes back.
#[derive(Debug)]
pub(crate) struct Sessions {
    index: HashMap<Box<str>, usize, RandomState>,
    slots: Vec<Slot>,
    /// Most recently used; `NIL` when empty.
    head: usize,
    /// Least recently used: the next to go.
    tail: usize,
    cap: usize,
    evicted: Evicted,
}

impl Sessions {
    /// An empty LRU of at most `cap` sessions (at least 1).
    pub(crate) fn new(cap: usize, seeds: [u64; 8]) -> Sessions {
        let [a, b, c, d, ..] = seeds;
        let cap = cap.max(1);
        Sessions {
            index: HashMap::with_hasher(RandomState::with_seeds(a, b, c, d)),
            slots: Vec::new(),
            head: NIL,
            tail: NIL,
            cap,
            evicted: Evicted::new(cap, seeds.map(|s| s.rotate_left(29) ^ 0x5851_F42D_4C95_7F2D)),
        }
    }

    /// The scope's session, marked most recently used; `None` if not held.
    pub(crate) fn get(&mut self, scope: &str) -> Option<&mut Session> {
        let at = *self.index.get(scope)?;
        self.touch(at);
        Some(&mut self.slots[at].session)
    }

    /// The scope's session, created if not held (evicting the least recently used one when
    /// full). A new session starts clean, or at [`TOP`] if the scope was evicted before.
    pub(crate) fn get_or_insert(&mut self, scope: &str) -> &mut Session {
        if let Some(&at) = self.index.get(scope) {
            self.touch(at);
            return &mut self.slots[at].session;
        }
        let session = Session { taint: if self.evicted.contains(scope) { vec![TOP] } else { Taint::new() }, loops: Loops::default() };
        let at = if self.slots.len() < self.cap {
            self.slots.push(Slot { scope: scope.into(), session, prev: NIL, next: NIL });
            self.slots.len() - 1
        } else {
            let at = self.tail;
            self.unlink(at);
            let old = std::mem::replace(&mut self.slots[at].scope, scope.into());
            self.index.remove(&old);
            self.evicted.insert(&old);
            self.slots[at].session = session;
            at
        };
        self.index.insert(scope.into(), at);
        self.push_front(at);
        &mut self.slots[at].session
    }

    /// `true` if the scope was evicted before (or, rarely, a false positive: see [`Evicted`]).
    pub(crate) fn was_evicted(&self, scope: &str) -> bool {
        self.evicted.contains(scope)
    }

    /// See [`Evicted::false_positive_rate`].
    pub(crate) fn false_taint_rate(&self) -> f64 {
        self.evicted.false_positive_rate()
    }

    pub(crate) fn len(&self) -> usize {
        self.index.len()
    }

    fn touch(&mut self, at: usize) {
        if self.head != at {
            self.unlink(at);
            self.push_front(at);
        }
    }

    fn unlink(&mut self, at: usize) {
        let (prev, next) = (self.slots[at].prev, self.slots[at].next);
        match prev {
            NIL => self.head = next,
            p => self.slots[p].next = next,
        }
        match next {
            NIL => self.tail = prev,
            n => self.slots[n].prev = prev,
        }
    }

    fn push_front(&mut self, at: usize) {
        self.slots[at].prev = NIL;
        self.slots[at].next = self.head;
        match self.head {
            NIL => self.tail = at,
            h => self.slots[h].prev = at,
        }
        self.head = at;
    }

    /// Scopes from most to least recently used.
    #[cfg(test)]
    pub(crate) fn order(&self) -> Vec<&str> {
        let mut out = Vec::new();
        let mut at = self.head;
        while at != NIL {
            out.push(&*self.slots[at].scope);
            at = self.slots[at].next;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::seed::random_seeds;

    #[test]
    fn lru_order_and_eviction() {
        let mut s = Sessions::new(3, random_seeds());
        for scope in ["a", "b", "c"] {
            s.get_or_insert(scope).taint = vec![1];
        }
        assert_eq!(s.order(), ["c", "b", "a"]);
        s.get("a");
        assert_eq!(s.order(), ["a", "c", "b"]);
        s.get_or_insert("d");
        assert_eq!(s.order(), ["d", "a", "c"]);
        assert!(s.get("b").is_none() && s.was_evicted("b"));
        assert_eq!(s.len(), 3);
        // b comes back: sticky EVICTED, and c (now least recent) goes.
        assert_eq!(s.get_or_insert("b").taint, [TOP]);
        assert_eq!(s.order(), ["b", "d", "a"]);
        assert_eq!(s.get("a").unwrap().taint, [1]);
        assert!(s.get("d").unwrap().taint.is_empty());
    }

    #[test]
    fn capacity_one_and_zero() {
        for cap in [0, 1] {
            let mut s = Sessions::new(cap, random_seeds());
            s.get_or_insert("a").taint = vec![2];
            assert_eq!(s.get("a").unwrap().taint, [2]);
            s.get_or_insert("b");
            assert_eq!(s.order(), ["b"]);
            assert!(s.was_evicted("a"));
        }
    }

    #[test]
    fn list_stays_consistent_under_churn() {
        let mut s = Sessions::new(50, random_seeds());
        for i in 0..5000u32 {
            let scope = format!("s{}", i.wrapping_mul(2_654_435_761) % 120);
            if i % 3 == 0 {
                s.get(&format!("s{}", i % 120));
            }
            s.get_or_insert(&scope);
            let order = s.order();
            assert_eq!(order.len(), s.len());
            assert_eq!(order[0], scope);
        }
    }
}
