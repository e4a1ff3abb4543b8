//! [`RedisStore`]: the [`StateStore`] of several processes.

use std::time::Duration;

use redis::Value;
use toolgate_core::config::RedisConfig;
use toolgate_core::state::settle::window_start;
use toolgate_core::state::{Level, Observed, PendingConfirm, RateSeen, Settle, StateError, StateStore};

use crate::keys::Keys;
use crate::pool::{describe, Connection, Pool, PoolError};
use crate::scripts::Scripts;

/// How long a session's taint outlives its last recorded call or sink check (sliding): 24 hours.
pub const SESSION_TTL_MS: u64 = 24 * 3600 * 1000;

/// Why a store could not be built from its config.
#[derive(Debug, thiserror::Error)]
pub enum RedisStoreError {
    /// The URL is not one this build can connect to (never echoes the URL: it may hold a password).
    #[error("config at `state.redis.url`: {0}")]
    Url(String),
}

/// Loop counters, taint, rate counters and pending confirmations in Redis, shared by every
/// process using the same server and key prefix.
///
/// Guarantees:
/// - **One atomic step per operation**: a decision's reads and its record are one Lua script
///   (one round trip once the script is cached); a token is taken with `GETDEL`, so of any number
///   of concurrent takes in any number of processes exactly one gets it.
/// - **Bounded**: every key has a TTL — a scope's loop counters (one hash of at most 1024 call
///   keys, least recently used forgotten first, as in memory) their longest window, rate
///   counters their window plus 1 s, tokens their expiry, taint 24 hours (`SESSION_TTL_MS`)
///   after the scope's last recorded call or sink check (an idle session's taint is then
///   forgotten and it reads clean: documented in docs/state.md).
/// - **Taint by name**: a scope's taint is the set of label names it was raised to, read as a
///   level of the labels each call passes; a name they do not hold, or a value of another form,
///   reads as the top label.
/// - **A script error writes nothing**: every key is checked before the first write.
/// - **Fail closed**: an operation slower than `timeoutMs` (connecting, writes and reads
///   together), a refused connection, a Redis that may evict keys (`maxmemory-policy` other than
///   `noeviction`, checked per new connection) or an answer of the wrong shape is a
///   [`StateError`]; the gate refuses the call. A failed
///   connection is dropped and the next use reconnects (after 100 ms if connecting failed).
/// - Keys hold digests of scopes and tokens, never the values.
pub struct RedisStore {
    pool: Pool,
    keys: Keys,
    scripts: Scripts,
}

impl RedisStore {
    /// A store for `config` (no connection is made until the first use). `rediss://` needs TLS,
    /// which this build does not have: refused here rather than failing every decision.
    pub fn new(config: &RedisConfig) -> Result<RedisStore, RedisStoreError> {
        config.check().map_err(|e| RedisStoreError::Url(e.to_string()))?;
        if config.url.starts_with("rediss://") {
            return Err(RedisStoreError::Url("rediss:// (TLS) is not supported by this build; use redis:// on a trusted network or a local TLS tunnel".into()));
        }
        let client = redis::Client::open(config.url.as_str()).map_err(|e| RedisStoreError::Url(format!("not a Redis URL ({})", e.kind_name())))?;
        Ok(RedisStore { pool: Pool::new(client, Duration::from_millis(config.timeout_ms)), keys: Keys::new(&config.key_prefix), scripts: Scripts::new() })
    }

    /// Drops every connection; every later operation fails (`state_unavailable`).
    pub fn close(&self) {
        self.pool.close();
    }

    /// Connections open now (at most 8).
    pub fn open_connections(&self) -> usize {
        self.pool.open_connections()
    }

    fn run<T>(&self, f: impl FnOnce(&mut Connection) -> Result<T, PoolError>) -> Result<T, StateError> {
        self.pool.with(f).map_err(|e| StateError(e.to_string()))
    }
}

trait KindName {
    fn kind_name(&self) -> &'static str;
}

impl KindName for redis::RedisError {
    fn kind_name(&self) -> &'static str {
        if self.is_io_error() {
            "I/O"
        } else {
            "invalid URL"
        }
    }
}

fn cmd_err(e: redis::RedisError) -> PoolError {
    PoolError::Command(describe(&e))
}

fn int(v: &Value) -> Option<i64> {
    match v {
        Value::Int(i) => Some(*i),
        _ => None,
    }
}

fn u32_of(v: &Value) -> Result<u32, PoolError> {
    int(v).and_then(|i| u32::try_from(i).ok()).ok_or_else(|| PoolError::Command(format!("unexpected answer {v:?}")))
}

