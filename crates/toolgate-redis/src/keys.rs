//! Key names. Scopes and tokens are digested (SHA-256, 128 bits in hex): Redis never holds a
//! session id, subject or usable token in clear, and a key's length is bounded whatever the caller
//! sent.

use sha2::{Digest, Sha256};

/// Builds the keys of one store (all under its prefix).
#[derive(Debug, Clone)]
pub(crate) struct Keys {
    prefix: String,
}

fn digest(kind: u8, text: &str) -> String {
    let mut h = Sha256::new();
    h.update([kind]);
    h.update(text.as_bytes());
    let d = h.finalize();
    let mut out = String::with_capacity(32);
    for b in &d[..16] {
        out.push(char::from_digit(u32::from(b >> 4), 16).unwrap_or('0'));
        out.push(char::from_digit(u32::from(b & 15), 16).unwrap_or('0'));
    }
    out
}

impl Keys {
    pub(crate) fn new(prefix: &str) -> Keys {
        Keys { prefix: prefix.to_owned() }
    }

    /// A scope's taint: the set of the label names it was raised to.
    pub(crate) fn taint(&self, scope: &str) -> String {
        format!("{}t:{}", self.prefix, digest(b's', scope))
    }

    /// A scope's loop counters: a hash, call key (see [`Keys::call`]) → its recent timestamps.
    pub(crate) fn loops(&self, scope: &str) -> String {
        format!("{}l:{}", self.prefix, digest(b's', scope))
    }

    /// The order in which a scope's call keys were last used (a sorted set), so the hash of
    /// [`Keys::loops`] forgets the least recently used first.
    pub(crate) fn loop_order(&self, scope: &str) -> String {
        format!("{}u:{}", self.prefix, digest(b's', scope))
    }

    /// A call key as a field of [`Keys::loops`].
    pub(crate) fn call(key: u128) -> String {
        format!("{key:032x}")
    }

    /// One rate counter's current window (a string holding an integer).
    pub(crate) fn rate(&self, key: &str, window_start: u64) -> String {
        format!("{}r:{key}:{window_start}", self.prefix)
    }

    /// A pending confirmation (JSON).
    pub(crate) fn token(&self, token: &str) -> String {
        format!("{}c:{}", self.prefix, digest(b'c', token))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_hide_what_they_name() {
        let k = Keys::new("tg:");
        let t = k.taint("alice@example.com");
        assert!(t.starts_with("tg:t:") && !t.contains("alice") && t.len() == 5 + 32);
        assert_ne!(k.taint("a"), k.taint("b"));
        assert_ne!(k.token("x"), k.taint("x").replace("t:", "c:"), "kinds are digested apart");
        assert_eq!(Keys::call(1), "00000000000000000000000000000001");
        assert_eq!(k.loops("s").replace("tg:l:", ""), k.loop_order("s").replace("tg:u:", ""), "one scope, two keys");
    }
}
