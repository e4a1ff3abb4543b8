//! A few connections, each used by one thread at a time, reconnected on demand. A connection
//! that failed in any way is dropped (after a timeout its stream may still hold the late reply,
//! which would answer the next command): the next use connects afresh.
//!
//! **One deadline per operation.** `timeoutMs` bounds an operation as a whole — connecting
//! (resolving the host name, `resolve.rs`, then `AUTH`, `SELECT` and the eviction check) and
//! every write and read of its commands — not each socket call: before every read and write
//! the socket's timeout is set to the time left, and once none is left the operation fails.
//! (With a timeout per socket call, a peer trickling its reply one byte at a time held the
//! thread for as many timeouts as bytes.) So the connection is this module's own
//! [`ConnectionLike`] over a plain socket, its replies parsed by redis-rs's [`Parser`].
//!
//! **No eviction.** Every gate key has a TTL, so a Redis whose `maxmemory-policy` is anything
//! but `noeviction` may evict taint, rate counts and tokens under memory pressure, which another
//! tenant of the same Redis can cause at will. Each new connection reads `INFO memory` and
//! refuses such a Redis, and one that does not let it read `INFO`; the commands of a decision
//! are unchanged.

use std::io::{self, Read, Write};
use std::net::TcpStream;
#[cfg(unix)]
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use redis::{Client, Cmd, ConnectionAddr, ConnectionInfo, ConnectionLike, Parser, RedisError, RedisResult, Value};

use crate::resolve::Resolver;

/// Connections kept: the Node binding decides on libuv's pool (4 threads by default), the
/// Python binding on the caller's threads; a ninth concurrent decision waits for a slot.
const SLOTS: usize = 8;

/// After a failed connect, further connects fail at once for this long (a dead Redis costs
/// every decision nothing rather than a connect attempt each).
const BACKOFF: Duration = Duration::from_millis(100);

/// The one eviction policy under which Redis never drops a gate key before its TTL.
const NO_EVICTION: &str = "noeviction";

/// Why a connection could not be used.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PoolError {
    /// Connecting failed.
    #[error("cannot connect to Redis: {0}")]
    Connect(String),
    /// The Redis answers but may lose the gate's state: it may evict keys, or it does not let
    /// the gate check that it never does.
    #[error("refusing to keep the gate's state in this Redis: {0}")]
    Unsafe(String),
    /// A recent connect failed (the message is that failure's); not retried yet.
    #[error("{0} (retrying shortly)")]
    Backoff(String),
    /// The command failed: I/O, timeout, a server error, or an answer that is not the expected shape.
    #[error("Redis did not answer as expected: {0}")]
    Command(String),
    /// The store was closed.
    #[error("the state store was closed")]
    Closed,
}

/// The connections of one store.
pub(crate) struct Pool {
    info: ConnectionInfo,
    /// Resolves a TCP address's host name within each connect's deadline.
    resolver: Option<Resolver>,
    timeout: Duration,
    slots: Vec<Mutex<Option<Connection>>>,
    next: AtomicUsize,
    start: Instant,
    /// ms since `start` before which connecting is not retried.
    down_until_ms: AtomicU64,
    /// Why the last connect failed (repeated while backing off).
    last_failure: Mutex<String>,
    closed: AtomicBool,
}

