//! A [`StateStore`](toolgate_core::state::StateStore) in Redis, so every process using the same
//! Redis and key prefix acts as one gate: a confirmation token issued by one is taken exactly
//! once by any, a session tainted at one is tainted at all, loop and rate counters count across
//! all of them. See `docs/state.md`.
//!
//! One round trip per decision (one Lua script, `EVALSHA`), everything under a TTL, the client
//! reconnects by itself, and every failure (unreachable, slower than `timeoutMs`, garbage) is a
//! [`StateError`](toolgate_core::state::StateError), which the gate turns into a refusal.

mod config_of;
mod keys;
mod pool;
mod resolve;
mod scripts;
mod store;

pub use config_of::redis_config_of;
pub use store::{RedisStore, RedisStoreError};
