//! Raw host functions (abi.md §1). On wasm32 they are imports; on other targets they
//! are served by the in-process fake host of [`crate::testing`], with identical
//! pointer/length semantics, so all SDK logic is testable natively.
//!
//! Pointers are guest addresses: `*const u8`/`*mut u8` lower to wasm `i32`.

#![allow(clippy::missing_safety_doc)]

use std::cell::Cell;

#[cfg(target_arch = "wasm32")]
mod imp {
    #[link(wasm_import_module = "k8s.io/api")]
    extern "C" {
        #[link_name = "node"]
        pub fn node(name: *const u8, name_len: u32, buf: *mut u8, limit: u32) -> u32;
        #[link_name = "nodeList"]
        pub fn node_list(buf: *mut u8, limit: u32) -> u32;
    }

    #[link(wasm_import_module = "k8s.io/klog")]
    extern "C" {
        #[link_name = "log"]
        pub fn log(severity: i32, msg: *const u8, msg_len: u32);
        #[link_name = "logs"]
        pub fn logs(severity: i32, msg: *const u8, msg_len: u32, kvs: *const u8, kvs_len: u32);
        #[link_name = "severity"]
        pub fn severity() -> i32;
    }

    #[link(wasm_import_module = "k8s.io/scheduler")]
    extern "C" {
        #[link_name = "get_config"]
        pub fn get_config(buf: *mut u8, limit: u32) -> u32;
        #[link_name = "currentPod"]
        pub fn current_pod(buf: *mut u8, limit: u32) -> u32;
        #[link_name = "targetPod"]
        pub fn target_pod(buf: *mut u8, limit: u32) -> u32;
        #[link_name = "currentNodeName"]
        pub fn current_node_name(buf: *mut u8, limit: u32) -> u32;
        #[link_name = "filteredNodeList"]
        pub fn filtered_node_list(buf: *mut u8, limit: u32) -> u32;
        #[link_name = "nodeToStatusMap"]
        pub fn node_to_status_map(buf: *mut u8, limit: u32) -> u32;
        #[link_name = "nodeScoreList"]
        pub fn node_score_list(buf: *mut u8, limit: u32) -> u32;
        #[link_name = "nodeImageStates"]
        pub fn node_image_states(name: *const u8, name_len: u32, buf: *mut u8, limit: u32) -> u32;

        #[link_name = "result.status_reason"]
        pub fn status_reason(ptr: *const u8, len: u32);
        #[link_name = "result.node_names"]
        pub fn node_names(ptr: *const u8, len: u32);
        #[link_name = "result.nominated_node_name"]
        pub fn nominated_node_name(ptr: *const u8, len: u32);
        #[link_name = "result.cluster_events"]
        pub fn cluster_events(ptr: *const u8, len: u32);
        #[link_name = "result.normalized_score_list"]
        pub fn normalized_score_list(ptr: *const u8, len: u32);

        #[link_name = "handle.eventrecorder.eventf"]
        pub fn eventf(ptr: *const u8, len: u32);
        #[link_name = "handle.reject_waiting_pod"]
        pub fn reject_waiting_pod(uid: *const u8, uid_len: u32, out: *mut u8, out_limit: u32);
        #[link_name = "handle.get_waiting_pod"]
        pub fn get_waiting_pod(uid: *const u8, uid_len: u32, out: *mut u8, out_limit: u32);
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod imp {
    use crate::testing::fake as f;

    pub unsafe fn node(name: *const u8, name_len: u32, buf: *mut u8, limit: u32) -> u32 {
        f::node(f::read_str(name, name_len), buf, limit)
    }
    pub unsafe fn node_list(buf: *mut u8, limit: u32) -> u32 {
        f::getter("nodeList", buf, limit)
    }
    pub unsafe fn log(severity: i32, msg: *const u8, msg_len: u32) {
        f::log(severity, f::read(msg, msg_len), &[])
    }
    pub unsafe fn logs(severity: i32, msg: *const u8, msg_len: u32, kvs: *const u8, kvs_len: u32) {
        f::log(severity, f::read(msg, msg_len), f::read(kvs, kvs_len))
    }
    pub unsafe fn severity() -> i32 {
        f::severity()
    }
    pub unsafe fn get_config(buf: *mut u8, limit: u32) -> u32 {
        f::getter("get_config", buf, limit)
    }
    pub unsafe fn current_pod(buf: *mut u8, limit: u32) -> u32 {
        f::getter("currentPod", buf, limit)
    }
    pub unsafe fn target_pod(buf: *mut u8, limit: u32) -> u32 {
        f::getter("targetPod", buf, limit)
    }
    pub unsafe fn current_node_name(buf: *mut u8, limit: u32) -> u32 {
        f::getter("currentNodeName", buf, limit)
    }
    pub unsafe fn filtered_node_list(buf: *mut u8, limit: u32) -> u32 {
        f::getter("filteredNodeList", buf, limit)
    }
    pub unsafe fn node_to_status_map(buf: *mut u8, limit: u32) -> u32 {
        f::getter("nodeToStatusMap", buf, limit)
    }
    pub unsafe fn node_score_list(buf: *mut u8, limit: u32) -> u32 {
        f::getter("nodeScoreList", buf, limit)
    }
    pub unsafe fn node_image_states(name: *const u8, name_len: u32, buf: *mut u8, limit: u32) -> u32 {
        f::node_image_states(f::read_str(name, name_len), buf, limit)
    }
    pub unsafe fn status_reason(ptr: *const u8, len: u32) {
        f::result("result.status_reason", f::read(ptr, len))
    }
    pub unsafe fn node_names(ptr: *const u8, len: u32) {
        f::result("result.node_names", f::read(ptr, len))
    }
    pub unsafe fn nominated_node_name(ptr: *const u8, len: u32) {
        f::result("result.nominated_node_name", f::read(ptr, len))
    }
    pub unsafe fn cluster_events(ptr: *const u8, len: u32) {
        f::result("result.cluster_events", f::read(ptr, len))
    }
    pub unsafe fn normalized_score_list(ptr: *const u8, len: u32) {
        f::result("result.normalized_score_list", f::read(ptr, len))
    }
    pub unsafe fn eventf(ptr: *const u8, len: u32) {
        f::result("handle.eventrecorder.eventf", f::read(ptr, len))
    }
    pub unsafe fn reject_waiting_pod(uid: *const u8, uid_len: u32, out: *mut u8, _limit: u32) {
        f::reject_waiting_pod(f::read_str(uid, uid_len), out)
    }
    pub unsafe fn get_waiting_pod(uid: *const u8, uid_len: u32, out: *mut u8, limit: u32) {
        f::get_waiting_pod(f::read_str(uid, uid_len), out, limit)
    }
}

pub(crate) use imp::*;

/// Kinds of values read with the buffer/limit protocol; each learns its own size hint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Protobuf pods and nodes (upstream's SDK also starts at 2048 bytes).
    Proto = 0,
    /// The full node list.
    NodeList = 1,
    /// Short strings (node names).
    Text = 2,
    /// JSON payloads and the guest config.
    Json = 3,
}

const INITIAL_HINTS: [usize; 4] = [2048, 16 * 1024, 256, 1024];

thread_local! {
    static HINTS: [Cell<usize>; 4] = const {
        [
            Cell::new(INITIAL_HINTS[0]),
            Cell::new(INITIAL_HINTS[1]),
            Cell::new(INITIAL_HINTS[2]),
            Cell::new(INITIAL_HINTS[3]),
        ]
    };
}

/// Forgets the learned sizes (tests).
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn reset_hints() {
    HINTS.with(|h| {
        for (c, v) in h.iter().zip(INITIAL_HINTS.iter()) {
            c.set(*v);
        }
    });
}

/// Reads a value with the buffer/limit protocol (abi.md §1.1): one call with a buffer of
/// the learned size for `kind`; if the host reports a larger size, one more call with
/// exactly that size. The largest size seen is remembered, so a repeated read of a
/// similar value needs a single call.
pub(crate) fn read_with(kind: Kind, mut call: impl FnMut(*mut u8, u32) -> u32) -> Vec<u8> {
    let hint = HINTS.with(|h| h[kind as usize].get());
    let mut buf: Vec<u8> = Vec::with_capacity(hint);
    for _ in 0..4 {
        let cap = buf.capacity();
        let n = call(buf.as_mut_ptr(), cap.min(u32::MAX as usize) as u32) as usize;
        if n <= cap {
            // SAFETY: the host wrote exactly `n` initialised bytes at the buffer start.
            unsafe { buf.set_len(n) };
            return buf;
        }
        HINTS.with(|h| h[kind as usize].set(n.max(hint)));
        buf.reserve_exact(n);
    }
    // The host kept growing the value; treat it as absent rather than loop forever.
    Vec::new()
}

/// A UTF-8 string read with the protocol; invalid UTF-8 is replaced.
pub(crate) fn read_string(call: impl FnMut(*mut u8, u32) -> u32) -> String {
    let v = read_with(Kind::Text, call);
    String::from_utf8(v).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_once_with_the_reported_size_and_learns_it() {
        crate::testing::reset();
        let big = vec![7u8; 3026];
        crate::testing::set("currentPod", big.clone());
        let got = read_with(Kind::Proto, |b, l| unsafe { current_pod(b, l) });
        assert_eq!(got, big);
        assert_eq!(crate::testing::calls("currentPod"), vec![2048, 3026]);
        let again = read_with(Kind::Proto, |b, l| unsafe { current_pod(b, l) });
        assert_eq!(again, big);
        assert_eq!(crate::testing::calls("currentPod"), vec![2048, 3026, 3026]);
    }

    #[test]
    fn empty_value_reads_as_empty() {
        crate::testing::reset();
        let got = read_with(Kind::Proto, |b, l| unsafe { target_pod(b, l) });
        assert!(got.is_empty());
        assert_eq!(crate::testing::calls("targetPod"), vec![2048]);
    }

    #[test]
    fn host_that_keeps_growing_is_treated_as_absent() {
        let got = read_with(Kind::Text, |_, limit| limit + 100);
        assert!(got.is_empty());
    }

    #[test]
    fn invalid_utf8_is_replaced() {
        crate::testing::reset();
        crate::testing::set("currentNodeName", vec![b'n', 0xff]);
        let s = read_string(|b, l| unsafe { current_node_name(b, l) });
        assert_eq!(s, "n\u{fffd}");
    }
}
