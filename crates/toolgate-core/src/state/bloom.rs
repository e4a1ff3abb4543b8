//! A fixed-size Bloom filter of the scopes the store evicted: bounded memory that never
//! forgets an eviction (no false negatives) and only errs towards "evicted".

use std::fmt;

use ahash::RandomState;

/// Filter bits per session the store holds (before rounding up to a power of two).
const BITS_PER_SESSION: usize = 32;
/// Positions set per scope.
const HASHES: u64 = 3;
/// Upper bound on the filter: 2^31 bits (256 MiB), reached only above 67 million sessions.
const MAX_BITS: usize = 1 << 31;

/// The set of evicted scopes.
///
/// `contains` is `true` for every scope ever inserted (forever); it may also be `true` for a
/// scope never inserted (a false positive), with probability about `(set bits / all bits)^3`.
/// That makes a fresh scope count as tainted at the top label: over-strict, never lax.
/// The rate grows with the number of evictions over the process's life (about 0.07% after
/// `max_sessions` evictions, 1% after ~2.6×, 22% after 10×): [`Evicted::false_positive_rate`]
/// reports it.
pub(crate) struct Evicted {
    /// Allocated on the first eviction, so a store that never fills costs nothing here.
    bits: Vec<u64>,
    /// Number of bits once allocated (a power of two).
    len: usize,
    /// Bits currently set.
    set: u64,
    hashers: [RandomState; 2],
}

impl Evicted {
    /// A filter sized for a store of `max_sessions`, hashed with per-store `seeds`.
    pub(crate) fn new(max_sessions: usize, seeds: [u64; 8]) -> Evicted {
        let len = max_sessions.saturating_mul(BITS_PER_SESSION).clamp(64, MAX_BITS).next_power_of_two();
        let [a, b, c, d, e, f, g, h] = seeds;
        Evicted { bits: Vec::new(), len, set: 0, hashers: [RandomState::with_seeds(a, b, c, d), RandomState::with_seeds(e, f, g, h)] }
    }

    /// Remembers `scope` as evicted.
    pub(crate) fn insert(&mut self, scope: &str) {
        if self.bits.is_empty() {
            self.bits = vec![0; self.len / 64];
        }
        for at in self.positions(scope) {
            let (word, bit) = (&mut self.bits[at / 64], 1u64 << (at % 64));
            if *word & bit == 0 {
                *word |= bit;
                self.set += 1;
            }
        }
    }

    /// `true` if `scope` was inserted (always), or by a false positive (rarely).
    pub(crate) fn contains(&self, scope: &str) -> bool {
        !self.bits.is_empty() && self.positions(scope).all(|at| self.bits[at / 64] & (1u64 << (at % 64)) != 0)
    }

    /// The probability that a scope never evicted reads as evicted, now.
    pub(crate) fn false_positive_rate(&self) -> f64 {
        (self.set as f64 / self.len as f64).powi(HASHES as i32)
    }

    /// Double hashing (Kirsch–Mitzenmacher): `h1 + i·h2`, with `h2` odd so that the positions of
    /// one scope are distinct modulo the power-of-two length.
    fn positions(&self, scope: &str) -> impl Iterator<Item = usize> {
        let h1 = self.hashers[0].hash_one(scope);
        let h2 = self.hashers[1].hash_one(scope) | 1;
        let mask = self.len as u64 - 1;
        (0..HASHES).map(move |i| (h1.wrapping_add(i.wrapping_mul(h2)) & mask) as usize)
    }
}

impl fmt::Debug for Evicted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Evicted").field("bits", &self.len).field("set", &self.set).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::seed::random_seeds;

    #[test]
    fn no_false_negatives() {
        let mut e = Evicted::new(100, random_seeds());
        assert!(!e.contains("a"));
        for i in 0..20_000 {
            e.insert(&format!("s{i}"));
        }
        assert!((0..20_000).all(|i| e.contains(&format!("s{i}"))));
    }

    #[test]
    fn sized_and_bounded() {
        assert_eq!(Evicted::new(0, random_seeds()).len, 64);
        assert_eq!(Evicted::new(100_000, random_seeds()).len, 1 << 22);
        assert_eq!(Evicted::new(usize::MAX, random_seeds()).len, MAX_BITS);
        // Nothing allocated until the first eviction.
        assert!(Evicted::new(usize::MAX, random_seeds()).bits.is_empty());
    }

    #[test]
    fn false_positives_are_rare_at_capacity() {
        let mut e = Evicted::new(1000, random_seeds());
        for i in 0..1000 {
            e.insert(&format!("old{i}"));
        }
        let hits = (0..100_000).filter(|i| e.contains(&format!("new{i}"))).count();
        // Expected ~0.07% (about 70); allow generous slack.
        assert!(hits < 500, "{hits}");
        assert!(e.false_positive_rate() > 0.0 && e.false_positive_rate() < 0.005);
    }
}
