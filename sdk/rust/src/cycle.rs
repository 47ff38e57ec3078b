//! Per-cycle state: the [`CycleState`] map, the cached current pod and node list.
//!
//! The host never says when a scheduling cycle starts, so the SDK decides:
//!
//! * **With a `prefilter` export** (list `prefilter` in `register!`; the default
//!   [`crate::PreFilter`] method does nothing else): every `prefilter` call starts a new
//!   cycle. The state map, the current pod and the node list are cleared there and then
//!   kept for every later hook of the cycle, so the pod is fetched and decoded once per
//!   cycle. This is what upstream's TinyGo SDK always does.
//! * **Without it**: the pod and the node list are cached for one hook call only, and the
//!   state map is cleared whenever a hook runs for a pod with a different UID than the one
//!   that wrote it (checked only while the map is non-empty). A retry of the *same* pod
//!   may then still see state from its previous attempt; export `prefilter` if that
//!   matters.

use crate::lister;
use crate::pod::LazyPod;
use std::any::Any;
use std::cell::RefCell;

/// A typed map shared by the hooks of one scheduling cycle (framework `CycleState`).
/// Values are keyed by string; reading with a different type than written yields `None`.
#[derive(Default)]
pub struct CycleState {
    entries: Vec<(String, Box<dyn Any>)>,
}

impl CycleState {
    /// An empty state.
    pub fn new() -> Self {
        CycleState::default()
    }

    fn index(&self, key: &str) -> Option<usize> {
        self.entries.iter().position(|(k, _)| k == key)
    }

    /// Stores `value` under `key`, replacing any previous value.
    pub fn write<T: Any>(&mut self, key: &str, value: T) {
        let boxed: Box<dyn Any> = Box::new(value);
        match self.index(key) {
            Some(i) => self.entries[i].1 = boxed,
            None => self.entries.push((key.to_string(), boxed)),
        }
    }

    /// The value under `key`, if present and of type `T`.
    pub fn read<T: Any>(&self, key: &str) -> Option<&T> {
        self.index(key).and_then(|i| self.entries[i].1.downcast_ref())
    }

    /// Mutable access to the value under `key`.
    pub fn read_mut<T: Any>(&mut self, key: &str) -> Option<&mut T> {
        match self.index(key) {
            Some(i) => self.entries[i].1.downcast_mut(),
            None => None,
        }
    }

    /// Removes and returns the value under `key` if it has type `T` (else leaves it).
    pub fn take<T: Any>(&mut self, key: &str) -> Option<T> {
        let i = self.index(key)?;
        if !self.entries[i].1.is::<T>() {
            return None;
        }
        let (_, v) = self.entries.swap_remove(i);
        v.downcast().ok().map(|b| *b)
    }

    /// Removes `key`; true if it was present.
    pub fn delete(&mut self, key: &str) -> bool {
        match self.index(key) {
            Some(i) => {
                self.entries.swap_remove(i);
                true
            }
            None => false,
        }
    }

    /// Whether `key` is present.
    pub fn contains(&self, key: &str) -> bool {
        self.index(key).is_some()
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the state is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Removes every entry.
    pub fn clear(&mut self) {
        self.entries.clear();
    }
}

impl std::fmt::Debug for CycleState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.entries.iter().map(|(k, _)| k)).finish()
    }
}

struct Cycle {
    state: CycleState,
    pod: LazyPod,
    /// Set by the first `prefilter` call: cycles are delimited by prefilter.
    prefilter_mode: bool,
    /// UID of the pod whose hooks wrote `state` (per-call mode only).
    owner: Option<String>,
}

impl Cycle {
    fn new() -> Self {
        Cycle { state: CycleState::new(), pod: LazyPod::current(), prefilter_mode: false, owner: None }
    }
}

thread_local! {
    static CYCLE: RefCell<Cycle> = RefCell::new(Cycle::new());
}

