//! One state store shared by several gates of a process (`new GateState()` in TypeScript), in
//! memory or in Redis; and the Redis store a gate builds for itself from `state.redis`.

use std::sync::Arc;

use napi::Error;
use napi_derive::napi;
use toolgate_core::config::RedisConfig;
use toolgate_core::state::{MemoryStore, StateStore};
use toolgate_redis::RedisStore;

/// A process-wide state store: loop counters, session taint, rate counters and pending
/// confirmation tokens, kept per caller session rather than per gate. Gates built with it share
/// that state, so a gate rebuilt after a tool-list change, or evicted from a cache and built
/// again, keeps every session's taint, loop counts and tokens. In memory (per process), or in
/// Redis (shared by every process using the same URL and prefix). Raw binding: use `GateState`
/// from the package.
#[napi]
pub struct BindingState {
    pub(crate) store: Arc<dyn StateStore>,
    redis: Option<Arc<RedisStore>>,
    max_sessions: u32,
}

#[napi]
impl BindingState {
    /// A store holding at most `maxSessions` sessions and as many pending tokens (default
    /// 100000, at least 1; least recently used forgotten first, a forgotten session reading as
    /// tainted at the top label); or, with `redis` (the JSON of a `state.redis` block), a Redis
    /// store (no connection is made until the first decision). `E_CONFIG` for a bad block.
    #[napi(constructor)]
    pub fn new(max_sessions: Option<u32>, redis: Option<String>) -> std::result::Result<Self, Error<String>> {
        let max = max_sessions.unwrap_or(100_000).max(1);
        match redis {
            None => Ok(BindingState { store: Arc::new(MemoryStore::new(max as usize)), redis: None, max_sessions: max }),
            Some(json) => {
                let config: RedisConfig = serde_json::from_str(&json).map_err(|e| Error::new("E_CONFIG".to_string(), format!("state.redis: {e}")))?;
                let store = Arc::new(redis_store(&config)?);
                Ok(BindingState { store: Arc::clone(&store) as Arc<dyn StateStore>, redis: Some(store), max_sessions: max })
            }
        }
    }

    /// The session bound this store was made with (an in-memory store's; unused by Redis).
    #[napi(getter)]
    pub fn max_sessions(&self) -> u32 {
        self.max_sessions
    }

    /// Whether the store is remote (Redis): gates using it refuse sync decisions (`E_ASYNC`).
    #[napi(getter)]
    pub fn remote(&self) -> bool {
        self.store.is_remote()
    }

    /// Drops the store's Redis connections; decisions after it are refused
    /// (`state_unavailable`). A no-op in memory.
    #[napi]
    pub fn close(&self) {
        if let Some(r) = &self.redis {
            r.close();
        }
    }
}

/// The Redis store for a `state.redis` block; `E_CONFIG` naming the key when it cannot be built.
pub(crate) fn redis_store(config: &RedisConfig) -> std::result::Result<RedisStore, Error<String>> {
    RedisStore::new(config).map_err(|e| Error::new("E_CONFIG".to_string(), e.to_string()))
}

/// The `state.redis` block of a config's JSON text (shared with the Python binding).
pub(crate) use toolgate_redis::redis_config_of;
