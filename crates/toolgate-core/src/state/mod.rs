//! The gate's per-process state behind one small interface: loop counters, session taint and
//! pending confirmations. [`MemoryStore`] is the bounded in-memory default (`state.maxSessions`,
//! least recently used sessions forgotten first); a forgotten session reads as [`EVICTED`]
//! (the top label), never as clean.
//!
//! The store keeps what it is told; the decisions (is this a loop, may this sink run, does
//! this token belong to this caller and these arguments) are the gate's.

mod bloom;
mod loops;
pub mod memory;
mod pending;
mod seed;
mod sessions;
pub mod token;

pub use memory::MemoryStore;
pub use token::{canonical_key, new_token, TokenError};

/// A taint level: an index into the config's `labels`, 0 = lowest. [`EVICTED`] is reserved.
pub type Level = u8;

/// The taint of a scope the store forgot to make room: callers treat it as the top label.
/// It is the largest [`Level`], so raising never lowers it.
pub const EVICTED: Level = u8::MAX;

/// A `writes` call awaiting `gate.confirm`: what the token was issued for.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingConfirm {
    /// The tool to run once confirmed.
    pub tool: String,
    /// The exact (repaired) arguments the confirmation covers.
    pub arguments: serde_json::Value,
    /// The subject the token was issued to (`None`: issued without one).
    pub subject: Option<String>,
    /// The loop/taint scope of the original call.
    pub scope: String,
    /// When the token stops being accepted, milliseconds since the Unix epoch.
    pub expires_ms: u64,
    /// The repair flags of the original call, reported again when it is confirmed.
    pub flags: Vec<crate::schema::flag::Flag>,
}

/// Where the gate keeps state between calls. Implementations are shared across threads;
/// every method is one short critical section and never fails (a store that cannot answer
/// must answer the strict way: higher counts, higher taint, unknown tokens).
pub trait StateStore: Send + Sync + std::fmt::Debug {
    /// Allowed calls recorded for `key` in `scope` at or after `since_ms`.
    fn loop_count(&self, scope: &str, key: u128, since_ms: u64) -> u32;
    /// Records one allowed call; keeps at most `keep` timestamps per key.
    fn loop_record(&self, scope: &str, key: u128, now_ms: u64, keep: u32);
    /// The scope's taint: 0 when never seen, [`EVICTED`] when it was forgotten to make room.
    fn taint(&self, scope: &str) -> Level;
    /// Raises (never lowers) the scope's taint to `level`.
    fn raise_taint(&self, scope: &str, level: Level);
    /// Stores a pending confirmation under `token`.
    fn put_token(&self, token: &str, pending: PendingConfirm);
    /// Removes and returns the pending confirmation if known and not expired at `now_ms`
    /// (exactly once: a second take of the same token is `None`).
    fn take_token(&self, token: &str, now_ms: u64) -> Option<PendingConfirm>;
}
