//! What a codec's `filter_tools` takes out of a tool list, recorded by position.
//!
//! Every codec filters through a [`Sieve`]: it asks the sieve whether a name may stay, and
//! removes elements and members only through it, so the removals are known as paths into the
//! list the caller sent. A host holding that list as objects (Node, Python) then removes the
//! same positions from its own objects instead of receiving the whole list back as text.

use serde_json::{Map, Value};

use super::shape::{index, key, Path};
use crate::json::pointer::Seg;

/// A tool-name test and the removals made so far, in document order.
///
/// Guarantees: each recorded path names an element or member of the list as the caller sent it
/// (indices are original positions, never shifted by an earlier removal); no recorded path is a
/// prefix of another; the paths are in document order (ascending indices within one array), so
/// removing them from last to first leaves every other path valid.
pub struct Sieve<'a> {
    keep: &'a dyn Fn(&str) -> bool,
    removed: Vec<Path>,
}

impl<'a> Sieve<'a> {
    /// A sieve keeping the names `keep` accepts.
    pub fn new(keep: &'a dyn Fn(&str) -> bool) -> Self {
        Sieve { keep, removed: Vec::new() }
    }

    /// The name test alone (copyable, for use inside a retain closure).
    pub fn keep(&self) -> &'a dyn Fn(&str) -> bool {
        self.keep
    }

    /// Keeps the elements of `arr` (at `path`) for which `kept` answers true, recording the others.
    pub fn retain(&mut self, path: &[Seg], arr: &mut Vec<Value>, mut kept: impl FnMut(usize, &Value) -> bool) {
        let mut i = 0;
        arr.retain(|v| {
            let k = kept(i, v);
            if !k {
                self.removed.push(index(path, i));
            }
            i += 1;
            k
        });
    }

    /// Keeps the members of `map` (at `path`) for which `kept` answers true, recording the others.
    pub fn retain_members(&mut self, path: &[Seg], map: &mut Map<String, Value>, mut kept: impl FnMut(&str, &Value) -> bool) {
        map.retain(|k, v| {
            let keep = kept(k, v);
            if !keep {
                self.removed.push(key(path, k));
            }
            keep
        });
    }

    /// Keeps the elements of `arr` (at `path`) that `decide` keeps, after it has filtered inside
    /// each one through this sieve (it is given the element's path). An element it does not keep
    /// goes whole: the removals made inside it give way to the element's own removal.
    pub fn retain_filtered<E>(
        &mut self,
        path: &[Seg],
        arr: &mut Vec<Value>,
        mut decide: impl FnMut(&mut Self, &[Seg], &mut Value) -> Result<bool, E>,
    ) -> Result<(), E> {
        let mut kept = Vec::with_capacity(arr.len());
        for (i, v) in arr.iter_mut().enumerate() {
            let p = index(path, i);
            let mark = self.mark();
            let k = decide(self, &p, v)?;
            if !k {
                self.forget_since(mark);
                self.removed.push(p);
            }
            kept.push(k);
        }
        let mut it = kept.into_iter();
        arr.retain(|_| it.next().unwrap_or(false));
        Ok(())
    }

    /// A mark to [`Sieve::forget_since`]: the removals recorded so far.
    pub fn mark(&self) -> usize {
        self.removed.len()
    }

    /// Forgets the removals recorded since `mark`: the container they were made in is about to
    /// be removed whole (so that no path is a prefix of another).
    pub fn forget_since(&mut self, mark: usize) {
        self.removed.truncate(mark);
    }

    /// The removals, in document order.
    pub fn into_removed(self) -> Vec<Path> {
        self.removed
    }
}

/// Filters `list` (a tool list in `d`'s request shape) in place through `d`'s codec, keeping the
/// names `keep` accepts; answers the removals (see [`Sieve`]). The one way every filter runs.
pub(crate) fn filter_list(d: super::Dialect, list: &mut Value, keep: &dyn Fn(&str) -> bool) -> Result<Vec<Path>, crate::error::GateError> {
    let mut sieve = Sieve::new(keep);
    d.codec().filter_tools(list, &mut sieve)?;
    Ok(sieve.into_removed())
}

/// Removes from `v` what `paths` name (as [`Sieve::into_removed`] answers them: document order,
/// none inside another), from last to first so that every index stays the one recorded. False,
/// with `v` partly edited, when a path names nothing in `v`: it is not the list the removals
/// were taken from. For a Rust host holding the list it sent as a `Value`.
pub fn remove_paths(v: &mut Value, paths: &[Path]) -> bool {
    paths.iter().rev().all(|p| remove_at(v, p))
}

fn remove_at(v: &mut Value, path: &[Seg]) -> bool {
    let Some((last, parents)) = path.split_last() else { return false };
    let mut at = v;
    for seg in parents {
        let next = match seg {
            Seg::Key(k) => at.get_mut(k.as_str()),
            Seg::Index(i) => at.get_mut(*i),
        };
        let Some(next) = next else { return false };
        at = next;
    }
    match (last, at) {
        (Seg::Key(k), Value::Object(m)) => m.shift_remove(k.as_str()).is_some(),
        (Seg::Index(i), Value::Array(a)) if *i < a.len() => {
            a.remove(*i);
            true
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn records_original_positions_in_order() {
        let keep = |n: &str| n != "b" && n != "d";
        let mut s = Sieve::new(&keep);
        let mut v = json!(["a", "b", "c", "d"]);
        let k = s.keep();
        s.retain(&[Seg::Key("tools".into())], v.as_array_mut().unwrap(), |_, t| k(t.as_str().unwrap()));
        assert_eq!(v, json!(["a", "c"]));
        assert_eq!(s.into_removed(), vec![vec![Seg::Key("tools".into()), Seg::Index(1)], vec![Seg::Key("tools".into()), Seg::Index(3)]]);
    }

    #[test]
    fn a_container_removed_whole_replaces_what_was_removed_inside_it() {
        let keep = |_: &str| false;
        let mut s = Sieve::new(&keep);
        let mut v = json!([{"x": 1, "y": 2}]);
        let r: Result<(), ()> = s.retain_filtered(&[], v.as_array_mut().unwrap(), |s, p, m| {
            s.retain_members(p, m.as_object_mut().unwrap(), |_, _| false);
            assert_eq!(s.mark(), 2);
            Ok(false)
        });
        assert!(r.is_ok());
        assert_eq!(s.into_removed(), vec![vec![Seg::Index(0)]]);
    }
}
