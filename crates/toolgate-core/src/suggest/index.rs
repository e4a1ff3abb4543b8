//! The candidates "did you mean" scores, found without visiting every tool: an index of the
//! declared names' character bigrams, built once per gate.
//!
//! A name is offered when its edit distance to the query is within the budget `k`, or when one
//! contains the other (`super::closest`). Both leave a trace in shared bigrams (counted with
//! multiplicity, on the lower-cased names, in characters):
//!
//! - edit distance ≤ k ⇒ at least `max(n, L) − 1 − 2k` shared bigrams (the q-gram lemma: one
//!   edit destroys at most two bigrams; `n`, `L`: the query's and the name's lengths);
//! - the query inside the name ⇒ all of the query's `n − 1` bigrams shared;
//! - the name inside the query ⇒ all of the name's `L − 1` bigrams shared.
//!
//! So every name that can be offered either shares a bigram with the query and meets one of those
//! counts, or is one the counts cannot see — names of at most one character, and names whose
//! distance bound is ≤ 0 (both lengths at most `1 + 2k`), taken by length. The candidates are
//! a superset of what a scan of every tool would offer, and `closest` decides on them exactly as
//! on every tool (checked against the scan: the tests below). A query of fewer than two
//! characters has no bigram: it is scored against every tool, as before this index.

use ahash::AHashMap;

use super::ToolName;

/// Bigram postings and lengths of every declared tool name (lower-cased).
#[derive(Debug, Clone, Default)]
pub struct NameIndex {
    /// Each tool's lower-cased name length, in characters.
    lens: Vec<u32>,
    /// Tools by that length.
    by_len: Vec<Vec<u32>>,
    /// A bigram (two characters, packed) → each tool whose name holds it, and how many times.
    grams: AHashMap<u64, Vec<(u32, u16)>>,
}

fn bigrams(lower: &str) -> impl Iterator<Item = u64> + '_ {
    lower.chars().zip(lower.chars().skip(1)).map(|(a, b)| (a as u64) << 32 | b as u64)
}

/// `lower`'s bigrams with their counts, sorted.
fn counted(lower: &str) -> Vec<(u64, u16)> {
    let mut all: Vec<u64> = bigrams(lower).collect();
    all.sort_unstable();
    let mut out: Vec<(u64, u16)> = Vec::with_capacity(all.len());
    for g in all {
        match out.last_mut() {
            Some((last, n)) if *last == g => *n = n.saturating_add(1),
            _ => out.push((g, 1)),
        }
    }
    out
}

impl NameIndex {
    /// Indexes `tools` (their lower-cased names, see [`ToolName`]); tool `i` is `tools[i]`.
    pub fn new<T: ToolName>(tools: &[T]) -> NameIndex {
        let mut index = NameIndex::default();
        for (i, t) in tools.iter().enumerate() {
            let lower = t.names().1;
            let len = lower.chars().count();
            index.lens.push(len as u32);
            if index.by_len.len() <= len {
                index.by_len.resize_with(len + 1, Vec::new);
            }
            index.by_len[len].push(i as u32);
            for (g, n) in counted(lower) {
                index.grams.entry(g).or_default().push((i as u32, n));
            }
        }
        index
    }

    /// The tools (ascending) whose names may be within `budget` edits of `lower` (`n` characters)
    /// or contain it or be contained in it: a superset of what `closest` offers. `None` when the
    /// query is too short to have a bigram (then every tool is a candidate).
    pub fn candidates(&self, lower: &str, n: usize, budget: usize) -> Option<Vec<usize>> {
        if n < 2 || self.lens.is_empty() {
            return None;
        }
        let mut shared = vec![0u16; self.lens.len()];
        let mut touched: Vec<u32> = Vec::new();
        for (g, qc) in counted(lower) {
            for &(t, nc) in self.grams.get(&g).map_or(&[][..], Vec::as_slice) {
                let s = &mut shared[t as usize];
                if *s == 0 {
                    touched.push(t);
                }
                *s = s.saturating_add(qc.min(nc));
            }
        }
        let (n, k) = (n as i64, budget as i64);
        let mut out: Vec<usize> = touched
            .into_iter()
            .filter(|&t| {
                let (l, s) = (i64::from(self.lens[t as usize]), i64::from(shared[t as usize]));
                let near = (l - n).abs() <= k && s >= n.max(l) - 1 - 2 * k;
                near || (l >= n && s >= n - 1) || (l <= n && s >= l - 1)
            })
            .map(|t| t as usize)
            .collect();
        // names no bigram count can vouch for: at most one character, or both lengths within
        // 1 + 2k (where the distance bound says nothing) and the lengths within k
        let unseen = (0..=1).chain((n - k).max(2)..=(n + k).min(1 + 2 * k).min(self.by_len.len() as i64 - 1));
        for l in unseen.filter(|&l| n.max(l) <= 1 + 2 * k || l <= 1) {
            let tools = self.by_len.get(l as usize).map_or(&[][..], Vec::as_slice);
            out.extend(tools.iter().filter(|&&t| shared[t as usize] == 0).map(|&t| t as usize));
        }
        out.sort_unstable();
        Some(out)
    }
}
