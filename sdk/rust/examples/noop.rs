//! Noop: enqueue, prefilter, filter and score that do nothing. The base case of the wasm
//! host benchmarks: it measures the host's call path plus the SDK's per-call work.

use wasmsched_guest::{
    register, ClusterEvent, CycleState, EnqueueExtensions, Filter, LazyPod, NodeInfo, PreFilter, Score,
    Status,
};

#[derive(Default)]
struct Noop;

impl EnqueueExtensions for Noop {
    fn events_to_register(&mut self) -> Vec<ClusterEvent> {
        Vec::new()
    }
}

impl PreFilter for Noop {}

impl Filter for Noop {
    fn filter(&mut self, _: &mut CycleState, _: &LazyPod, _: &NodeInfo) -> Status {
        Status::SUCCESS
    }
}

impl Score for Noop {
    fn score(&mut self, _: &mut CycleState, _: &LazyPod, _: &NodeInfo) -> Result<i32, Status> {
        Ok(0)
    }
}

register!(Noop; enqueue, prefilter, filter, score);
