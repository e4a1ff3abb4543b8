//! RFC 4648 §5 base64url without padding, as JOSE uses it (RFC 7515 §2), plus a lenient decoder
//! for key material typed or pasted by people.
//!
//! The strict decoder accepts exactly what the encoder produces: the URL-safe alphabet, no `=`,
//! no whitespace, no impossible length, and zero unused bits in the last character. So every
//! byte string has exactly one accepted spelling, and a receipt cannot be re-spelled (a
//! different string, the same signature) to slip past a cache keyed on its text.

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Marks a byte outside the alphabet in [`DECODE`].
const INVALID: u8 = 0xff;

/// The value of each URL-safe alphabet byte, [`INVALID`] for every other byte.
const DECODE: [u8; 256] = {
    let mut t = [INVALID; 256];
    let mut i = 0;
    while i < 64 {
        t[ALPHABET[i] as usize] = i as u8;
        i += 1;
    }
    t
};

/// Characters needed to encode `n` bytes.
pub const fn encoded_len(n: usize) -> usize {
    (n * 4).div_ceil(3)
}

/// Appends the base64url (no padding) encoding of `bytes` to `out`.
pub fn encode_into(out: &mut String, bytes: &[u8]) {
    out.reserve(encoded_len(bytes.len()));
    let mut chunks = bytes.chunks_exact(3);
    for c in &mut chunks {
        let n = u32::from(c[0]) << 16 | u32::from(c[1]) << 8 | u32::from(c[2]);
        for shift in [18, 12, 6, 0] {
            out.push(char::from(ALPHABET[(n >> shift) as usize & 63]));
        }
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let n = rest.iter().enumerate().fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..=rest.len() {
            out.push(char::from(ALPHABET[(n >> (18 - 6 * i)) as usize & 63]));
        }
    }
}

/// The base64url (no padding) encoding of `bytes`.
pub fn encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(encoded_len(bytes.len()));
    encode_into(&mut out, bytes);
    out
}

/// Decodes canonical base64url without padding; `None` for anything else (see the module doc).
pub fn decode(text: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() / 4 * 3 + 2);
    decode_with(text, |b| out.push(b)).then_some(out)
}

/// Decodes canonical base64url into exactly `N` bytes; `None` when the text is not that.
pub fn decode_array<const N: usize>(text: &[u8]) -> Option<[u8; N]> {
    if text.len() != encoded_len(N) {
        return None;
    }
    let mut out = [0u8; N];
    let mut i = 0;
    decode_with(text, |b| {
        out[i] = b;
        i += 1;
    })
    .then_some(out)
}

/// Feeds the decoded bytes of canonical base64url `text` to `emit`; false when `text` is not
/// canonical (some bytes may have been emitted by then).
fn decode_with(text: &[u8], mut emit: impl FnMut(u8)) -> bool {
    if text.len() % 4 == 1 {
        return false;
    }
    let mut chunks = text.chunks(4);
    for chunk in &mut chunks {
        let mut n = 0u32;
        for &c in chunk {
            let v = DECODE[usize::from(c)];
            if v == INVALID {
                return false;
            }
            n = n << 6 | u32::from(v);
        }
        let bytes = chunk.len() - 1; // 4 chars → 3 bytes, 3 → 2, 2 → 1
        n <<= 6 * (4 - chunk.len());
        // Unused low bits of a short last chunk must be zero (one spelling per byte string).
        if n & (0x00ff_ffff >> (8 * bytes)) != 0 {
            return false;
        }
        for i in 0..bytes {
            emit((n >> (16 - 8 * i)) as u8);
        }
    }
    true
}

/// Decodes key material as people write it: base64url or standard base64, padded or not,
/// surrounding ASCII whitespace ignored. The result is written into `out` (so the caller owns,
/// and can wipe, every copy of a secret); returns the number of bytes, or `None` when the text
/// is not base64 of at most `out.len()` bytes.
pub fn decode_lenient(text: &str, out: &mut [u8]) -> Option<usize> {
    let body = text.trim_ascii().trim_end_matches('=');
    let padding = text.trim_ascii().len() - body.len();
    if padding > 2 || (padding > 0 && !(body.len() + padding).is_multiple_of(4)) {
        return None;
    }
    if body.len() % 4 == 1 || (body.len() * 3) / 4 > out.len() {
        return None;
    }
    let mut len = 0;
    let mut acc = 0u32;
    let mut bits = 0;
    for c in body.bytes() {
        let c = match c {
            b'+' => b'-',
            b'/' => b'_',
            c => c,
        };
        let v = DECODE[usize::from(c)];
        if v == INVALID {
            return None;
        }
        acc = (acc << 6 | u32::from(v)) & 0xffff;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            *out.get_mut(len)? = (acc >> bits) as u8;
            len += 1;
        }
    }
    Some(len)
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
