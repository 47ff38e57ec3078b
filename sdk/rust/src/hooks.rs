//! One trait per extension point, and the inputs specific to some of them.
//!
//! A plugin implements only the traits it needs and lists the matching hooks in
//! [`crate::register!`]; only those exports are emitted. Upstream's Go host accepts
//! a guest only if it exports at least one of `filter`, `score`, `reserve`, `permit`,
//! `bind` (or exactly `prefilter`), and not the combinations listed in abi.md §2.2.

use crate::cell::Once;
use crate::cycle::CycleState;
use crate::events::ClusterEvent;
use crate::json::{self, Json};
use crate::lister::NodeInfo;
use crate::pod::LazyPod;
use crate::status::{Code, NominatingInfo, Status};
use crate::sys::{self, Kind};

/// `enqueue`: the cluster events that may make a pod rejected by this plugin schedulable.
/// Returning no events makes the host use its default list.
pub trait EnqueueExtensions {
    /// Events to register.
    fn events_to_register(&mut self) -> Vec<ClusterEvent>;
}

/// `prefilter`. Listing `prefilter` in `register!` also makes the SDK reset its cycle
/// state at each PreFilter (see [`crate::cycle`]); the default method just does that.
pub trait PreFilter {
    /// Returns the node names to restrict filtering to (`None` = all nodes). An empty
    /// list cannot be expressed on the wire and also means all nodes.
    fn pre_filter(&mut self, state: &mut CycleState, pod: &LazyPod) -> Result<Option<Vec<String>>, Status> {
        let _ = (state, pod);
        Ok(None)
    }
}

/// `filter`: whether the pod fits on the node.
pub trait Filter {
    /// Success, or Unschedulable / UnschedulableAndUnresolvable with a reason.
    fn filter(&mut self, state: &mut CycleState, pod: &LazyPod, node: &NodeInfo) -> Status;
}

/// `addpod` / `removepod` (PreFilterExtensions): update cycle state for a pod that
/// preemption adds to or removes from a node. Both exports are always emitted together.
pub trait PreFilterExtensions {
    /// `AddPod`.
    fn add_pod(
        &mut self,
        state: &mut CycleState,
        pod: &LazyPod,
        pod_to_add: &LazyPod,
        node: &NodeInfo,
    ) -> Status {
        let _ = (state, pod, pod_to_add, node);
        Status::SUCCESS
    }
    /// `RemovePod`.
    fn remove_pod(
        &mut self,
        state: &mut CycleState,
        pod: &LazyPod,
        pod_to_remove: &LazyPod,
        node: &NodeInfo,
    ) -> Status {
        let _ = (state, pod, pod_to_remove, node);
        Status::SUCCESS
    }
}

/// The PostFilter input: status codes the host recorded per node.
pub struct NodeToStatusMap {
    entries: Once<Vec<(String, Code)>>,
}

impl NodeToStatusMap {
    pub(crate) fn from_host() -> Self {
        NodeToStatusMap { entries: Once::default() }
    }

    /// A map with the given entries (tests).
    pub fn from_entries(entries: Vec<(String, Code)>) -> Self {
        NodeToStatusMap { entries: Once::with(entries) }
    }

    /// All entries (fetched on first use).
    pub fn entries(&self) -> &[(String, Code)] {
        self.entries.get_or_init(|| {
            let b = sys::read_with(Kind::Json, |buf, l| unsafe { sys::node_to_status_map(buf, l) });
            match json::parse(&b) {
                Ok(Json::Object(m)) => {
                    m.into_iter().map(|(k, v)| (k, Code(v.as_i64().unwrap_or(1) as i32))).collect()
                }
                _ => Vec::new(),
            }
        })
    }

    /// The code recorded for `node`.
    pub fn get(&self, node: &str) -> Option<Code> {
        self.entries().iter().find(|(n, _)| n == node).map(|(_, c)| *c)
    }
}

/// `postfilter`: called when no node fits (e.g. preemption).
pub trait PostFilter {
    /// Returns the nomination (if any) and the status.
    fn post_filter(
        &mut self,
        state: &mut CycleState,
        pod: &LazyPod,
        statuses: &NodeToStatusMap,
    ) -> (Option<NominatingInfo>, Status);
}

/// The PreScore input: names of the nodes that passed filtering.
pub struct FilteredNodes {
    names: Once<Vec<String>>,
}

impl FilteredNodes {
    pub(crate) fn from_host() -> Self {
        FilteredNodes { names: Once::default() }
    }

    /// A list with the given names (tests).
    pub fn from_names(names: Vec<String>) -> Self {
        FilteredNodes { names: Once::with(names) }
    }

    /// The node names, in the host's order (fetched on first use).
    pub fn names(&self) -> &[String] {
        self.names.get_or_init(|| {
            let b = sys::read_with(Kind::Json, |buf, l| unsafe { sys::filtered_node_list(buf, l) });
            match json::parse(&b) {
                Ok(Json::Array(items)) => items
                    .into_iter()
                    .filter_map(|v| if let Json::Str(s) = v { Some(s) } else { None })
                    .collect(),
                _ => Vec::new(),
            }
        })
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.names().len()
    }

    /// Whether no node passed filtering.
    pub fn is_empty(&self) -> bool {
        self.names().is_empty()
    }

