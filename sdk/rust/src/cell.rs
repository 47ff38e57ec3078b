//! A single-assignment cell (std's `OnceCell` needs Rust 1.70; we support 1.63).

use std::cell::UnsafeCell;

/// Holds a value set at most once; shared references to it stay valid until the cell is
/// dropped.
pub(crate) struct Once<T> {
    slot: UnsafeCell<Option<T>>,
}

impl<T> Default for Once<T> {
    fn default() -> Self {
        Once { slot: UnsafeCell::new(None) }
    }
}

impl<T> Once<T> {
    /// A cell already holding `v`.
    pub(crate) fn with(v: T) -> Self {
        Once { slot: UnsafeCell::new(Some(v)) }
    }

    /// The value, if set.
    pub(crate) fn get(&self) -> Option<&T> {
        // SAFETY: once set, the slot is never changed again.
        unsafe { (*self.slot.get()).as_ref() }
    }

    /// The value, computing it on first use.
    pub(crate) fn get_or_init(&self, f: impl FnOnce() -> T) -> &T {
        if let Some(v) = self.get() {
            return v;
        }
        let v = f();
        // SAFETY: no reference into the slot exists while it is `None`; a re-entrant
        // initialisation by `f` is detected below instead of overwriting a live value.
        let slot = unsafe { &mut *self.slot.get() };
        assert!(slot.is_none(), "re-entrant lazy initialisation");
        *slot = Some(v);
        slot.as_ref().expect("just set")
    }
}
