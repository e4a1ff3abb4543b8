//! A few connections, each used by one thread at a time, reconnected on demand. A connection
//! that failed in any way is dropped (after a timeout its stream may still hold the late reply,
//! which would answer the next command): the next use connects afresh.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use redis::{Client, Connection, RedisError};

/// Connections kept: the Node binding decides on libuv's pool (4 threads by default), the
/// Python binding on the caller's threads; a ninth concurrent decision waits for a slot.
const SLOTS: usize = 8;

/// After a failed connect, further connects fail at once for this long (a dead Redis costs
/// every decision nothing rather than a connect attempt each).
const BACKOFF: Duration = Duration::from_millis(100);

/// Why a connection could not be used.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PoolError {
    /// Connecting failed (or is backing off after a recent failure).
    #[error("cannot connect to Redis: {0}")]
    Connect(String),
    /// The command failed: I/O, timeout, a server error, or an answer that is not the expected shape.
    #[error("Redis did not answer as expected: {0}")]
    Command(String),
    /// The store was closed.
    #[error("the state store was closed")]
    Closed,
}

/// The connections of one store.
pub(crate) struct Pool {
    client: Client,
    timeout: Duration,
    slots: Vec<Mutex<Option<Connection>>>,
    next: AtomicUsize,
    start: Instant,
    /// ms since `start` before which connecting is not retried.
    down_until_ms: AtomicU64,
    closed: AtomicBool,
}

impl Pool {
    pub(crate) fn new(client: Client, timeout: Duration) -> Pool {
        Pool {
            client,
            timeout,
            slots: (0..SLOTS).map(|_| Mutex::new(None)).collect(),
            next: AtomicUsize::new(0),
            start: Instant::now(),
            down_until_ms: AtomicU64::new(0),
            closed: AtomicBool::new(false),
        }
    }

    fn slot(&self) -> MutexGuard<'_, Option<Connection>> {
        let first = self.next.fetch_add(1, Ordering::Relaxed);
        for i in 0..SLOTS {
            match self.slots[(first + i) % SLOTS].try_lock() {
                Ok(g) => return g,
                Err(std::sync::TryLockError::Poisoned(p)) => return p.into_inner(),
                Err(std::sync::TryLockError::WouldBlock) => {}
            }
        }
        self.slots[first % SLOTS].lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn connect(&self) -> Result<Connection, PoolError> {
        let now = self.start.elapsed().as_millis() as u64;
        if now < self.down_until_ms.load(Ordering::Relaxed) {
            return Err(PoolError::Connect("a recent attempt failed; retrying shortly".into()));
        }
        let fail = |e: RedisError| {
            self.down_until_ms.store(self.start.elapsed().as_millis() as u64 + BACKOFF.as_millis() as u64, Ordering::Relaxed);
            PoolError::Connect(describe(&e))
        };
        let con = self.client.get_connection_with_timeout(self.timeout).map_err(fail)?;
        con.set_read_timeout(Some(self.timeout)).map_err(fail)?;
        con.set_write_timeout(Some(self.timeout)).map_err(fail)?;
        Ok(con)
    }

    /// Runs `f` on a connection (connecting first if needed). Any failure drops that connection.
    pub(crate) fn with<T>(&self, f: impl FnOnce(&mut Connection) -> Result<T, PoolError>) -> Result<T, PoolError> {
        if self.closed.load(Ordering::Acquire) {
            return Err(PoolError::Closed);
        }
        let mut slot = self.slot();
        if slot.is_none() {
            *slot = Some(self.connect()?);
        }
        let Some(con) = slot.as_mut() else { return Err(PoolError::Closed) };
        let out = f(con);
        if out.is_err() || self.closed.load(Ordering::Acquire) {
            *slot = None;
        }
        out
    }

    /// Drops every connection; later uses fail with [`PoolError::Closed`].
    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::Release);
        for s in &self.slots {
            *s.lock().unwrap_or_else(PoisonError::into_inner) = None;
        }
    }

    /// Connections open now.
    pub(crate) fn open_connections(&self) -> usize {
        self.slots.iter().filter(|s| s.try_lock().map(|g| g.is_some()).unwrap_or(true)).count()
    }
}

/// A Redis error as a message that never holds the URL's password (the client's messages name
/// the failure, not the connection info).
pub(crate) fn describe(e: &RedisError) -> String {
    if e.is_timeout() {
        "timed out".into()
    } else if e.is_connection_refusal() {
        "connection refused".into()
    } else if e.is_connection_dropped() {
        "connection dropped".into()
    } else {
        let s = e.to_string();
        s.chars().take(200).collect()
    }
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool").field("timeout", &self.timeout).field("slots", &SLOTS).finish()
    }
}
