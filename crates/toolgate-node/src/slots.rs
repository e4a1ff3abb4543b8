//! A handle table: the objects the hot path names by a small integer (gates, prepared callers),
//! so a call passes a number instead of an object napi-rs would have to unwrap. A slot is freed
//! when the JS object owning it is collected, and reused by the next insert.

use std::sync::{Arc, RwLock, RwLockReadGuard};

/// Live objects by handle (`None`: a freed slot).
pub(crate) struct Slots<T>(RwLock<Vec<Option<Arc<T>>>>);

impl<T> Slots<T> {
    pub(crate) const fn new() -> Self {
        Slots(RwLock::new(Vec::new()))
    }

    /// Puts `v` in the first free slot; answers its handle.
    pub(crate) fn insert(&self, v: Arc<T>) -> u32 {
        let mut slots = self.0.write().unwrap_or_else(|e| e.into_inner());
        let v = Some(v);
        match slots.iter().position(Option::is_none) {
            Some(i) => {
                slots[i] = v;
                i as u32
            }
            None => {
                slots.push(v);
                (slots.len() - 1) as u32
            }
        }
    }

    /// Frees the slot `handle` (its owner is gone).
    pub(crate) fn remove(&self, handle: u32) {
        let mut slots = self.0.write().unwrap_or_else(|e| e.into_inner());
        if let Some(slot) = slots.get_mut(handle as usize) {
            *slot = None;
        }
    }

    /// The object `handle` names, if it is still live.
    pub(crate) fn get(&self, handle: u32) -> Option<Arc<T>> {
        self.read().get(handle as usize).and_then(Clone::clone)
    }

    /// The whole table under its read lock (the hot path borrows without cloning an `Arc`).
    pub(crate) fn read(&self) -> RwLockReadGuard<'_, Vec<Option<Arc<T>>>> {
        self.0.read().unwrap_or_else(|e| e.into_inner())
    }
}
