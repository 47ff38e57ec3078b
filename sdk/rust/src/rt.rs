//! Export glue called by the code that [`crate::register!`] generates. Not a public API.

use crate::cycle::{self, with_cycle};
use crate::events;
use crate::hooks::*;
use crate::lister::NodeInfo;
use crate::pod::LazyPod;
use crate::status::{pack_permit, pack_postfilter, pack_score, Code, NominatingMode, Status};
use crate::sys;

/// Sends the reason (if any) and returns the code.
fn finish(st: Status) -> i32 {
    if !st.reason.is_empty() {
        unsafe { sys::status_reason(st.reason.as_ptr(), st.reason.len() as u32) };
    }
    st.code.0
}

/// One-time guest setup, run before the plugin is constructed.
pub fn init() {
    #[cfg(target_arch = "wasm32")]
    std::panic::set_hook(Box::new(|info| {
        use std::io::Write;
        // Like TinyGo's `panic: <msg>`, so host error messages read the same.
        let msg = if let Some(s) = info.payload().downcast_ref::<&str>() {
            s
        } else if let Some(s) = info.payload().downcast_ref::<String>() {
            s.as_str()
        } else {
            "Box<dyn Any>"
        };
        let mut err = std::io::stderr();
        let _ = match info.location() {
            Some(l) => writeln!(err, "panic: {} ({}:{})", msg, l.file(), l.line()),
            None => writeln!(err, "panic: {}", msg),
        };
    }));
}

/// `enqueue`.
pub fn enqueue<P: EnqueueExtensions>(p: &mut P) {
    let evs = p.events_to_register();
    if !evs.is_empty() {
        let b = events::encode(&evs);
        unsafe { sys::cluster_events(b.as_ptr(), b.len() as u32) };
    }
}

/// Encodes node names as the NUL-terminated list of abi.md §3.2 (empty names skipped).
pub fn encode_node_names(names: &[String]) -> Vec<u8> {
    let mut out = Vec::new();
    for n in names.iter().filter(|n| !n.is_empty()) {
        out.extend_from_slice(n.as_bytes());
        out.push(0);
    }
    out
}

/// `prefilter`: starts a new cycle, then runs the plugin.
pub fn prefilter<P: PreFilter>(p: &mut P) -> i32 {
    cycle::start_cycle();
    let r = with_cycle(|state, pod| p.pre_filter(state, pod));
    match r {
        Ok(Some(names)) => {
            let b = encode_node_names(&names);
            if !b.is_empty() {
                unsafe { sys::node_names(b.as_ptr(), b.len() as u32) };
            }
            0
        }
        Ok(None) => 0,
        Err(st) => finish(st),
    }
}

/// `filter`.
pub fn filter<P: Filter>(p: &mut P) -> i32 {
    let node = NodeInfo::current();
    finish(with_cycle(|state, pod| p.filter(state, pod, &node)))
}

/// `postfilter`.
pub fn postfilter<P: PostFilter>(p: &mut P) -> i64 {
    let statuses = NodeToStatusMap::from_host();
    let (nom, st) = with_cycle(|state, pod| p.post_filter(state, pod, &statuses));
    let mode = match nom {
        Some(n) => {
            if !n.node_name.is_empty() {
                unsafe { sys::nominated_node_name(n.node_name.as_ptr(), n.node_name.len() as u32) };
            }
            n.mode
        }
        None => NominatingMode::NOOP,
    };
    pack_postfilter(mode, Code(finish(st)))
}

/// `addpod`.
pub fn addpod<P: PreFilterExtensions>(p: &mut P) -> i32 {
    let node = NodeInfo::current();
    let target = LazyPod::target();
    finish(with_cycle(|state, pod| p.add_pod(state, pod, &target, &node)))
}

/// `removepod`.
pub fn removepod<P: PreFilterExtensions>(p: &mut P) -> i32 {
    let node = NodeInfo::current();
    let target = LazyPod::target();
    finish(with_cycle(|state, pod| p.remove_pod(state, pod, &target, &node)))
}

/// `prescore`.
pub fn prescore<P: PreScore>(p: &mut P) -> i32 {
    let nodes = FilteredNodes::from_host();
    finish(with_cycle(|state, pod| p.pre_score(state, pod, &nodes)))
}

/// `score`.
pub fn score<P: Score>(p: &mut P) -> i64 {
    let node = NodeInfo::current();
    match with_cycle(|state, pod| p.score(state, pod, &node)) {
        Ok(s) => pack_score(s, Code::SUCCESS),
        Err(st) => pack_score(0, Code(finish(st))),
    }
}

/// `normalizescore`: sends the scores back only if the plugin changed them.
pub fn normalizescore<P: NormalizeScore>(p: &mut P) -> i32 {
    let mut scores = NodeScores::from_host();
    let before = scores.clone();
    let st = with_cycle(|state, pod| p.normalize_score(state, pod, &mut scores));
    if scores != before {
        let j = scores.to_json();
        unsafe { sys::normalized_score_list(j.as_ptr(), j.len() as u32) };
    }
    finish(st)
}

/// `reserve`.
pub fn reserve<P: Reserve>(p: &mut P) -> i32 {
    let node = NodeInfo::current();
    finish(with_cycle(|state, pod| p.reserve(state, pod, &node)))
}

/// `unreserve`.
pub fn unreserve<P: Reserve>(p: &mut P) {
    let node = NodeInfo::current();
    with_cycle(|state, pod| p.unreserve(state, pod, &node));
}

/// `permit`.
pub fn permit<P: Permit>(p: &mut P) -> i64 {
    let node = NodeInfo::current();
    let (st, timeout) = with_cycle(|state, pod| p.permit(state, pod, &node));
    pack_permit(Code(finish(st)), timeout)
}

/// `prebind`.
pub fn prebind<P: PreBind>(p: &mut P) -> i32 {
    let node = NodeInfo::current();
    finish(with_cycle(|state, pod| p.pre_bind(state, pod, &node)))
}

/// `bind`.
pub fn bind<P: Bind>(p: &mut P) -> i32 {
    let node = NodeInfo::current();
    finish(with_cycle(|state, pod| p.bind(state, pod, &node)))
}

/// `postbind`.
pub fn postbind<P: PostBind>(p: &mut P) {
    let node = NodeInfo::current();
    with_cycle(|state, pod| p.post_bind(state, pod, &node));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_names_nul_list() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(encode_node_names(&s(&[])), b"");
        assert_eq!(encode_node_names(&s(&["a"])), b"a\0");
        assert_eq!(encode_node_names(&s(&["a", "", "two"])), b"a\0two\0");
        assert_eq!(encode_node_names(&s(&["a", "fóo", "c"])), "a\0fóo\0c\0".as_bytes());
        assert_eq!(
            crate::testing::decode_nul_list(&encode_node_names(&s(&["a", "", "two"]))),
            s(&["a", "two"])
        );
    }
}
