//! The pod handed to hooks: fetched from the host on first use, then decoded lazily.

use crate::api::{ObjectMeta, Pod, PodSpec, PodStatus};
use crate::cell::Once;
use crate::sys::{self, Kind};

fn fetch_current() -> Vec<u8> {
    sys::read_with(Kind::Proto, |b, l| unsafe { sys::current_pod(b, l) })
}

fn fetch_target() -> Vec<u8> {
    sys::read_with(Kind::Proto, |b, l| unsafe { sys::target_pod(b, l) })
}

fn fetch_none() -> Vec<u8> {
    Vec::new()
}

/// A pod whose protobuf bytes are fetched on the first access.
///
/// Hooks receive the pod being scheduled (`currentPod`, cached for the whole scheduling
/// cycle, see [`crate::cycle`]) and, in AddPod/RemovePod, the target pod (`targetPod`).
pub struct LazyPod {
    // A function pointer rather than an enum so that `targetPod` is only imported by
    // guests that use it.
    fetch: fn() -> Vec<u8>,
    bytes: Once<Vec<u8>>,
}

impl LazyPod {
    pub(crate) fn current() -> Self {
        LazyPod { fetch: fetch_current, bytes: Once::default() }
    }

    pub(crate) fn target() -> Self {
        LazyPod { fetch: fetch_target, bytes: Once::default() }
    }

    /// A pod over given protobuf bytes (for tests and for pods obtained elsewhere).
    pub fn from_bytes(bytes: Vec<u8>) -> Self {
        LazyPod { fetch: fetch_none, bytes: Once::with(bytes) }
    }

    /// The protobuf bytes, fetching them if needed (empty if the host has no pod).
    pub fn bytes(&self) -> &[u8] {
        self.bytes.get_or_init(self.fetch)
    }

    /// Whether the bytes were already fetched.
    pub fn is_fetched(&self) -> bool {
        self.bytes.get().is_some()
    }

    /// The decoded view.
    pub fn get(&self) -> Pod<'_> {
        Pod::new(self.bytes())
    }

    /// `metadata`.
    pub fn metadata(&self) -> ObjectMeta<'_> {
        self.get().metadata()
    }

    /// `spec`.
    pub fn spec(&self) -> PodSpec<'_> {
        self.get().spec()
    }

    /// `status`.
    pub fn status(&self) -> PodStatus<'_> {
        self.get().status()
    }

    /// `metadata.name`.
    pub fn name(&self) -> &str {
        self.get().name()
    }

    /// `metadata.namespace`.
    pub fn namespace(&self) -> &str {
        self.get().namespace()
    }

    /// `metadata.uid`.
    pub fn uid(&self) -> &str {
        self.get().uid()
    }
}

impl std::fmt::Debug for LazyPod {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.bytes.get() {
            Some(b) => write!(f, "LazyPod({} bytes)", b.len()),
            None => f.write_str("LazyPod(not fetched)"),
        }
    }
}

/// Pod protobuf bytes owned by the caller (e.g. a waiting pod).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OwnedPod(pub Vec<u8>);

impl OwnedPod {
    /// The decoded view.
    pub fn get(&self) -> Pod<'_> {
        Pod::new(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pb::Writer;
    use crate::testing;

    fn pod(name: &str) -> Vec<u8> {
        let mut w = Writer::new();
        w.message(1, |m| {
            m.string(1, name).string(5, "u1");
        });
        w.finish()
    }

    #[test]
    fn fetches_once_on_first_access() {
        testing::reset();
        testing::set_current_pod(pod("p1"));
        let p = LazyPod::current();
        assert!(!p.is_fetched());
        assert!(testing::calls("currentPod").is_empty());
        assert_eq!(p.name(), "p1");
        assert_eq!(p.uid(), "u1");
        assert_eq!(testing::calls("currentPod").len(), 1);
        assert!(p.is_fetched());
    }

    #[test]
    fn target_and_fixed_sources() {
        testing::reset();
        testing::set_target_pod(pod("t"));
        assert_eq!(LazyPod::target().name(), "t");
        assert_eq!(LazyPod::from_bytes(pod("f")).name(), "f");
        assert!(testing::calls("currentPod").is_empty());
        assert_eq!(LazyPod::current().name(), "");
    }
}
