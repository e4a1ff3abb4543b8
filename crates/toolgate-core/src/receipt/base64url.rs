//! RFC 4648 §5 base64url without padding, as JOSE uses it (RFC 7515 §2), plus a lenient decoder
//! for key material typed or pasted by people — a thin layer over `data-encoding`.
//!
//! The strict decoder accepts exactly what the encoder produces: the URL-safe alphabet, no `=`,
//! no whitespace, no impossible length, and zero unused bits in the last character
//! (`data-encoding` checks trailing bits). So every byte string has exactly one accepted
//! spelling, and a receipt cannot be re-spelled (a different string, the same signature) to slip
//! past a cache keyed on its text.

use std::sync::LazyLock;

use data_encoding::{Encoding, Specification, BASE64URL_NOPAD};

/// Characters needed to encode `n` bytes.
pub const fn encoded_len(n: usize) -> usize {
    (n * 4).div_ceil(3)
}

/// Appends the base64url (no padding) encoding of `bytes` to `out`.
pub fn encode_into(out: &mut String, bytes: &[u8]) {
    BASE64URL_NOPAD.encode_append(bytes, out);
}

/// The base64url (no padding) encoding of `bytes`.
pub fn encode(bytes: &[u8]) -> String {
    BASE64URL_NOPAD.encode(bytes)
}

/// Decodes canonical base64url without padding; `None` for anything else (see the module doc).
pub fn decode(text: &[u8]) -> Option<Vec<u8>> {
    BASE64URL_NOPAD.decode(text).ok()
}

/// Decodes canonical base64url into exactly `N` bytes; `None` when the text is not that.
pub fn decode_array<const N: usize>(text: &[u8]) -> Option<[u8; N]> {
    if text.len() != encoded_len(N) {
        return None;
    }
    let mut out = [0u8; N];
    match BASE64URL_NOPAD.decode_mut(text, &mut out) {
        Ok(n) if n == N => Some(out),
        _ => None,
    }
}

/// Base64url or standard base64 (`+` and `/` read as `-` and `_`), no padding, unused bits
/// ignored: what [`decode_lenient`] decodes once padding and surrounding whitespace are cut.
static LENIENT: LazyLock<Encoding> = LazyLock::new(|| {
    let mut spec = Specification::new();
    spec.symbols.push_str("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_");
    spec.translate.from.push_str("+/");
    spec.translate.to.push_str("-_");
    spec.check_trailing_bits = false;
    spec.encoding().expect("a valid base64 specification")
});

/// Decodes key material as people write it: base64url or standard base64, padded or not,
/// surrounding ASCII whitespace ignored. The result is written into `out` (so the caller owns,
/// and can wipe, every copy of a secret: the text is decoded in place, never copied); returns the
/// number of bytes, or `None` when the text is not base64 of at most `out.len()` bytes.
pub fn decode_lenient(text: &str, out: &mut [u8]) -> Option<usize> {
    let trimmed = text.trim_ascii();
    let body = trimmed.trim_end_matches('=');
    let padding = trimmed.len() - body.len();
    if padding > 2 || (padding > 0 && !(body.len() + padding).is_multiple_of(4)) {
        return None;
    }
    let len = LENIENT.decode_len(body.len()).ok()?;
    if len > out.len() {
        return None;
    }
    LENIENT.decode_mut(body.as_bytes(), &mut out[..len]).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const VECTORS: [(&[u8], &str); 8] = [
        (b"", ""),
        (b"f", "Zg"),
        (b"fo", "Zm8"),
        (b"foo", "Zm9v"),
        (b"foob", "Zm9vYg"),
        (b"fooba", "Zm9vYmE"),
        (b"foobar", "Zm9vYmFy"),
        (&[0xfb, 0xff, 0xbf], "-_-_"),
    ];

    #[test]
    fn rfc4648_vectors_both_ways() {
        for (bytes, text) in VECTORS {
            assert_eq!(encode(bytes), text);
            assert_eq!(decode(text.as_bytes()).as_deref(), Some(bytes), "{text}");
            let mut buf = [0u8; 8];
            let n = decode_lenient(text, &mut buf).unwrap();
            assert_eq!(&buf[..n], bytes);
        }
    }

    #[test]
    fn strict_decoder_refuses_other_spellings() {
        for bad in ["Zg==", "Zm9v\n", "Z", "Zm9vY", "+/+/", "Zh", "Zm9", "Zm8=", " Zg", "Zm.v"] {
            assert_eq!(decode(bad.as_bytes()), None, "{bad:?}");
        }
    }

    #[test]
    fn every_length_round_trips() {
        let bytes: Vec<u8> = (0..=255u8).collect();
        for n in 0..bytes.len() {
            let text = encode(&bytes[..n]);
            assert_eq!(text.len(), encoded_len(n));
            assert_eq!(decode(text.as_bytes()).as_deref(), Some(&bytes[..n]));
        }
        let arr: [u8; 32] = core::array::from_fn(|i| i as u8 * 7);
        assert_eq!(decode_array::<32>(encode(&arr).as_bytes()), Some(arr));
        assert_eq!(decode_array::<31>(encode(&arr).as_bytes()), None);
    }

    #[test]
    fn lenient_decoder_takes_standard_and_padded_forms() {
        let mut buf = [0u8; 4];
        assert_eq!(decode_lenient(" +/+/\n", &mut buf), Some(3));
        assert_eq!(buf[..3], [0xfb, 0xff, 0xbf]);
        assert_eq!(decode_lenient("Zg==", &mut buf), Some(1));
        assert_eq!(decode_lenient("Zm8=", &mut buf), Some(2));
        assert_eq!(decode_lenient("Zg=", &mut buf), None);
        assert_eq!(decode_lenient("Zg===", &mut buf), None);
        assert_eq!(decode_lenient("Z", &mut buf), None);
        assert_eq!(decode_lenient("Zm9vYmFy", &mut buf), None, "too long for the buffer");
        assert_eq!(decode_lenient("Zm 9v", &mut buf), None);
    }
}
