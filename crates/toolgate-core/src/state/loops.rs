//! One scope's loop counters: recent timestamps of allowed calls per canonical call key.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};

/// Call keys kept per scope; past it the stalest key (least recently recorded or counted) goes.
pub(crate) const MAX_KEYS: usize = 1024;

/// Recent allowed calls of one scope.
///
/// Forgetting a key resets its count, so the bound is a (documented) limit of the loop guard:
/// a model would have to interleave more than [`MAX_KEYS`] other distinct calls between repeats
/// of one call to have it forgotten.
#[derive(Debug, Default)]
pub(crate) struct Loops {
    keys: HashMap<u128, Entry, BuildHasherDefault<KeyHasher>>,
    /// Use tick → key, oldest first: the eviction order.
    order: BTreeMap<u64, u128>,
    tick: u64,
}

#[derive(Debug)]
struct Entry {
    tick: u64,
    /// Timestamps (ms) in recording order; at most `keep` of the last `record`.
    stamps: VecDeque<u64>,
}

impl Loops {
    /// Timestamps recorded for `key` at or after `since_ms`. Counting marks the key as used.
    pub(crate) fn count(&mut self, key: u128, since_ms: u64) -> u32 {
        let tick = self.next_tick();
        let Some(entry) = self.keys.get_mut(&key) else { return 0 };
        self.order.remove(&entry.tick);
        self.order.insert(tick, key);
        entry.tick = tick;
        let n = entry.stamps.iter().filter(|&&t| t >= since_ms).count();
        u32::try_from(n).unwrap_or(u32::MAX)
    }

    /// Records a call of `key` at `now_ms`, keeping at most `keep` timestamps for it (the
    /// oldest recorded go first). `keep == 0` records nothing.
    pub(crate) fn record(&mut self, key: u128, now_ms: u64, keep: u32) {
        let keep = keep as usize;
        if keep == 0 {
            return;
        }
        let tick = self.next_tick();
        if let Some(entry) = self.keys.get_mut(&key) {
            self.order.remove(&entry.tick);
            entry.tick = tick;
            while entry.stamps.len() >= keep {
                entry.stamps.pop_front();
            }
            entry.stamps.push_back(now_ms);
        } else {
            if self.keys.len() >= MAX_KEYS {
                if let Some((_, stale)) = self.order.pop_first() {
                    self.keys.remove(&stale);
                }
            }
            self.keys.insert(key, Entry { tick, stamps: VecDeque::from([now_ms]) });
        }
        self.order.insert(tick, key);
    }

    fn next_tick(&mut self) -> u64 {
        self.tick += 1;
        self.tick
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        debug_assert_eq!(self.keys.len(), self.order.len());
        self.keys.len()
    }
}

/// Keys are already keyed 128-bit hashes (`canonical_key`): fold them instead of rehashing.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x0100_0000_01B3);
        }
    }
    fn write_u128(&mut self, i: u128) {
        self.0 ^= (i as u64) ^ ((i >> 64) as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_counting() {
        let mut l = Loops::default();
        for t in [1000, 2000, 3000] {
            l.record(7, t, 10);
        }
        assert_eq!(l.count(7, 0), 3);
        assert_eq!(l.count(7, 2000), 2);
        assert_eq!(l.count(7, 3001), 0);
        assert_eq!(l.count(8, 0), 0);
    }

    #[test]
    fn keep_bounds_timestamps() {
        let mut l = Loops::default();
        for t in 0..100 {
            l.record(1, t, 3);
        }
        assert_eq!(l.count(1, 0), 3);
        assert_eq!(l.count(1, 97), 3);
        assert_eq!(l.count(1, 98), 2);
        l.record(2, 5, 0);
        assert_eq!(l.count(2, 0), 0);
        assert_eq!(l.len(), 1);
    }

    #[test]
    fn stalest_key_goes_first() {
        let mut l = Loops::default();
        for k in 0..MAX_KEYS as u128 {
            l.record(k, 1, 5);
        }
        l.count(0, 0); // key 0 used again: key 1 is now the stalest
        l.record(u128::MAX, 1, 5);
        assert_eq!(l.len(), MAX_KEYS);
        assert_eq!(l.count(1, 0), 0);
        assert_eq!(l.count(0, 0), 1);
        assert_eq!(l.count(2, 0), 1);
        assert_eq!(l.count(u128::MAX, 0), 1);
    }
}
