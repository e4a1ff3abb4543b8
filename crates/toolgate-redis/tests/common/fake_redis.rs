//! A fake Redis on loopback speaking just enough RESP for the store (real sockets, no mock):
//! `INFO` answers what the test chose, the decision script (`EVALSHA`/`EVAL`) "nothing seen,
//! recorded", `GET`/`GETDEL` nil, everything else `+OK`; replies can be trickled one byte at a
//! time. Included with `#[path]` by the tests that use it.

#![allow(dead_code)] // each test file uses a part of it

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

/// Which replies are sent one byte per `gap`.
#[derive(Clone, Copy, PartialEq)]
pub enum Trickle {
    /// None: every reply at once.
    Nothing,
    /// Those of the store's commands, not those of connecting (`AUTH`, `SELECT`, `INFO`, …).
    Commands { gap: Duration },
    /// Every reply, from the first of connecting on.
    All { gap: Duration },
}

/// The `INFO memory` reply of a Redis whose policy is `policy`.
pub fn info_with_policy(policy: &str) -> Vec<u8> {
    bulk(&format!("# Memory\r\nused_memory:1000000\r\nmaxmemory:0\r\nmaxmemory_policy:{policy}\r\n"))
}

/// A RESP bulk string.
pub fn bulk(body: &str) -> Vec<u8> {
    format!("${}\r\n{body}\r\n", body.len()).into_bytes()
}

/// One RESP command (an array of bulk strings), `None` at the end of the stream.
fn read_command(r: &mut impl BufRead) -> Option<Vec<Vec<u8>>> {
    let mut line = String::new();
    r.read_line(&mut line).ok().filter(|&n| n > 0)?;
    let n: usize = line.trim_end().strip_prefix('*')?.parse().ok()?;
    let mut args = Vec::with_capacity(n);
    for _ in 0..n {
        line.clear();
        r.read_line(&mut line).ok()?;
        let len: usize = line.trim_end().strip_prefix('$')?.parse().ok()?;
        let mut arg = vec![0u8; len + 2];
        r.read_exact(&mut arg).ok()?;
        arg.truncate(len);
        args.push(arg);
    }
    Some(args)
}

fn serve(c: TcpStream, info: &[u8], trickle: Trickle) {
    let Ok(read_half) = c.try_clone() else { return };
    let mut r = BufReader::new(read_half);
    let mut w = c;
    while let Some(cmd) = read_command(&mut r) {
        let name = cmd.first().map(|n| n.to_ascii_uppercase()).unwrap_or_default();
        let setup = matches!(name.as_slice(), b"AUTH" | b"SELECT" | b"INFO" | b"CLIENT" | b"HELLO");
        let out = match name.as_slice() {
            b"INFO" => info.to_vec(),
            b"EVALSHA" | b"EVAL" => b"*4\r\n:0\r\n:0\r\n:1\r\n:0\r\n".to_vec(),
            b"GET" | b"GETDEL" => b"$-1\r\n".to_vec(),
            _ => b"+OK\r\n".to_vec(),
        };
        let gap = match trickle {
            Trickle::All { gap } => Some(gap),
            Trickle::Commands { gap } if !setup => Some(gap),
            _ => None,
        };
        if let Some(gap) = gap {
            for b in out {
                if w.write_all(&[b]).is_err() {
                    return;
                }
                std::thread::sleep(gap);
            }
        } else if w.write_all(&out).is_err() {
            return;
        }
    }
}

/// A fake Redis on a free loopback port answering `INFO` with `info`; each connection on its
/// own thread.
pub fn start(info: Vec<u8>, trickle: Trickle) -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for c in l.incoming().take(64).flatten() {
            let info = info.clone();
            std::thread::spawn(move || serve(c, &info, trickle));
        }
    });
    port
}
