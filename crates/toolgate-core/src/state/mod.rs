//! The gate's state behind one small interface: loop counters, session taint, rate-limit
//! counters and pending confirmations. [`MemoryStore`] is the bounded in-memory default
//! (`state.maxSessions`, least recently used sessions forgotten first); a forgotten session reads
//! as [`EVICTED`] (the top label), never as clean. A remote store (`toolgate-redis`) implements
//! the same trait so several processes act as one gate.
//!
//! The store keeps what it is told; the decisions (is this a loop, may this sink run, does
//! this token belong to this caller and these arguments) are the gate's. The one rule a store
//! applies itself is [`Settle::admits`], so that counting and recording happen in one atomic
//! step (no two replicas both take the last slot of a rate limit).

mod bloom;
mod loops;
pub mod memory;
mod names;
mod pending;
mod rate;
mod seed;
mod sessions;
pub mod settle;
pub mod token;

pub use memory::MemoryStore;
pub use settle::{LoopCheck, Observed, RateCheck, RateSeen, Settle};
pub use token::{canonical_key, new_token, stable_canonical_key, TokenError};

/// A taint level: an index into the config's `labels`, 0 = lowest. [`EVICTED`] is reserved.
///
/// Levels cross the store's interface, never its storage: a store keeps the NAMES of the labels
/// a scope was raised to and reads them back as levels of the labels passed with the read, so a
/// change to `labels` (a reload, a rolling deploy on one Redis) never reads a stored taint as a
/// lower label than it was raised to. A name the passed labels no longer hold reads as
/// [`EVICTED`].
pub type Level = u8;

/// The taint of a scope the store forgot to make room: callers treat it as the top label.
/// It is the largest [`Level`], so raising never lowers it.
pub const EVICTED: Level = u8::MAX;

/// A `writes` call awaiting `gate.confirm`: what the token was issued for. Serializable so a
/// remote store can keep it (its JSON is the store's business; only this crate reads it back).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
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

/// A store that could not answer in time (unreachable, too slow, or answering garbage). The gate
/// turns it into a refusal (`state_unavailable`): nothing is allowed while state is unknown.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the gate's shared state could not be reached: {0}")]
pub struct StateError(pub String);

/// Where the gate keeps state between calls. Implementations are shared across threads; each
/// method is one atomic step (one critical section in memory, one script or command remotely).
/// A store that cannot answer returns [`StateError`], never a guess: the gate then refuses.
pub trait StateStore: Send + Sync + std::fmt::Debug {
    /// Reads what `q` asks about (loop count, taint, rate counters) and, when `q` says to record
    /// and [`Settle::admits`] what was read (or `q.enforce` is false), records the call in the
    /// same atomic step: one loop timestamp, one count on each rate limit, the taint raised.
    fn settle(&self, q: &Settle<'_>) -> Result<Observed, StateError>;
    /// The scope's taint as a level of `labels` (the gate's, lowest first): the highest of the
    /// labels it was raised to; 0 when never raised, [`EVICTED`] when it was forgotten to make
    /// room or was raised to a label `labels` no longer holds.
    fn taint(&self, scope: &str, labels: &[String]) -> Result<Level, StateError>;
    /// Raises (never lowers) the scope's taint by `labels[level]`: the store keeps the label's
    /// name (a `level` past `labels`, such as [`EVICTED`], keeps a mark that reads as the top).
    fn raise_taint(&self, scope: &str, level: Level, labels: &[String]) -> Result<(), StateError>;
    /// Stores a pending confirmation under `token` until its `expires_ms`.
    fn put_token(&self, token: &str, pending: PendingConfirm) -> Result<(), StateError>;
    /// Removes and returns the pending confirmation if known and not expired at `now_ms`
    /// (exactly once, across every process sharing the store: a second take is `None`).
    fn take_token(&self, token: &str, now_ms: u64) -> Result<Option<PendingConfirm>, StateError>;
    /// Whether answering may block on the network (the Node binding then refuses sync calls).
    fn is_remote(&self) -> bool {
        false
    }
}
