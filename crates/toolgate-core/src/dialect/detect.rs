//! `dialect: "auto"`: recognize a turn's dialect from its shape.

use serde_json::Value;

use super::{Dialect, Found, TurnOptions};
use crate::error::GateError;

/// Recognizes the dialect of `payload` and reads it. When several dialects recognize the shape,
/// each reads it: if exactly one finds calls (or none does) the answer is unambiguous; if the
/// readings disagree, or no dialect recognizes a shape, it is `E_DIALECT` naming the candidates.
pub fn detect(payload: &Value, opts: &TurnOptions) -> Result<(Dialect, Found), GateError> {
    let candidates: Vec<Dialect> = Dialect::ALL.into_iter().filter(|d| d.codec().recognizes(payload)).collect();
    let mut readings: Vec<(Dialect, Found)> = Vec::with_capacity(candidates.len());
    for d in &candidates {
        if let Ok(found) = d.codec().read(payload, opts) {
            readings.push((*d, found));
        }
    }
    if readings.is_empty() {
        return Err(match candidates.as_slice() {
            [] => GateError::Dialect("auto: this payload has the shape of no known dialect; pass `dialect` explicitly".into()),
            [only] => return only.codec().read(payload, opts).map(|f| (*only, f)),
            many => GateError::Dialect(format!("auto: the payload looks like {} but none of them can read it; pass `dialect` explicitly", names(many))),
        });
    }
    let with_calls: Vec<usize> = (0..readings.len()).filter(|&i| !readings[i].1.calls.is_empty()).collect();
    match with_calls.as_slice() {
        [] => Ok(readings.swap_remove(0)),
        [i] => Ok(readings.swap_remove(*i)),
        many => {
            let ds: Vec<Dialect> = many.iter().map(|&i| readings[i].0).collect();
            Err(GateError::Dialect(format!("auto: this turn has calls and reads as {}; pass `dialect` explicitly", names(&ds))))
        }
    }
}

fn names(ds: &[Dialect]) -> String {
    ds.iter().map(|d| d.as_str()).collect::<Vec<_>>().join(" or ")
}
