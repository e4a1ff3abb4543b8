//! Taint kept by label NAME in the in-memory store: a session holds the ids of the names it was
//! raised to, and a read maps them to levels of the labels the gate passes. So a store shared
//! across a reload (one `GateState`, new `labels`) never reads a taint lower than it was raised.

use std::collections::HashMap;

use super::{Level, EVICTED};

/// The mark of a scope that reads as the top label whatever the labels: forgotten to make room,
/// raised past the labels, or raised to a new name once [`MAX_NAMES`] were taken.
pub(crate) const TOP: u16 = u16::MAX;

/// Distinct label names a store interns (over every config it has served): far more than one
/// config's 254; past it a raise to a new name keeps [`TOP`] (fail closed).
pub(crate) const MAX_NAMES: usize = 4096;

/// A session's taint: the ids of the names it was raised to (empty: clean), each once.
pub(crate) type Taint = Vec<u16>;

/// The names a store has seen, each given an id once.
#[derive(Debug, Default)]
pub(crate) struct Names {
    ids: HashMap<Box<str>, u16>,
    names: Vec<Box<str>>,
}

impl Names {
    fn id(&mut self, name: &str) -> u16 {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        if self.names.len() >= MAX_NAMES {
            return TOP;
        }
        let id = self.names.len() as u16;
        self.names.push(name.into());
        self.ids.insert(name.into(), id);
        id
    }

    /// The taint as a level of `labels`: the highest of its names there; [`EVICTED`] if one is
    /// [`TOP`] or a name `labels` does not hold (a label removed or renamed since).
    pub(crate) fn level(&self, taint: &[u16], labels: &[String]) -> Level {
        let mut top = 0;
        for &id in taint {
            let at = self.names.get(usize::from(id)).and_then(|n| labels.iter().position(|l| **l == **n));
            match at.and_then(|i| Level::try_from(i).ok()) {
                Some(level) if level != EVICTED => top = top.max(level),
                _ => return EVICTED,
            }
        }
        top
    }

    /// Adds `labels[level]`'s name to the taint ([`TOP`] for a level past `labels`). Every name
    /// is kept, not only a higher one: another order of the labels may rank it higher.
    pub(crate) fn raise(&mut self, taint: &mut Taint, level: Level, labels: &[String]) {
        if taint.contains(&TOP) {
            return;
        }
        let id = labels.get(usize::from(level)).map_or(TOP, |name| self.id(name));
        if !taint.contains(&id) {
            taint.push(id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(names: &[&str]) -> Vec<String> {
        names.iter().map(|&n| n.to_owned()).collect()
    }

    #[test]
    fn a_name_reads_at_its_place_in_any_labels() {
        let mut n = Names::default();
        let mut t = Taint::new();
        assert_eq!(n.level(&t, &labels(&["public", "secret"])), 0);
        n.raise(&mut t, 1, &labels(&["public", "secret"]));
        assert_eq!(n.level(&t, &labels(&["public", "secret"])), 1);
        assert_eq!(n.level(&t, &labels(&["public", "internal", "secret"])), 2, "a label inserted below");
        assert_eq!(n.level(&t, &labels(&["secret", "public"])), 0, "its own place, whatever it is");
        assert_eq!(n.level(&t, &labels(&["public", "confidential"])), EVICTED, "renamed or removed");
    }

    #[test]
    fn every_raised_name_counts_under_a_reorder() {
        let mut n = Names::default();
        let mut t = Taint::new();
        let a = labels(&["public", "internal", "secret"]);
        n.raise(&mut t, 2, &a);
        n.raise(&mut t, 1, &a); // lower under `a`: kept all the same
        n.raise(&mut t, 0, &a);
        assert_eq!(t.len(), 3);
        assert_eq!(n.level(&t, &a), 2);
        assert_eq!(n.level(&t, &labels(&["public", "secret", "internal"])), 2, "internal is now above secret");
        n.raise(&mut t, 2, &a);
        assert_eq!(t.len(), 3, "each name once");
    }

    #[test]
    fn top_is_sticky_and_names_are_bounded() {
        let mut n = Names::default();
        let mut t = Taint::new();
        n.raise(&mut t, EVICTED, &labels(&["public"]));
        assert_eq!(n.level(&t, &labels(&["public"])), EVICTED);
        n.raise(&mut t, 0, &labels(&["public"]));
        assert_eq!(t, [TOP]);
        for i in 0..MAX_NAMES {
            n.id(&format!("l{i}"));
        }
        let mut u = Taint::new();
        n.raise(&mut u, 0, &labels(&["one-too-many"]));
        assert_eq!(n.level(&u, &labels(&["one-too-many"])), EVICTED, "no id left: fails closed");
    }
}
