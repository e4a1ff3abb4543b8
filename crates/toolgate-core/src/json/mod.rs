//! JSON handling for untrusted input: a strict parser and JSON Pointer paths.

pub mod parse;
pub mod pointer;
