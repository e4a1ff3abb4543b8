//! Where canonical JSON text goes (`jcs.rs` writes it, `number.rs` its numbers): a `String`, or
//! straight into a hash so no text is kept.

/// Where canonical text goes: a `String`, or straight into a hash so no text is kept.
pub(crate) trait Sink {
    /// Appends `s`.
    fn put(&mut self, s: &str);
}

impl Sink for String {
    fn put(&mut self, s: &str) {
        self.push_str(s);
    }
}

impl Sink for sha2::Sha256 {
    fn put(&mut self, s: &str) {
        sha2::Digest::update(self, s.as_bytes());
    }
}
