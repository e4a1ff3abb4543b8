//! Fuzzes `Gate::guard` with `Dialect::AiSdkUi` on arbitrary turn text, with `auto` and
//! `filter_tools` on the same text. The oracle is in `common/dialect.rs`; seeds in
//! `corpus/dialect_ai_sdk_ui/` (regenerate with `node fuzz/seeds.mjs`).

#![no_main]

#[path = "common/dialect.rs"]
mod dialect;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| dialect::run(toolgate_core::Dialect::AiSdkUi, data));