impl Pool {
    pub(crate) fn new(client: Client, timeout: Duration) -> Pool {
        let info = client.get_connection_info().clone();
        let resolver = match info.addr() {
            ConnectionAddr::Tcp(host, port) => Some(Resolver::new(host, *port)),
            _ => None,
        };
        Pool {
            info,
            resolver,
            timeout,
            slots: (0..SLOTS).map(|_| Mutex::new(None)).collect(),
            next: AtomicUsize::new(0),
            start: Instant::now(),
            down_until_ms: AtomicU64::new(0),
            last_failure: Mutex::new(String::new()),
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

    fn connect(&self, deadline: Instant) -> Result<Connection, PoolError> {
        let now = self.start.elapsed().as_millis() as u64;
        if now < self.down_until_ms.load(Ordering::Relaxed) {
            let last = self.last_failure.lock().unwrap_or_else(PoisonError::into_inner).clone();
            return Err(PoolError::Backoff(last));
        }
        Connection::open(&self.info, self.resolver.as_ref(), deadline).inspect_err(|e| {
            *self.last_failure.lock().unwrap_or_else(PoisonError::into_inner) = e.to_string();
            self.down_until_ms.store(self.start.elapsed().as_millis() as u64 + BACKOFF.as_millis() as u64, Ordering::Relaxed);
        })
    }

    /// Runs `f` on a connection (connecting first if needed), all of it before one deadline
    /// `timeout` after a connection slot is had. Any failure drops that connection.
    pub(crate) fn with<T>(&self, f: impl FnOnce(&mut Connection) -> Result<T, PoolError>) -> Result<T, PoolError> {
        if self.closed.load(Ordering::Acquire) {
            return Err(PoolError::Closed);
        }
        let mut slot = self.slot();
        let deadline = Instant::now() + self.timeout;
        if slot.is_none() {
            *slot = Some(self.connect(deadline)?);
        }
        let Some(con) = slot.as_mut() else { return Err(PoolError::Closed) };
        con.deadline = deadline;
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

/// The socket of a connection.
enum Stream {
    Tcp(TcpStream),
    #[cfg(unix)]
    Unix(UnixStream),
}

/// The time left before `deadline`; a timeout error once there is none.
fn left(deadline: Instant) -> io::Result<Duration> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(io::Error::new(io::ErrorKind::TimedOut, "timed out"));
    }
    Ok(left)
}

/// A stream within one operation: each read and write first sets the socket's timeout to the
/// time left before the deadline, and fails once none is left.
struct Bounded<'a> {
    stream: &'a mut Stream,
    deadline: Instant,
}

impl Read for Bounded<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = left(self.deadline)?;
        match self.stream {
            Stream::Tcp(s) => {
                s.set_read_timeout(Some(left))?;
                s.read(buf)
            }
            #[cfg(unix)]
            Stream::Unix(s) => {
                s.set_read_timeout(Some(left))?;
                s.read(buf)
            }
        }
    }
}

impl Write for Bounded<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let left = left(self.deadline)?;
        match self.stream {
            Stream::Tcp(s) => {
                s.set_write_timeout(Some(left))?;
                s.write(buf)
            }
            #[cfg(unix)]
            Stream::Unix(s) => {
                s.set_write_timeout(Some(left))?;
                s.write(buf)
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// One connection to Redis (RESP2), every command before the deadline of the operation it is
/// part of.
pub(crate) struct Connection {
    stream: Stream,
    parser: Parser,
    deadline: Instant,
    db: i64,
    /// Bytes read from the socket and not yet parsed (`rbuf[rpos..rend]`): the parser reads a
    /// few bytes at a time, and each socket read costs two system calls (its timeout, the read).
    rbuf: Box<[u8]>,
    rpos: usize,
    rend: usize,
}

/// Bytes read from the socket at a time.
const READ_CHUNK: usize = 16 * 1024;

/// The parser's view of a connection's socket: buffered, each refill before the deadline.
struct Buffered<'a> {
    stream: &'a mut Stream,
    deadline: Instant,
    buf: &'a mut [u8],
    pos: &'a mut usize,
    end: &'a mut usize,
}

impl Read for Buffered<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if *self.pos == *self.end {
            let n = Bounded { stream: self.stream, deadline: self.deadline }.read(self.buf)?;
            (*self.pos, *self.end) = (0, n);
            if n == 0 {
                return Ok(0);
            }
        }
        let n = out.len().min(*self.end - *self.pos);
        out[..n].copy_from_slice(&self.buf[*self.pos..*self.pos + n]);
        *self.pos += n;
        Ok(n)
    }
}

impl Connection {
    /// Connects, authenticates, selects the database and checks that Redis never evicts keys,
    /// all before `deadline` — resolving the host name too (`resolver`, the one of a TCP address).
    fn open(info: &ConnectionInfo, resolver: Option<&Resolver>, deadline: Instant) -> Result<Connection, PoolError> {
        let io_err = |e: io::Error| PoolError::Connect(describe(&RedisError::from(e)));
        let stream = match (info.addr(), resolver) {
            (ConnectionAddr::Tcp(..), Some(r)) => {
                let addrs = r.resolve(deadline).map_err(|e| PoolError::Connect(format!("resolving its host name: {}", describe(&RedisError::from(e)))))?;
                Stream::Tcp(tcp(addrs, deadline).map_err(io_err)?)
            }
            #[cfg(unix)]
            (ConnectionAddr::Unix(path), _) => Stream::Unix(UnixStream::connect(path).map_err(io_err)?),
            _ => return Err(PoolError::Connect("this kind of address is not supported by this build".into())),
        };
        let settings = info.redis_settings();
        let mut con = Connection { stream, parser: Parser::new(), deadline, db: settings.db(), rbuf: vec![0; READ_CHUNK].into_boxed_slice(), rpos: 0, rend: 0 };
        if let Some(password) = settings.password() {
            let mut auth = redis::cmd("AUTH");
            if let Some(user) = settings.username() {
                auth.arg(user);
            }
            // only the error's code: a server may echo the arguments (the password) in its message
            if let Value::ServerError(e) = con.ask(auth.arg(password))? {
                return Err(PoolError::Connect(format!("Redis refused AUTH ({})", e.code())));
            }
        }
        if settings.db() != 0 {
            if let Value::ServerError(e) = con.ask(redis::cmd("SELECT").arg(settings.db()))? {
                return Err(PoolError::Connect(format!("Redis refused SELECT ({})", e.code())));
            }
        }
        con.check_no_eviction()?;
        Ok(con)
    }

