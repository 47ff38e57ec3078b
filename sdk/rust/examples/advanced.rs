//! Advanced NodeNumber: the digit comes from the pod's `spec.nodeName` (a hint set by the
//! user), and the plugin shows more of the SDK: a typed config parsed once at start-up,
//! typed cycle state, structured logs with object references, and events.
//!
//! Pod "happy8-meta" with spec.nodeName "happy8" scores 10 on "glad8" and 0 on "glad9";
//! guestConfig `{"reverse": true}` inverts that. Without a digit, every node scores 10.

use wasmsched_guest::handle::eventf;
use wasmsched_guest::json::Json;
use wasmsched_guest::klog::{self, kobj};
use wasmsched_guest::{
    config, register, ActionType, ClusterEvent, CycleState, EnqueueExtensions, FilteredNodes, LazyPod,
    NodeInfo, PreFilter, PreScore, Resource, Score, Status,
};

/// Parsed guestConfig.
#[derive(Debug, Default, PartialEq)]
struct Args {
    reverse: bool,
}

impl Args {
    fn parse(config: Option<&[u8]>) -> Result<Args, String> {
        let raw = match config {
            None => return Ok(Args::default()),
            Some(b) => b,
        };
        let v = wasmsched_guest::json::parse(raw)
            .map_err(|e| format!("decode arg into NodeNumberArgs: {}", e))?;
        let reverse = match v.get("reverse") {
            None | Some(Json::Null) => false,
            Some(Json::Bool(b)) => *b,
            Some(other) => return Err(format!("reverse must be a boolean, got {}", other)),
        };
        Ok(Args { reverse })
    }
}

/// What PreScore hands to Score.
struct PreScoreState {
    digit: u8,
}

const STATE_KEY: &str = "PreScoreNodeNumber";

struct Advanced {
    args: Args,
}

impl Advanced {
    fn new() -> Self {
        let args = Args::parse(config::get()).unwrap_or_else(|e| panic!("{}", e));
        if config::get().is_some() {
            klog::info("NodeNumberArgs is successfully applied");
        }
        Advanced { args }
    }
}

fn last_digit(s: &str) -> Option<u8> {
    match s.as_bytes().last() {
        Some(c) if c.is_ascii_digit() => Some(c - b'0'),
        _ => None,
    }
}

impl EnqueueExtensions for Advanced {
    fn events_to_register(&mut self) -> Vec<ClusterEvent> {
        vec![ClusterEvent::new(Resource::NODE, ActionType::ADD)]
    }
}

impl PreFilter for Advanced {}

impl PreScore for Advanced {
    fn pre_score(&mut self, state: &mut CycleState, pod: &LazyPod, nodes: &FilteredNodes) -> Status {
        klog::info_s("execute PreScore on NodeNumber plugin", &[("pod", &kobj(pod))]);
        if nodes.is_empty() {
            return Status::skip();
        }
        match last_digit(pod.spec().node_name()) {
            Some(digit) => {
                eventf(Some(pod), None, "PreScore", "match lastNumber", "Continue", "");
                state.write(STATE_KEY, PreScoreState { digit });
            }
            None => eventf(Some(pod), None, "PreScore", "not match lastNumber", "Skip", ""),
        }
        Status::SUCCESS
    }
}

impl Score for Advanced {
    fn score(&mut self, state: &mut CycleState, pod: &LazyPod, node: &NodeInfo) -> Result<i32, Status> {
        klog::info_s("execute Score on NodeNumber plugin", &[("pod", &kobj(pod))]);
        let matched = match state.read::<PreScoreState>(STATE_KEY) {
            Some(s) => last_digit(node.name()) == Some(s.digit),
            None => true,
        };
        Ok(if matched != self.args.reverse { 10 } else { 0 })
    }
}

register!(Advanced = Advanced::new(); enqueue, prefilter, prescore, score);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn args_parsing() {
        assert_eq!(Args::parse(None), Ok(Args { reverse: false }));
        assert_eq!(Args::parse(Some(b"{}")), Ok(Args { reverse: false }));
        assert_eq!(Args::parse(Some(br#"{"reverse": true}"#)), Ok(Args { reverse: true }));
        assert!(Args::parse(Some(br#"{"reverse": "yes"}"#)).is_err());
        assert!(Args::parse(Some(b"nope")).is_err());
    }
}
