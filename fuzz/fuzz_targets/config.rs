//! Fuzzes config loading (`toolgate_core::Gate::from_json`) with arbitrary text: the config
//! file and every tool schema in it are untrusted too.
//!
//! Oracle (a panic = a finding):
//! - `Gate::from_json` never panics: it returns a gate or an `E_CONFIG` error with a message;
//! - a gate that compiled answers `check` for each declared tool on `{}` and on the empty
//!   string without panicking, and an allowed answer carries arguments.

#![no_main]

use libfuzzer_sys::fuzz_target;
use toolgate_core::Gate;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    match Gate::from_json(text) {
        Ok(gate) => {
            let names: Vec<String> = gate.tool_names().map(str::to_owned).collect();
            for name in names.iter().take(8) {
                for args in ["{}", ""] {
                    let v = gate.check(name, args);
                    assert_eq!(v.allowed(), v.arguments.is_some());
                }
            }
        }
        Err(e) => {
            assert_eq!(e.code(), "E_CONFIG");
            assert!(!e.to_string().is_empty());
        }
    }
});
