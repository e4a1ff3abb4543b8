//! One state store shared by several gates of a process (`new GateState()` in TypeScript).

use std::sync::Arc;

use napi_derive::napi;
use toolgate_core::state::MemoryStore;

/// A process-wide in-memory state store: loop counters, session taint and pending confirmation
/// tokens, kept per caller session rather than per gate. Gates built with it share that state,
/// so a gate rebuilt after a tool-list change, or evicted from a cache and built again, keeps
/// every session's taint, loop counts and tokens. Raw binding: use `GateState` from the package.
#[napi]
pub struct BindingState {
    pub(crate) store: Arc<MemoryStore>,
}

#[napi]
impl BindingState {
    /// A store holding at most `maxSessions` sessions and as many pending tokens (default
    /// 100000, at least 1; least recently used forgotten first, a forgotten session reading as
    /// tainted at the top label).
    #[napi(constructor)]
    pub fn new(max_sessions: Option<u32>) -> Self {
        BindingState { store: Arc::new(MemoryStore::new(max_sessions.map_or(100_000, |n| n as usize))) }
    }

    /// The session bound this store was made with.
    #[napi(getter)]
    pub fn max_sessions(&self) -> u32 {
        u32::try_from(self.store.max_sessions()).unwrap_or(u32::MAX)
    }
}
