//! AllHooks: implements every extension point the way upstream's test guests do, so
//! tests can check the SDK's wire behaviour against a host. Every hook after PreFilter
//! panics if the cycle state written by PreFilter is missing (state must survive the
//! whole cycle) and records its name in the state; PostBind logs the trail.
//!
//! * prefilter: restricts filtering to spec.nodeName when set.
//! * filter: spec.nodeName empty or equal to the node → Success, else Unschedulable
//!   "<want> != <node>". Node "reject" rejects the waiting pod with the pod's uid
//!   (Skip "UID is <uid>" when one was rejected); node "waiting" looks it up (Success
//!   "waiting pod <name>", or Error "No waiting pod found for UID: <uid>").
//! * postfilter: spec.nodeName recorded as Success → nominate it (Override), else
//!   UnschedulableAndUnresolvable "<name> is unschedulable".
//! * addpod/removepod: Error "Node name is <node> and PodInfo name is <pod>" on node "bad".
//! * prescore: the status code is the number of filtered nodes.
//! * score: 100 on spec.nodeName, else 0; node "err" → Error "score failed".
//! * normalizescore: every score × 100.
//! * reserve/prebind/bind: Error "name is bad" on node "bad"; unreserve logs.
//! * permit: "wait" → Wait "name is wait" with a 10 s timeout; "bad" → Error.

use wasmsched_guest::handle::{get_waiting_pod, reject_waiting_pod};
use wasmsched_guest::klog;
use wasmsched_guest::*;

#[derive(Default)]
struct AllHooks;

const UID_KEY: &str = "cycle-uid";
const TRAIL_KEY: &str = "trail";

/// Panics unless PreFilter's state is there, then appends `hook` to the trail.
fn check(state: &mut CycleState, pod: &LazyPod, hook: &'static str) {
    match state.read::<String>(UID_KEY) {
        Some(uid) if uid == pod.uid() => {}
        Some(uid) => panic!("{}: cycle state of pod {} seen for pod {}", hook, uid, pod.uid()),
        None => panic!("{}: cycle state lost", hook),
    }
    if let Some(trail) = state.read_mut::<Vec<&'static str>>(TRAIL_KEY) {
        trail.push(hook);
    }
}

fn bad(node: &NodeInfo) -> Status {
    if node.name() == "bad" {
        Status::error("name is bad")
    } else {
        Status::SUCCESS
    }
}

impl EnqueueExtensions for AllHooks {
    fn events_to_register(&mut self) -> Vec<ClusterEvent> {
        vec![
            ClusterEvent::new(Resource::NODE, ActionType::ADD),
            ClusterEvent::new(Resource::PERSISTENT_VOLUME, ActionType::DELETE),
        ]
    }
}

impl PreFilter for AllHooks {
    fn pre_filter(&mut self, state: &mut CycleState, pod: &LazyPod) -> Result<Option<Vec<String>>, Status> {
        assert!(state.is_empty(), "cycle state not reset at prefilter");
        state.write(UID_KEY, pod.uid().to_string());
        state.write::<Vec<&'static str>>(TRAIL_KEY, vec!["prefilter"]);
        let want = pod.spec().node_name();
        Ok(if want.is_empty() { None } else { Some(vec![want.to_string()]) })
    }
}

impl Filter for AllHooks {
    fn filter(&mut self, state: &mut CycleState, pod: &LazyPod, node: &NodeInfo) -> Status {
        check(state, pod, "filter");
        match node.name() {
            "reject" => {
                if reject_waiting_pod(pod.uid()) {
                    return Status::new(Code::SKIP, format!("UID is {}", pod.uid()));
                }
                return Status::SUCCESS;
            }
            "waiting" => {
                return match get_waiting_pod(pod.uid()) {
                    Some(w) => Status::new(Code::SUCCESS, format!("waiting pod {}", w.get().name())),
                    None => Status::error(format!("No waiting pod found for UID: {}", pod.uid())),
                }
            }
            _ => {}
        }
        let want = pod.spec().node_name();
        if want.is_empty() || want == node.name() {
            Status::SUCCESS
        } else {
            Status::unschedulable(format!("{} != {}", want, node.name()))
        }
    }
}