    /// Sends `cmd` and reads its answer, a server error as a value.
    fn ask(&mut self, cmd: &Cmd) -> Result<Value, PoolError> {
        self.req_command(cmd).map_err(|e| PoolError::Connect(describe(&e)))
    }

    /// `Ok` only when `INFO memory` says `maxmemory_policy:noeviction`.
    fn check_no_eviction(&mut self) -> Result<(), PoolError> {
        let text = match self.ask(redis::cmd("INFO").arg("memory"))? {
            Value::BulkString(b) => b,
            Value::ServerError(e) => {
                return Err(PoolError::Unsafe(format!(
                    "it refused `INFO memory` ({}), so the gate cannot check that Redis never evicts its keys; let the gate's Redis user run INFO (ACL: `+info`) and set `maxmemory-policy {NO_EVICTION}`",
                    e.code()
                )))
            }
            other => return Err(PoolError::Command(format!("unexpected answer to INFO: {}", short(&format!("{other:?}"))))),
        };
        let text = String::from_utf8_lossy(&text);
        match text.lines().find_map(|l| l.strip_prefix("maxmemory_policy:")).map(str::trim) {
            Some(NO_EVICTION) => Ok(()),
            Some(policy) => {
                let policy: String = policy.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '-').take(40).collect();
                Err(PoolError::Unsafe(format!(
                    "its maxmemory-policy is `{policy}`, under which Redis may evict the gate's taint, rate counts and confirmation tokens; set `maxmemory-policy {NO_EVICTION}`"
                )))
            }
            None => Err(PoolError::Unsafe(format!(
                "`INFO memory` does not report maxmemory_policy, so the gate cannot check that Redis never evicts its keys; use a Redis that reports it, with `maxmemory-policy {NO_EVICTION}`"
            ))),
        }
    }

    fn bounded(&mut self) -> Bounded<'_> {
        Bounded { stream: &mut self.stream, deadline: self.deadline }
    }

    fn send(&mut self, cmd: &[u8]) -> RedisResult<()> {
        self.bounded().write_all(cmd).map_err(RedisError::from)
    }

    fn recv(&mut self) -> RedisResult<Value> {
        let reader = Buffered { stream: &mut self.stream, deadline: self.deadline, buf: &mut self.rbuf, pos: &mut self.rpos, end: &mut self.rend };
        self.parser.parse_value(reader)
    }
}

impl ConnectionLike for Connection {
    fn req_packed_command(&mut self, cmd: &[u8]) -> RedisResult<Value> {
        self.send(cmd)?;
        self.recv()
    }

    fn req_packed_commands(&mut self, cmd: &[u8], offset: usize, count: usize) -> RedisResult<Vec<Value>> {
        self.send(cmd)?;
        let mut out = Vec::with_capacity(count);
        for i in 0..offset + count {
            let v = self.recv()?;
            if i >= offset {
                out.push(v);
            }
        }
        Ok(out)
    }

    fn get_db(&self) -> i64 {
        self.db
    }

    fn check_connection(&mut self) -> bool {
        redis::cmd("PING").query::<String>(self).is_ok()
    }

    /// Always: a connection that failed is dropped by the pool, never used again.
    fn is_open(&self) -> bool {
        true
    }
}

/// A TCP connection to the first of `addrs` that accepts one before `deadline`.
fn tcp(addrs: Vec<std::net::SocketAddr>, deadline: Instant) -> io::Result<TcpStream> {
    let mut last = io::Error::new(io::ErrorKind::NotFound, "the host name resolved to no address");
    for addr in addrs {
        match TcpStream::connect_timeout(&addr, left(deadline)?) {
            Ok(s) => {
                s.set_nodelay(true)?;
                return Ok(s);
            }
            Err(e) => last = e,
        }
    }
    Err(last)
}

fn short(s: &str) -> String {
    s.chars().take(200).collect()
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
        short(&e.to_string())
    }
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool").field("timeout", &self.timeout).field("slots", &SLOTS).finish()
    }
}
