//! Decisions waiting for the plugged engines (`toolgate_core::PendingCall`, `PendingTurn`), kept
//! here between the engines' two steps and named by a number, as gates and callers are
//! (`slots.rs`). A napi class per waiting decision cost ~8 µs to make (its wrap and finalizer),
//! more than the whole `check`; a number costs nothing. `src-ts/gate.ts` takes every handle it
//! is given exactly once: it finishes it, or releases it when asking the engines failed.
//!
//! A handle is the slot's index in its low 16 bits and the slot's generation in its high 16
//! bits, so a handle used twice, or kept after its slot was reused, names nothing rather than
//! another decision. At most [`CAPACITY`] decisions wait at once: one more is refused (`E_CONFIG`)
//! rather than kept without bound.

use std::sync::Mutex;

use napi::Error;

/// Most decisions waiting for the engines at once, per kind (calls, turns).
pub(crate) const CAPACITY: usize = 1 << 16;

/// The error of a first step when [`CAPACITY`] decisions already wait for the engines.
pub(crate) fn too_many() -> Error<String> {
    Error::new(
        "E_CONFIG".to_string(),
        format!("{CAPACITY} decisions are already waiting for the policy engines; nothing more is taken until they are answered"),
    )
}

/// A bounded table of waiting decisions (see the module docs).
pub(crate) struct Pending<T>(Mutex<Table<T>>);

struct Table<T> {
    slots: Vec<(u16, Option<T>)>,
    free: Vec<u16>,
}

impl<T> Pending<T> {
    pub(crate) const fn new() -> Self {
        Pending(Mutex::new(Table { slots: Vec::new(), free: Vec::new() }))
    }

    /// Keeps `v`; answers its handle, or `None` when [`CAPACITY`] decisions already wait.
    pub(crate) fn insert(&self, v: T) -> Option<u32> {
        let mut t = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let index = match t.free.pop() {
            Some(i) => i,
            None if t.slots.len() < CAPACITY => {
                t.slots.push((0, None));
                (t.slots.len() - 1) as u16
            }
            None => return None,
        };
        let slot = &mut t.slots[usize::from(index)];
        slot.0 = slot.0.wrapping_add(1);
        slot.1 = Some(v);
        Some((u32::from(slot.0) << 16) | u32::from(index))
    }

    /// Takes the decision `handle` names out of the table (`None`: taken before, or never given).
    pub(crate) fn take(&self, handle: u32) -> Option<T> {
        let index = (handle & 0xffff) as u16;
        let generation = (handle >> 16) as u16;
        let mut t = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let slot = t.slots.get_mut(usize::from(index)).filter(|s| s.0 == generation)?;
        let v = slot.1.take()?;
        t.free.push(index);
        Some(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_handle_names_its_decision_once_and_never_another_one() {
        let p: Pending<&str> = Pending::new();
        let a = p.insert("a").unwrap();
        assert_eq!(p.take(a), Some("a"));
        assert_eq!(p.take(a), None, "taken once");
        let b = p.insert("b").unwrap();
        assert_eq!(b & 0xffff, a & 0xffff, "the slot is reused");
        assert_eq!(p.take(a), None, "an old handle does not name the new decision");
        assert_eq!(p.take(b), Some("b"));
        assert_eq!(p.take(12345), None);
    }

    #[test]
    fn at_most_capacity_decisions_wait() {
        let p: Pending<u32> = Pending::new();
        let handles: Vec<u32> = (0..CAPACITY as u32).map(|i| p.insert(i).unwrap()).collect();
        assert_eq!(p.insert(0), None, "one more is refused");
        assert_eq!(p.take(handles[7]), Some(7));
        assert!(p.insert(1).is_some(), "a freed slot is used again");
    }
}