/// Starts a new cycle (called by the `prefilter` export before the plugin runs).
pub(crate) fn start_cycle() {
    CYCLE.with(|c| {
        let mut c = c.borrow_mut();
        c.prefilter_mode = true;
        c.state.clear();
        c.pod = LazyPod::current();
        c.owner = None;
    });
    lister::clear_cache();
}

/// Forgets everything (tests).
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn reset_all() {
    CYCLE.with(|c| *c.borrow_mut() = Cycle::new());
    lister::clear_cache();
    crate::sys::reset_hints();
}

/// Runs a cycle hook with the cycle's state and current pod.
pub(crate) fn with_cycle<R>(f: impl FnOnce(&mut CycleState, &LazyPod) -> R) -> R {
    CYCLE.with(|cell| {
        let mut guard = cell.borrow_mut();
        let c = &mut *guard;
        if !c.prefilter_mode {
            c.pod = LazyPod::current();
            lister::clear_cache();
            if !c.state.is_empty() && c.owner.as_deref() != Some(c.pod.uid()) {
                c.state.clear();
                c.owner = None;
            }
        }
        let r = f(&mut c.state, &c.pod);
        if !c.prefilter_mode && !c.state.is_empty() && c.owner.is_none() {
            c.owner = Some(c.pod.uid().to_string());
        }
        r
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pb::Writer;
    use crate::testing;

    fn pod(uid: &str) -> Vec<u8> {
        let mut w = Writer::new();
        w.message(1, |m| {
            m.string(1, "p").string(5, uid);
        });
        w.finish()
    }

    #[test]
    fn typed_map() {
        let mut s = CycleState::new();
        s.write("a", 1u8);
        s.write("b", String::from("x"));
        assert_eq!(s.read::<u8>("a"), Some(&1));
        assert_eq!(s.read::<u16>("a"), None);
        *s.read_mut::<u8>("a").unwrap() = 5;
        assert_eq!(s.read::<u8>("a"), Some(&5));
        s.write("a", 7u32);
        assert_eq!(s.read::<u32>("a"), Some(&7));
        assert_eq!(s.len(), 2);
        assert_eq!(s.take::<u8>("a"), None);
        assert_eq!(s.take::<u32>("a"), Some(7));
        assert!(!s.contains("a"));
        assert!(s.delete("b"));
        assert!(!s.delete("b"));
        assert!(s.is_empty());
    }

    #[test]
    fn prefilter_mode_keeps_pod_and_state_for_the_cycle() {
        testing::reset();
        testing::set_current_pod(pod("u1"));
        start_cycle();
        with_cycle(|s, p| {
            assert_eq!(p.uid(), "u1");
            s.write("k", 1);
        });
        with_cycle(|s, p| {
            assert_eq!(p.uid(), "u1");
            assert_eq!(s.read::<i32>("k"), Some(&1));
        });
        assert_eq!(testing::calls("currentPod").len(), 1);
        // The host now serves another pod, but we are still in the same cycle.
        testing::set_current_pod(pod("u2"));
        with_cycle(|_, p| assert_eq!(p.uid(), "u1"));
        start_cycle();
        with_cycle(|s, p| {
            assert_eq!(p.uid(), "u2");
            assert!(s.is_empty());
        });
    }

    #[test]
    fn per_call_mode_refetches_and_resets_on_new_uid() {
        testing::reset();
        testing::set_current_pod(pod("u1"));
        // A hook that does not touch the pod or the state costs no host call.
        with_cycle(|_, _| {});
        assert_eq!(testing::calls("currentPod").len(), 0);
        with_cycle(|s, _| s.write("k", 1));
        assert_eq!(testing::calls("currentPod").len(), 1);
        with_cycle(|s, _| assert_eq!(s.read::<i32>("k"), Some(&1)));
        assert_eq!(testing::calls("currentPod").len(), 2);
        testing::set_current_pod(pod("u2"));
        with_cycle(|s, p| {
            assert!(s.is_empty());
            assert_eq!(p.uid(), "u2");
        });
        assert_eq!(testing::calls("currentPod").len(), 3);
    }
}
