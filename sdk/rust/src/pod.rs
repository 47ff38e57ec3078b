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
    ids: Once<Ids>,
}

/// Where `metadata.name`, `namespace` and `uid` lie in the pod's bytes, found once: hooks
/// log `klog.KObj(pod)` on every node (upstream's nodenumber does in Score), and a scan of
/// the metadata per call was most of what such a log cost the guest.
struct Ids {
    name: Span,
    namespace: Span,
    uid: Span,
}

/// A byte range of validated UTF-8 inside the pod's bytes (`None`: not inside them, so
/// read through the decoder each time; the decoder only ever returns slices of its input
/// or `""`, so this does not happen).
type Span = Option<(usize, usize)>;

fn span(base: &[u8], s: &str) -> Span {
    if s.is_empty() {
        return Some((0, 0));
    }
    let (start, p) = (base.as_ptr() as usize, s.as_ptr() as usize);
    if p >= start && p + s.len() <= start + base.len() {
        Some((p - start, s.len()))
    } else {
        None
    }
}

impl LazyPod {
    pub(crate) fn current() -> Self {
        LazyPod { fetch: fetch_current, bytes: Once::default(), ids: Once::default() }
    }

    pub(crate) fn target() -> Self {
        LazyPod { fetch: fetch_target, bytes: Once::default(), ids: Once::default() }
    }

    /// A pod over given protobuf bytes (for tests and for pods obtained elsewhere).
    pub fn from_bytes(bytes: Vec<u8>) -> Self {
        LazyPod { fetch: fetch_none, bytes: Once::with(bytes), ids: Once::default() }
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

    fn ids(&self) -> &Ids {
        self.ids.get_or_init(|| {
            let b = self.bytes();
            let m = Pod::new(b).metadata();
            Ids { name: span(b, m.name()), namespace: span(b, m.namespace()), uid: span(b, m.uid()) }
        })
    }

    fn text(&self, s: Span, decode: for<'m> fn(&ObjectMeta<'m>) -> &'m str) -> &str {
        match s {
            Some((start, len)) => {
                let b = &self.bytes()[start..start + len];
                // SAFETY: the range is that of a &str the decoder returned over these
                // same bytes (see `span`), so it is valid UTF-8.
                unsafe { std::str::from_utf8_unchecked(b) }
            }
            None => decode(&self.metadata()),
        }
    }

    /// `metadata.name`.
    pub fn name(&self) -> &str {
        self.text(self.ids().name, |m| m.name())
    }

    /// `metadata.namespace`.
    pub fn namespace(&self) -> &str {
        self.text(self.ids().namespace, |m| m.namespace())
    }

    /// `metadata.uid`.
    pub fn uid(&self) -> &str {
        self.text(self.ids().uid, |m| m.uid())
    }
}

impl crate::api::KObject for LazyPod {
    fn kind(&self) -> &str {
        "Pod"
    }
    fn name(&self) -> &str {
        LazyPod::name(self)
    }
    fn namespace(&self) -> &str {
        LazyPod::namespace(self)
    }
    fn uid(&self) -> &str {
        LazyPod::uid(self)
    }
    fn resource_version(&self) -> &str {
        self.metadata().resource_version()
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

    #[test]
    fn ids_are_read_once_and_match_the_decoder() {
        let mut w = Writer::new();
        w.message(1, |m| {
            m.string(1, "web-3").string(3, "team").string(5, "uid-9").string(6, "42");
        });
        let p = LazyPod::from_bytes(w.finish());
        let meta = p.metadata();
        assert_eq!((p.name(), p.namespace(), p.uid()), (meta.name(), meta.namespace(), meta.uid()));
        assert_eq!((p.name(), p.namespace(), p.uid()), ("web-3", "team", "uid-9"));
        assert_eq!(crate::api::KObject::resource_version(&p), "42");
        assert_eq!(crate::klog::kobj(&p).to_string(), "team/web-3");
        // absent and invalid UTF-8 fields read as empty, as through the decoder
        let mut w = Writer::new();
        w.message(1, |m| {
            m.bytes(1, &[0xff, 0xfe]);
        });
        let bad = LazyPod::from_bytes(w.finish());
        assert_eq!((bad.name(), bad.namespace(), bad.uid()), ("", "", ""));
        assert_eq!(LazyPod::from_bytes(Vec::new()).name(), "");
    }
}