impl PostFilter for AllHooks {
    fn post_filter(
        &mut self,
        state: &mut CycleState,
        pod: &LazyPod,
        statuses: &NodeToStatusMap,
    ) -> (Option<NominatingInfo>, Status) {
        check(state, pod, "postfilter");
        let want = pod.spec().node_name();
        if !want.is_empty() && statuses.get(want) == Some(Code::SUCCESS) {
            let nom = NominatingInfo { node_name: want.to_string(), mode: NominatingMode::OVERRIDE };
            (Some(nom), Status::SUCCESS)
        } else {
            (None, Status::unresolvable(format!("{} is unschedulable", want)))
        }
    }
}

impl PreFilterExtensions for AllHooks {
    fn add_pod(&mut self, state: &mut CycleState, pod: &LazyPod, add: &LazyPod, node: &NodeInfo) -> Status {
        check(state, pod, "addpod");
        extension(add, node)
    }
    fn remove_pod(&mut self, state: &mut CycleState, pod: &LazyPod, rm: &LazyPod, node: &NodeInfo) -> Status {
        check(state, pod, "removepod");
        extension(rm, node)
    }
}

fn extension(target: &LazyPod, node: &NodeInfo) -> Status {
    if node.name() == "bad" {
        Status::error(format!("Node name is {} and PodInfo name is {}", node.name(), target.name()))
    } else {
        Status::SUCCESS
    }
}

impl PreScore for AllHooks {
    fn pre_score(&mut self, state: &mut CycleState, pod: &LazyPod, nodes: &FilteredNodes) -> Status {
        check(state, pod, "prescore");
        Status::new(Code(nodes.len() as i32), "")
    }
}

impl Score for AllHooks {
    fn score(&mut self, state: &mut CycleState, pod: &LazyPod, node: &NodeInfo) -> Result<i32, Status> {
        check(state, pod, "score");
        match node.name() {
            "err" => Err(Status::error("score failed")),
            n if n == pod.spec().node_name() => Ok(100),
            _ => Ok(0),
        }
    }
}

impl NormalizeScore for AllHooks {
    fn normalize_score(&mut self, state: &mut CycleState, pod: &LazyPod, scores: &mut NodeScores) -> Status {
        check(state, pod, "normalizescore");
        for s in &mut scores.scores {
            s.score *= 100;
        }
        Status::SUCCESS
    }
}

impl Reserve for AllHooks {
    fn reserve(&mut self, state: &mut CycleState, pod: &LazyPod, node: &NodeInfo) -> Status {
        check(state, pod, "reserve");
        bad(node)
    }
    fn unreserve(&mut self, state: &mut CycleState, pod: &LazyPod, node: &NodeInfo) {
        check(state, pod, "unreserve");
        klog::info(format_args!("unreserve {}", node.name()));
    }
}

impl Permit for AllHooks {
    fn permit(&mut self, state: &mut CycleState, pod: &LazyPod, node: &NodeInfo) -> (Status, u32) {
        check(state, pod, "permit");
        match node.name() {
            "wait" => (Status::wait("name is wait"), 10_000),
            _ => (bad(node), 0),
        }
    }
}

impl PreBind for AllHooks {
    fn pre_bind(&mut self, state: &mut CycleState, pod: &LazyPod, node: &NodeInfo) -> Status {
        check(state, pod, "prebind");
        bad(node)
    }
}

impl Bind for AllHooks {
    fn bind(&mut self, state: &mut CycleState, pod: &LazyPod, node: &NodeInfo) -> Status {
        check(state, pod, "bind");
        bad(node)
    }
}

impl PostBind for AllHooks {
    fn post_bind(&mut self, state: &mut CycleState, pod: &LazyPod, node: &NodeInfo) {
        check(state, pod, "postbind");
        let trail = state.read::<Vec<&'static str>>(TRAIL_KEY).map(|t| t.join(",")).unwrap_or_default();
        klog::info_s("postbind", &[("node", &node.name()), ("trail", &trail)]);
    }
}

register!(AllHooks; enqueue, prefilter, filter, postfilter, prefilter_extensions, prescore, score,
    normalizescore, reserve, permit, prebind, bind, postbind);
