//! A real `redis-server` on a free loopback port, stopped when dropped.
//!
//! Tests run in parallel threads, each starting its own server: a port found free can be taken by
//! another test's server before this one binds it (this one then exits, and a plain "something
//! answers on the port" check would pass on the other test's server — which that test may kill).
//! So a server counts as started only when the process answering on the port is the one spawned
//! here (`INFO server`'s `process_id`); otherwise another port is tried.

#![allow(dead_code)] // each test file uses a part of it

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Redis {
    pub port: u16,
    /// More `redis-server` arguments (`--maxmemory-policy volatile-lru`, …).
    args: Vec<String>,
    child: Option<Child>,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// The `process_id` of the Redis answering on `port`, if one answers.
fn pid_on(port: u16) -> Option<u32> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    s.write_all(b"INFO server\r\n").ok()?;
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = s.read(&mut buf).ok()?;
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&got);
        // the value is whole once its line has ended
        if let Some(at) = text.find("process_id:") {
            if let Some(end) = text[at..].find('\n') {
                return text[at + "process_id:".len()..at + end].trim().parse().ok();
            }
        }
    }
    None
}

impl Redis {
    pub fn start() -> Redis {
        Redis::start_with(&[])
    }

    /// A server started with `args` after the defaults (`--maxmemory-policy volatile-lru`, …).
    pub fn start_with(args: &[&str]) -> Redis {
        for _ in 0..10 {
            let mut r = Redis { port: free_port(), args: args.iter().map(|a| a.to_string()).collect(), child: None };
            if r.try_start() {
                return r;
            }
        }
        panic!("redis-server did not start on any of 10 free ports");
    }

    /// A server on `port`, only if it is the one answering there (see the module docs).
    pub fn start_on(port: u16) -> Option<Redis> {
        let mut r = Redis { port, args: Vec::new(), child: None };
        r.try_start().then_some(r)
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// Starts (again) on the same port; waits until it accepts connections.
    pub fn restart(&mut self) {
        assert!(self.try_start(), "redis-server did not start again on port {}", self.port);
    }

    /// Spawns a server on `self.port` and waits until it is the one answering there; `false` (the
    /// process stopped) when it exits first or another process holds the port.
    fn try_start(&mut self) -> bool {
        let mut child = Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .args(&self.args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server must be installed (apt-get install -y redis-server)");
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(10) {
            if matches!(child.try_wait(), Ok(Some(_))) {
                return false;
            }
            match pid_on(self.port) {
                Some(pid) if pid == child.id() => {
                    self.child = Some(child);
                    return true;
                }
                Some(_) => break,
                None => std::thread::sleep(Duration::from_millis(20)),
            }
        }
        let _ = child.kill();
        let _ = child.wait();
        false
    }

    /// SIGKILL: the process is gone at once, as in a crash.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.kill();
    }
}
