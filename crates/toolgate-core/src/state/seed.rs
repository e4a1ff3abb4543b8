//! Hash seeds from the OS random source, so state keys and filter positions cannot be
//! predicted (and so collided or flooded on purpose) from outside the process.

use std::sync::atomic::{AtomicU64, Ordering};

/// Eight 64-bit seeds from the OS CSPRNG.
///
/// If the OS source fails (it does not on supported platforms; `ahash` itself panics in that
/// case), the seeds are derived from addresses (ASLR) and a counter instead: still distinct per
/// call and per process, only guessable by someone who can read this process's memory layout.
/// Seeds only affect which inputs collide, never whether state is kept, so this degrades
/// unpredictability, not correctness.
pub(crate) fn random_seeds() -> [u64; 8] {
    let mut bytes = [0u8; 64];
    let mut seeds = [0u64; 8];
    if getrandom::fill(&mut bytes).is_ok() {
        for (seed, chunk) in seeds.iter_mut().zip(bytes.chunks_exact(8)) {
            *seed = u64::from_le_bytes(chunk.try_into().expect("8-byte chunk"));
        }
        return seeds;
    }
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let local = 0u8;
    let mut state = (&COUNTER as *const AtomicU64 as u64)
        ^ (&local as *const u8 as u64).rotate_left(32)
        ^ COUNTER.fetch_add(1, Ordering::Relaxed).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    for seed in seeds.iter_mut() {
        *seed = splitmix64(&mut state);
    }
    seeds
}

/// One step of SplitMix64 (a bijective mixer with a Weyl sequence): spreads the fallback
/// state's few varying bits over all 64.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_differ_per_draw() {
        let (a, b) = (random_seeds(), random_seeds());
        assert_ne!(a, b);
        assert!(a.iter().any(|&s| s != 0));
    }

    #[test]
    fn splitmix_spreads() {
        let mut s = 0;
        let (x, y) = (splitmix64(&mut s), splitmix64(&mut s));
        assert_ne!(x, y);
        assert!(x.count_ones() > 16 && y.count_ones() > 16);
    }
}
