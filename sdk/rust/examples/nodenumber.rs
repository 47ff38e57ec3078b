//! NodeNumber: favours nodes whose name ends with the same digit as the pod's name.
//!
//! Pod "web-3" scores 10 on "node3" and 0 on "node4"; a pod whose name does not end
//! with a digit scores 10 everywhere. guestConfig `{"reverse": true}` inverts the score.
//! PreScore logs `execute PreScore on NodeNumber plugin` and records an event; Score
//! logs `execute Score on NodeNumber plugin`. Node additions requeue rejected pods.

use wasmsched_guest::handle::eventf;
use wasmsched_guest::json::Json;
use wasmsched_guest::klog::{self, kobj};
use wasmsched_guest::{
    config, register, ActionType, ClusterEvent, CycleState, EnqueueExtensions, FilteredNodes, LazyPod,
    NodeInfo, PreFilter, PreScore, Resource, Score, Status,
};

const STATE_KEY: &str = "PreScoreNodeNumber";

/// The plugin; `reverse` comes from guestConfig.
struct NodeNumber {
    reverse: bool,
}

impl NodeNumber {
    fn from_config() -> Self {
        let reverse = match config::json() {
            Ok(Some(args)) => {
                klog::info("NodeNumberArgs is successfully applied");
                args.get("reverse").and_then(Json::as_bool).unwrap_or(false)
            }
            Ok(None) => false,
            Err(e) => panic!("decode arg into NodeNumberArgs: {}", e),
        };
        NodeNumber { reverse }
    }
}

/// The digit a name ends with, if any.
fn last_digit(s: &str) -> Option<u8> {
    match s.as_bytes().last() {
        Some(c) if c.is_ascii_digit() => Some(c - b'0'),
        _ => None,
    }
}

impl EnqueueExtensions for NodeNumber {
    fn events_to_register(&mut self) -> Vec<ClusterEvent> {
        vec![ClusterEvent::new(Resource::NODE, ActionType::ADD)]
    }
}

// Exported only so that each `prefilter` starts a new cycle (state and pod cache).
impl PreFilter for NodeNumber {}

impl PreScore for NodeNumber {
    fn pre_score(&mut self, state: &mut CycleState, pod: &LazyPod, _: &FilteredNodes) -> Status {
        klog::info_s("execute PreScore on NodeNumber plugin", &[("pod", &kobj(pod))]);
        match last_digit(pod.name()) {
            Some(d) => {
                eventf(Some(pod), None, "PreScore", "match lastNumber", "Continue", "");
                state.write(STATE_KEY, d);
            }
            None => eventf(Some(pod), None, "PreScore", "not match lastNumber", "Skip", ""),
        }
        Status::SUCCESS
    }
}

impl Score for NodeNumber {
    fn score(&mut self, state: &mut CycleState, pod: &LazyPod, node: &NodeInfo) -> Result<i32, Status> {
        klog::info_s("execute Score on NodeNumber plugin", &[("pod", &kobj(pod))]);
        let matched = match state.read::<u8>(STATE_KEY) {
            Some(d) => last_digit(node.name()) == Some(*d),
            None => true, // no digit on the pod: every node matches
        };
        Ok(if matched != self.reverse { 10 } else { 0 })
    }
}

register!(NodeNumber = NodeNumber::from_config(); enqueue, prefilter, prescore, score);

#[cfg(test)]
mod tests {
    use super::*;
    use wasmsched_guest::pb::Writer;
    use wasmsched_guest::testing;

    fn pod(name: &str) -> Vec<u8> {
        let mut w = Writer::new();
        w.message(1, |m| {
            m.string(1, name).string(3, "ns").string(5, "uid");
        });
        w.finish()
    }

    #[test]
    fn last_digit_table() {
        for (s, want) in [("", None), ("a", None), ("a1", Some(1)), ("99", Some(9)), ("x0", Some(0))] {
            assert_eq!(last_digit(s), want, "{:?}", s);
        }
    }

    #[test]
    fn scores_by_pod_name() {
        testing::reset();
        testing::set_current_pod(pod("happy8"));
        assert_eq!(prefilter(), 0);
        assert_eq!(prescore(), 0);
        testing::set_node_name("glad8");
        assert_eq!(score() >> 32, 10);
        testing::set_node_name("glad9");
        assert_eq!(score() >> 32, 0);
        let logs = testing::logs();
        assert_eq!(logs[0].message, "execute PreScore on NodeNumber plugin");
        assert_eq!(logs[0].kvs, vec!["pod", "ns/happy8"]);
        let ev = testing::last_result_str("handle.eventrecorder.eventf").unwrap();
        assert!(ev.contains(r#""Reason":"match lastNumber","Action":"Continue""#), "{}", ev);
    }
}
