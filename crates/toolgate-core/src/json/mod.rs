//! JSON handling for untrusted input: a strict parser and JSON Pointer paths.

pub mod hazards;
pub mod parse;
pub mod pointer;

use serde_json::Value;

/// Nesting depth of a value (a scalar is 0, `{}` and `[]` are 1), counted without recursion.
pub fn depth_of(value: &Value) -> usize {
    let mut max = 0;
    let mut stack: Vec<(&Value, usize)> = vec![(value, 0)];
    while let Some((v, d)) = stack.pop() {
        match v {
            Value::Array(a) => {
                max = max.max(d + 1);
                stack.extend(a.iter().map(|x| (x, d + 1)));
            }
            Value::Object(o) => {
                max = max.max(d + 1);
                stack.extend(o.values().map(|x| (x, d + 1)));
            }
            _ => {}
        }
    }
    max
}
