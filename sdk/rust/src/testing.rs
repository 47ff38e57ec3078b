//! An in-process fake host for native (non-wasm) unit tests of the SDK and of plugins.
//!
//! It implements the host functions with the same byte-level behaviour as the real
//! hosts (buffer/limit protocol, "write nothing when too small", 8-byte waiting-pod
//! answers) and records everything the guest sends. State is per thread; call
//! [`reset`] at the start of a test.
//!
//! ```
//! use wasmsched_guest::testing;
//! testing::reset();
//! testing::set_node_name("node-1");
//! ```

use crate::pb::Writer;
use std::cell::RefCell;

/// A log line received through `k8s.io/klog`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogLine {
    /// Severity (0 info, 2 error).
    pub severity: i32,
    /// The message.
    pub message: String,
    /// Decoded key/value strings (NUL list, empty entries skipped as the host does).
    pub kvs: Vec<String>,
}

#[derive(Default)]
struct FakeHost {
    values: Vec<(&'static str, Vec<u8>)>,
    nodes: Vec<(String, Vec<u8>)>,
    image_states: Vec<(String, Vec<u8>)>,
    waiting_pods: Vec<(String, Vec<u8>)>,
    rejectable: Vec<String>,
    severity: i32,
    results: Vec<(&'static str, Vec<u8>)>,
    logs: Vec<LogLine>,
    calls: Vec<(&'static str, u32)>,
}

thread_local! {
    static HOST: RefCell<FakeHost> = RefCell::new(FakeHost::default());
}

fn with<R>(f: impl FnOnce(&mut FakeHost) -> R) -> R {
    HOST.with(|h| f(&mut h.borrow_mut()))
}

/// Resets the fake host and every SDK cache of this thread (config, severity, cycle
/// state, cached pod and node list), as if a fresh guest instance was created.
pub fn reset() {
    with(|h| *h = FakeHost::default());
    crate::cycle::reset_all();
    crate::config::reset_cache();
    crate::klog::reset_cache();
}

/// Sets the raw payload of a getter: `get_config`, `currentPod`, `targetPod`,
/// `currentNodeName`, `filteredNodeList`, `nodeToStatusMap`, `nodeScoreList`, `nodeList`.
pub fn set(getter: &'static str, bytes: impl Into<Vec<u8>>) {
    let bytes = bytes.into();
    with(|h| {
        h.values.retain(|(k, _)| *k != getter);
        h.values.push((getter, bytes));
    });
}

/// Sets `guestConfig`.
pub fn set_config(config: &str) {
    set("get_config", config);
}

/// Sets the configured log severity.
pub fn set_severity(severity: i32) {
    with(|h| h.severity = severity);
}

/// Sets the pod being scheduled (protobuf bytes).
pub fn set_current_pod(pod: impl Into<Vec<u8>>) {
    set("currentPod", pod);
}

/// Sets the AddPod/RemovePod target pod.
pub fn set_target_pod(pod: impl Into<Vec<u8>>) {
    set("targetPod", pod);
}

/// Sets the node name of the current call.
pub fn set_node_name(name: &str) {
    set("currentNodeName", name);
}

/// Adds a node (protobuf bytes) to the snapshot; `node(name)` and `nodeList` serve it.
pub fn add_node(node: impl Into<Vec<u8>>) {
    let node = node.into();
    let name = crate::api::Node::new(&node).name().to_string();
    with(|h| h.nodes.push((name, node)));
}

/// Sets PreScore's filtered node names (sent as a JSON array).
pub fn set_filtered_nodes(names: &[&str]) {
    let items: Vec<crate::json::Json> =
        names.iter().map(|n| crate::json::Json::Str((*n).to_string())).collect();
    set("filteredNodeList", crate::json::Json::Array(items).to_string());
}

/// Sets PostFilter's node-to-status map (JSON object of codes).
pub fn set_node_statuses(statuses: &[(&str, i32)]) {
    let m = statuses.iter().map(|(n, c)| ((*n).to_string(), crate::json::Json::Int(i64::from(*c)))).collect();
    set("nodeToStatusMap", crate::json::Json::Object(m).to_string());
}

/// Sets NormalizeScore's input scores (JSON object).
pub fn set_node_scores(scores: &[(&str, i64)]) {
    let m = scores.iter().map(|(n, s)| ((*n).to_string(), crate::json::Json::Int(*s))).collect();
    set("nodeScoreList", crate::json::Json::Object(m).to_string());
}

/// Sets the `nodeImageStates` JSON for a node.
pub fn set_image_states(node: &str, json: &str) {
    with(|h| {
        h.image_states.retain(|(n, _)| n != node);
        h.image_states.push((node.to_string(), json.as_bytes().to_vec()));
    });
}

/// Registers a waiting pod (protobuf bytes) under its uid.
pub fn add_waiting_pod(uid: &str, pod: impl Into<Vec<u8>>) {
    let pod = pod.into();
    with(|h| h.waiting_pods.push((uid.to_string(), pod)));
}

/// Makes `reject_waiting_pod(uid)` report success.
pub fn set_rejectable(uid: &str) {
    with(|h| h.rejectable.push(uid.to_string()));
}

/// Everything the guest sent through `result.*` and `handle.eventrecorder.eventf`, in order.
pub fn results() -> Vec<(&'static str, Vec<u8>)> {
    with(|h| h.results.clone())
}

/// The last payload sent to `name` (e.g. `result.status_reason`).
pub fn last_result(name: &str) -> Option<Vec<u8>> {
    with(|h| h.results.iter().rev().find(|(n, _)| *n == name).map(|(_, v)| v.clone()))
}

/// The last payload sent to `name`, as a string.
pub fn last_result_str(name: &str) -> Option<String> {
    last_result(name).map(|v| String::from_utf8_lossy(&v).into_owned())
}

/// Forgets the recorded results, logs and calls (keeps the inputs).
pub fn clear_records() {
    with(|h| {
        h.results.clear();
        h.logs.clear();
        h.calls.clear();
    });
}

/// Log lines received so far.
pub fn logs() -> Vec<LogLine> {
    with(|h| h.logs.clone())
}

/// Buffer limits passed to each call of the getter `name`, in order.
pub fn calls(name: &str) -> Vec<u32> {
    with(|h| h.calls.iter().filter(|(n, _)| *n == name).map(|(_, l)| *l).collect())
}

/// Decodes a NUL-terminated list the way the host does (abi.md §3.2).
pub fn decode_nul_list(b: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = b;
    while let Some(i) = rest.iter().position(|c| *c == 0) {
        if i > 0 {
            out.push(String::from_utf8_lossy(&rest[..i]).into_owned());
        }
        rest = &rest[i + 1..];
    }
    out
}

/// Host-side implementations used by `sys` on native targets.
pub(crate) mod fake {
    use super::*;

    pub(crate) unsafe fn read<'a>(ptr: *const u8, len: u32) -> &'a [u8] {
        if len == 0 {
            &[]
        } else {
            std::slice::from_raw_parts(ptr, len as usize)
        }
    }

    pub(crate) unsafe fn read_str<'a>(ptr: *const u8, len: u32) -> &'a str {
        std::str::from_utf8(read(ptr, len)).unwrap_or("")
    }

    /// The buffer/limit protocol of abi.md §1.1.
    unsafe fn write(value: &[u8], buf: *mut u8, limit: u32) -> u32 {
        let n = value.len();
        if n != 0 && n <= limit as usize {
            std::ptr::copy_nonoverlapping(value.as_ptr(), buf, n);
        }
        n as u32
    }

    fn node_list_bytes(h: &FakeHost) -> Vec<u8> {
        if let Some((_, v)) = h.values.iter().find(|(k, _)| *k == "nodeList") {
            return v.clone();
        }
        let mut w = Writer::new();
        w.message(1, |_| {});
        for (_, n) in &h.nodes {
            w.bytes(2, n);
        }
        w.finish()
    }

    pub(crate) unsafe fn getter(name: &'static str, buf: *mut u8, limit: u32) -> u32 {
        let value = with(|h| {
            h.calls.push((name, limit));
            match name {
                "nodeList" => node_list_bytes(h),
                _ => h.values.iter().find(|(k, _)| *k == name).map(|(_, v)| v.clone()).unwrap_or_else(|| {
                    match name {
                        // The real hosts never return 0 bytes for these.
                        "filteredNodeList" => b"[]".to_vec(),
                        "nodeToStatusMap" | "nodeScoreList" => b"{}".to_vec(),
                        _ => Vec::new(),
                    }
                }),
            }
        });
        write(&value, buf, limit)
    }

    pub(crate) unsafe fn node(name: &str, buf: *mut u8, limit: u32) -> u32 {
        let value = with(|h| {
            h.calls.push(("node", limit));
            h.nodes.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone()).unwrap_or_default()
        });
        write(&value, buf, limit)
    }

    pub(crate) unsafe fn node_image_states(name: &str, buf: *mut u8, limit: u32) -> u32 {
        let value = with(|h| {
            h.calls.push(("nodeImageStates", limit));
            h.image_states
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.clone())
                .unwrap_or_else(|| b"null".to_vec())
        });
        write(&value, buf, limit)
    }

    pub(crate) fn severity() -> i32 {
        with(|h| {
            h.calls.push(("severity", 0));
            h.severity
        })
    }

    pub(crate) fn log(severity: i32, msg: &[u8], kvs: &[u8]) {
        let line = LogLine {
            severity,
            message: String::from_utf8_lossy(msg).into_owned(),
            kvs: decode_nul_list(kvs),
        };
        with(|h| h.logs.push(line));
    }

    pub(crate) fn result(name: &'static str, payload: &[u8]) {
        with(|h| h.results.push((name, payload.to_vec())));
    }

    pub(crate) unsafe fn reject_waiting_pod(uid: &str, out: *mut u8) {
        let ok = with(|h| {
            h.results.push(("handle.reject_waiting_pod", uid.as_bytes().to_vec()));
            h.rejectable.iter().any(|u| u == uid)
        });
        // Like the real hosts: 8 bytes, ignoring the limit.
        std::ptr::copy_nonoverlapping(u64::from(ok).to_le_bytes().as_ptr(), out, 8);
    }

    pub(crate) unsafe fn get_waiting_pod(uid: &str, out: *mut u8, limit: u32) {
        let pod = with(|h| {
            h.calls.push(("handle.get_waiting_pod", limit));
            h.waiting_pods.iter().find(|(u, _)| u == uid).map(|(_, p)| p.clone())
        });
        match pod {
            None => std::ptr::write_bytes(out, 0, 8),
            Some(p) if p.len() <= limit as usize => std::ptr::copy_nonoverlapping(p.as_ptr(), out, p.len()),
            Some(_) => {} // too large: nothing written, as upstream does
        }
    }
}
