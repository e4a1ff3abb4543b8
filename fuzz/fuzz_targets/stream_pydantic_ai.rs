//! Fuzzes `Gate::stream` with `Dialect::PydanticAi`: the input's lines are the stream's events. The
//! oracle is in `common/stream.rs`; seeds in `corpus/stream_pydantic_ai/` (regenerate with
//! `node fuzz/seeds.mjs`).

#![no_main]

#[path = "common/stream.rs"]
mod stream;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| stream::run(toolgate_core::Dialect::PydanticAi, data));
