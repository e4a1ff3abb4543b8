//! Fuzzes the strict JSON parser (`toolgate_core::json::parse::parse_slice`) with arbitrary
//! bytes under the default limits.
//!
//! Oracle (a panic = a finding):
//! - `parse_slice` never panics;
//! - on `Ok(v)`: `v` serialized by serde_json and parsed again gives `v` (the size limit is
//!   lifted for the second parse only, since `1e2` re-serializes longer as `100.0`);
//! - agreement with plain serde_json: on `Ok(v)`, `serde_json::from_slice` gives the same
//!   value; where plain serde_json accepts the bytes, the strict parser refuses them only for
//!   one of its documented extra rules (duplicate key, prototype key, depth, size), never as a
//!   syntax error or a non-finite number.
//! - `json::hazards::find` (case-twin keys, unsafe integers) never panics on a parsed value.

#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use toolgate_core::json::parse::{parse_slice, Limits, ParseError};

fuzz_target!(|data: &[u8]| {
    let limits = Limits::default();
    let strict = parse_slice(data, &limits);
    let plain = serde_json::from_slice::<Value>(data);

    match &strict {
        Ok(v) => {
            let found = toolgate_core::json::hazards::find(v, true, true);
            if let Some(e) = &found {
                assert!(!e.to_string().is_empty());
            }
            let text = serde_json::to_string(v).expect("a parsed value serializes");
            let relaxed = Limits { max_bytes: usize::MAX, ..limits };
            match parse_slice(text.as_bytes(), &relaxed) {
                Ok(again) => assert_eq!(&again, v, "re-parse differs; text: {text}"),
                Err(e) => panic!("re-serialized value does not parse again: {e:?}\ntext: {text}"),
            }
            match &plain {
                Ok(p) => assert_eq!(p, v, "strict and plain serde_json parse to different values"),
                Err(e) => panic!("strict parser accepted what serde_json refuses: {e}"),
            }
        }
        Err(e) => {
            if plain.is_ok() {
                assert!(
                    matches!(e, ParseError::DuplicateKey { .. } | ParseError::ProtoKey { .. } | ParseError::TooDeep { .. } | ParseError::TooLarge { .. }),
                    "serde_json accepts the input but the strict parser refuses it with {e:?}"
                );
            }
            assert!(!e.to_string().is_empty());
        }
    }
});