    /// A lazy [`NodeInfo`] per node.
    pub fn iter(&self) -> impl Iterator<Item = NodeInfo> + '_ {
        self.names().iter().map(|n| NodeInfo::named(n.clone()))
    }
}

/// `prescore`: prepare scoring (e.g. compute and store state once per cycle).
pub trait PreScore {
    /// Success, Skip (no scoring for this pod), or an error.
    fn pre_score(&mut self, state: &mut CycleState, pod: &LazyPod, nodes: &FilteredNodes) -> Status;
}

/// `score`: rank a feasible node.
pub trait Score {
    /// The score (usually 0..=100), or an error status.
    fn score(&mut self, state: &mut CycleState, pod: &LazyPod, node: &NodeInfo) -> Result<i32, Status>;
}

/// One node's score in NormalizeScore.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeScore {
    /// Node name.
    pub name: String,
    /// Score.
    pub score: i64,
}

/// The NormalizeScore input and output: scores to rewrite in place.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeScores {
    /// The scores, in the host's order.
    pub scores: Vec<NodeScore>,
}

impl NodeScores {
    pub(crate) fn from_host() -> Self {
        let b = sys::read_with(Kind::Json, |buf, l| unsafe { sys::node_score_list(buf, l) });
        let scores = match json::parse(&b) {
            Ok(Json::Object(m)) => {
                m.into_iter().map(|(name, v)| NodeScore { name, score: v.as_i64().unwrap_or(0) }).collect()
            }
            _ => Vec::new(),
        };
        NodeScores { scores }
    }

    /// The score of `node`.
    pub fn get(&self, node: &str) -> Option<i64> {
        self.scores.iter().find(|s| s.name == node).map(|s| s.score)
    }

    /// The highest score (0 if empty).
    pub fn max(&self) -> i64 {
        self.scores.iter().map(|s| s.score).max().unwrap_or(0)
    }

    /// The JSON object sent back to the host.
    pub(crate) fn to_json(&self) -> String {
        let mut out = String::from("{");
        for (i, s) in self.scores.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            json::write_str(&mut out, &s.name);
            out.push(':');
            out.push_str(&s.score.to_string());
        }
        out.push('}');
        out
    }
}

/// `normalizescore` (ScoreExtensions): rescale all scores after Score.
pub trait NormalizeScore {
    /// Rewrites `scores` in place; they are sent back only if changed.
    fn normalize_score(&mut self, state: &mut CycleState, pod: &LazyPod, scores: &mut NodeScores) -> Status;
}

/// `reserve` / `unreserve`. Both exports are always emitted together.
pub trait Reserve {
    /// Reserve resources for the pod on the chosen node.
    fn reserve(&mut self, state: &mut CycleState, pod: &LazyPod, node: &NodeInfo) -> Status;
    /// Undo `reserve` (errors can only be logged).
    fn unreserve(&mut self, state: &mut CycleState, pod: &LazyPod, node: &NodeInfo) {
        let _ = (state, pod, node);
    }
}

/// `permit`: approve, deny or delay binding.
pub trait Permit {
    /// The status (Success, Wait, or a rejection) and, for Wait, the timeout in ms.
    fn permit(&mut self, state: &mut CycleState, pod: &LazyPod, node: &NodeInfo) -> (Status, u32);
}

/// `prebind`.
pub trait PreBind {
    /// Work before binding (e.g. provision volumes).
    fn pre_bind(&mut self, state: &mut CycleState, pod: &LazyPod, node: &NodeInfo) -> Status;
}

/// `bind`.
pub trait Bind {
    /// Bind the pod, or return Skip to let the next binder do it.
    fn bind(&mut self, state: &mut CycleState, pod: &LazyPod, node: &NodeInfo) -> Status;
}

/// `postbind`: informational, after a successful bind.
pub trait PostBind {
    /// Called after binding.
    fn post_bind(&mut self, state: &mut CycleState, pod: &LazyPod, node: &NodeInfo);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing;

    #[test]
    fn host_inputs_are_decoded() {
        testing::reset();
        testing::set_filtered_nodes(&["a", "b"]);
        testing::set_node_statuses(&[("a", 0), ("b", 2)]);
        testing::set_node_scores(&[("a", 1), ("b", 7)]);
        let f = FilteredNodes::from_host();
        assert_eq!(f.names(), &["a".to_string(), "b".to_string()]);
        assert_eq!(f.iter().map(|n| n.name().to_string()).collect::<Vec<_>>(), vec!["a", "b"]);
        let m = NodeToStatusMap::from_host();
        assert_eq!(m.get("b"), Some(Code::UNSCHEDULABLE));
        assert_eq!(m.get("c"), None);
        let s = NodeScores::from_host();
        assert_eq!(s.get("b"), Some(7));
        assert_eq!(s.max(), 7);
        assert_eq!(s.to_json(), r#"{"a":1,"b":7}"#);
    }

    #[test]
    fn empty_host_inputs() {
        testing::reset();
        assert!(FilteredNodes::from_host().is_empty());
        assert!(NodeToStatusMap::from_host().entries().is_empty());
        assert!(NodeScores::from_host().scores.is_empty());
        testing::set("filteredNodeList", "not json");
        assert!(FilteredNodes::from_host().is_empty());
    }
}
