//! Resolving Redis's host name within an operation's deadline.
//!
//! The system resolver (`getaddrinfo`, behind `ToSocketAddrs`) takes no timeout: with a name
//! server that does not answer, a decision waited for the resolver's own timeouts (5 s a try by
//! default) instead of `timeoutMs`, holding one of libuv's four threads (Node) or the caller's
//! thread (Python) all that time. Here the lookup runs on a helper thread and the caller waits
//! for it only until its deadline, then fails (the gate refuses with `state_unavailable`). One
//! lookup per store at a time: callers that come while it runs wait on the same lookup, so a
//! resolver that hangs holds one helper thread, never one per decision. Each lookup is fresh
//! (no answer is kept: a Redis that moves is found at its new address). An address literal
//! (`127.0.0.1`, `::1`, `[::1]`) is used as it is, with no thread.

use std::io;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::Instant;

/// What a lookup found: the addresses, or why it failed (`io::Error` is not `Clone`).
type Found = Result<Vec<SocketAddr>, (io::ErrorKind, String)>;

/// Looks a host name up; the system resolver unless a test gives another.
pub(crate) type LookupFn = fn(&str, u16) -> io::Result<Vec<SocketAddr>>;

/// One lookup in flight: its answer once there is one, and a signal when it comes.
#[derive(Default)]
struct Lookup {
    found: Mutex<Option<Found>>,
    done: Condvar,
}

/// Resolves one host name and port, each time within the caller's deadline.
pub(crate) struct Resolver {
    host: String,
    port: u16,
    lookup: LookupFn,
    /// The lookup running now, if any (cleared by its thread when it ends).
    running: Arc<Mutex<Option<Arc<Lookup>>>>,
}

/// The system resolver.
fn system(host: &str, port: u16) -> io::Result<Vec<SocketAddr>> {
    (host, port).to_socket_addrs().map(Iterator::collect)
}

impl Resolver {
    /// A resolver for `host:port` through the system resolver.
    pub(crate) fn new(host: &str, port: u16) -> Resolver {
        Resolver::with_lookup(host, port, system)
    }

    /// A resolver for `host:port` through `lookup`.
    pub(crate) fn with_lookup(host: &str, port: u16, lookup: LookupFn) -> Resolver {
        Resolver { host: host.to_owned(), port, lookup, running: Arc::new(Mutex::new(None)) }
    }

    /// The host's addresses, or a `TimedOut` error once `deadline` passes first (the lookup
    /// then goes on alone, and a later call waits for it rather than starting another).
    pub(crate) fn resolve(&self, deadline: Instant) -> io::Result<Vec<SocketAddr>> {
        if let Ok(ip) = self.host.trim_start_matches('[').trim_end_matches(']').parse::<IpAddr>() {
            return Ok(vec![SocketAddr::new(ip, self.port)]);
        }
        let lookup = self.lookup_running()?;
        let mut found = lookup.found.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if let Some(f) = found.as_ref() {
                return f.clone().map_err(|(kind, msg)| io::Error::new(kind, msg));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(io::Error::new(io::ErrorKind::TimedOut, "timed out resolving the host name"));
            }
            found = lookup.done.wait_timeout(found, left).unwrap_or_else(PoisonError::into_inner).0;
        }
    }

    /// The lookup running now, or a new one on a new helper thread.
    fn lookup_running(&self) -> io::Result<Arc<Lookup>> {
        let mut running = self.running.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(l) = running.as_ref() {
            return Ok(Arc::clone(l));
        }
        let l = Arc::new(Lookup::default());
        let (mine, slot) = (Arc::clone(&l), Arc::clone(&self.running));
        let (host, port, lookup) = (self.host.clone(), self.port, self.lookup);
        std::thread::Builder::new().name("toolgate-redis-dns".into()).spawn(move || {
            let found = lookup(&host, port).map_err(|e| (e.kind(), e.to_string()));
            // this lookup is over: the next caller starts a fresh one
            *slot.lock().unwrap_or_else(PoisonError::into_inner) = None;
            *mine.found.lock().unwrap_or_else(PoisonError::into_inner) = Some(found);
            mine.done.notify_all();
        })?;
        *running = Some(Arc::clone(&l));
        Ok(l)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    static SLOW_LOOKUPS: AtomicUsize = AtomicUsize::new(0);

    /// A name server that answers after 1.5 s.
    fn slow(_: &str, port: u16) -> io::Result<Vec<SocketAddr>> {
        SLOW_LOOKUPS.fetch_add(1, Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(1500));
        Ok(vec![SocketAddr::from(([127, 0, 0, 1], port))])
    }

    fn unreachable(_: &str, _: u16) -> io::Result<Vec<SocketAddr>> {
        panic!("an address literal must not be looked up")
    }

    #[test]
    fn a_slow_name_server_costs_the_deadline_and_one_thread() {
        let r = Arc::new(Resolver::with_lookup("redis.internal", 6379, slow));
        let start = Instant::now();
        // eight decisions at once, each with 100 ms left
        let waiting: Vec<_> = (0..8)
            .map(|_| {
                let r = Arc::clone(&r);
                std::thread::spawn(move || r.resolve(Instant::now() + Duration::from_millis(100)))
            })
            .collect();
        for w in waiting {
            let e = w.join().expect("no panic").expect_err("timed out");
            assert_eq!(e.kind(), io::ErrorKind::TimedOut);
        }
        assert!(start.elapsed() < Duration::from_millis(1000), "waited {:?}, not the deadline", start.elapsed());
        assert_eq!(SLOW_LOOKUPS.load(Ordering::SeqCst), 1, "one lookup for all eight");
        // a caller with time enough gets the running lookup's answer, not a second lookup
        let addrs = r.resolve(Instant::now() + Duration::from_secs(5)).expect("resolved");
        assert_eq!(addrs, vec![SocketAddr::from(([127, 0, 0, 1], 6379))]);
        assert_eq!(SLOW_LOOKUPS.load(Ordering::SeqCst), 1);
        // once it ended, the next call looks the name up afresh
        let again = Arc::clone(&r);
        let t = std::thread::spawn(move || again.resolve(Instant::now() + Duration::from_secs(5)));
        assert!(t.join().expect("no panic").is_ok());
        assert_eq!(SLOW_LOOKUPS.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn address_literals_are_not_looked_up() {
        for (host, ip) in [("127.0.0.1", "127.0.0.1"), ("::1", "::1"), ("[::1]", "::1")] {
            let r = Resolver::with_lookup(host, 6379, unreachable);
            let addrs = r.resolve(Instant::now() + Duration::from_millis(10)).expect("literal");
            assert_eq!(addrs, vec![SocketAddr::new(ip.parse().expect("ip"), 6379)]);
        }
    }

    #[test]
    fn the_system_resolver_finds_localhost_and_refuses_a_bad_name() {
        let r = Resolver::new("localhost", 6379);
        let addrs = r.resolve(Instant::now() + Duration::from_secs(5)).expect("localhost resolves");
        assert!(addrs.iter().all(|a| a.ip().is_loopback() && a.port() == 6379), "{addrs:?}");
        // a name that cannot exist (RFC 6761 `.invalid`) fails, within the deadline or sooner
        let bad = Resolver::new("no-such-host.invalid", 6379);
        assert!(bad.resolve(Instant::now() + Duration::from_secs(5)).is_err());
    }
}