impl StateStore for RedisStore {
    fn settle(&self, q: &Settle<'_>) -> Result<Observed, StateError> {
        let mut inv = self.scripts.settle.prepare_invoke();
        inv.key(self.keys.taint(q.scope));
        inv.key(self.keys.loops(q.scope));
        inv.key(self.keys.loop_order(q.scope));
        let mut resets = Vec::with_capacity(q.rates.len());
        for r in &q.rates {
            let start = window_start(q.now_ms, r.window_ms);
            resets.push(start.saturating_add(r.window_ms.max(1)));
            inv.key(self.keys.rate(&r.key, start));
        }
        let l = q.loop_check;
        inv.arg(q.now_ms)
            .arg(u8::from(l.is_some()))
            .arg(l.map_or(0, |l| l.since_ms))
            .arg(l.map_or(0, |l| l.max))
            .arg(l.map_or(0, |l| l.keep))
            .arg(l.map_or(0, |l| l.window_ms))
            .arg(u8::from(q.sink_max.is_some()))
            .arg(q.sink_max.unwrap_or(0))
            .arg(u8::from(q.record))
            .arg(u8::from(q.enforce))
            .arg(q.raise.map_or(-1, i64::from))
            .arg(SESSION_TTL_MS)
            .arg(Keys::call(l.map_or(0, |l| l.key)))
            .arg(q.rates.len());
        for r in &q.rates {
            inv.arg(r.window_ms.max(1)).arg(r.max);
        }
        inv.arg(q.labels.len()).arg(q.labels);
        self.run(|con| {
            let answer: Value = inv.invoke(con).map_err(cmd_err)?;
            let Value::Array(items) = &answer else { return Err(PoolError::Command(format!("unexpected answer {answer:?}"))) };
            if items.len() != 3 + q.rates.len() {
                return Err(PoolError::Command(format!("{} values where {} were expected", items.len(), 3 + q.rates.len())));
            }
            let taint = int(&items[1]).map(|t| Level::try_from(t.clamp(0, 255)).unwrap_or(Level::MAX)).ok_or_else(|| PoolError::Command("taint".into()))?;
            let recorded = match int(&items[2]) {
                Some(0) => false,
                Some(1) => true,
                _ => return Err(PoolError::Command("recorded".into())),
            };
            let rates =
                items[3..].iter().zip(&resets).map(|(v, &reset_ms)| Ok(RateSeen { count: u32_of(v)?, reset_ms })).collect::<Result<Vec<_>, PoolError>>()?;
            Ok(Observed { loop_seen: u32_of(&items[0])?, taint, rates, recorded })
        })
    }

    fn taint(&self, scope: &str, labels: &[String]) -> Result<Level, StateError> {
        let key = self.keys.taint(scope);
        self.run(|con| {
            let v: i64 = self.scripts.taint.key(&key).arg(labels.len()).arg(labels).invoke(con).map_err(cmd_err)?;
            Level::try_from(v).map_err(|_| PoolError::Command(format!("unexpected answer {v}")))
        })
    }

    fn raise_taint(&self, scope: &str, level: Level, labels: &[String]) -> Result<(), StateError> {
        let key = self.keys.taint(scope);
        self.run(|con| {
            let _: i64 = self.scripts.raise.key(&key).arg(level).arg(SESSION_TTL_MS).arg(labels.len()).arg(labels).invoke(con).map_err(cmd_err)?;
            Ok(())
        })
    }

    fn put_token(&self, token: &str, pending: PendingConfirm) -> Result<(), StateError> {
        let key = self.keys.token(token);
        let json = serde_json::to_string(&pending).map_err(|e| StateError(format!("a pending confirmation could not be encoded: {e}")))?;
        // PXAT: expires at the token's own expiry, whatever the clocks of the processes
        self.run(|con| {
            let _: () = redis::cmd("SET").arg(&key).arg(json).arg("PXAT").arg(pending.expires_ms.max(1)).query(con).map_err(cmd_err)?;
            Ok(())
        })
    }

    fn take_token(&self, token: &str, now_ms: u64) -> Result<Option<PendingConfirm>, StateError> {
        let key = self.keys.token(token);
        let taken: Option<String> = self.run(|con| redis::cmd("GETDEL").arg(&key).query(con).map_err(cmd_err))?;
        let Some(json) = taken else { return Ok(None) };
        let p: PendingConfirm = serde_json::from_str(&json).map_err(|_| StateError("a pending confirmation in Redis could not be read".into()))?;
        Ok((p.expires_ms > now_ms).then_some(p))
    }

    fn is_remote(&self) -> bool {
        true
    }
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // never the URL (it may hold a password)
        f.debug_struct("RedisStore").field("pool", &self.pool).finish()
    }
}
