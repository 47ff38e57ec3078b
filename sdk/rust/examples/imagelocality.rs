//! ImageLocality: favours nodes that already have the pod's container images, using
//! Kubernetes' formula. Each image present on the node contributes its size scaled by
//! the share of nodes that have it; the sum is clamped to [23 MiB, 1000 MiB × containers]
//! and mapped linearly onto 0..=100.

use wasmsched_guest::lister::{node_list, ImageStates};
use wasmsched_guest::{register, CycleState, LazyPod, NodeInfo, PreFilter, Score, Status};

const MB: i64 = 1024 * 1024;
const MIN_THRESHOLD: i64 = 23 * MB;
const MAX_CONTAINER_THRESHOLD: i64 = 1000 * MB;
const MAX_NODE_SCORE: i64 = 100;
const TOTAL_NODES_KEY: &str = "ImageLocality/totalNodes";

#[derive(Default)]
struct ImageLocality;

/// Appends `:latest` to an image name without a tag, as the kubelet reports it.
fn normalized_image_name(name: &str) -> String {
    let colon = name.rfind(':');
    let slash = name.rfind('/');
    let has_tag = match (colon, slash) {
        (Some(c), Some(s)) => c > s,
        (Some(_), None) => true,
        (None, _) => false,
    };
    if has_tag {
        name.to_string()
    } else {
        format!("{}:latest", name)
    }
}

/// Sum over the pod's images present on the node of size × (nodes with it / all nodes).
fn sum_image_scores<'a>(images: impl Iterator<Item = &'a str>, states: &ImageStates, total: i64) -> i64 {
    images
        .filter_map(|img| states.get(&normalized_image_name(img)))
        .map(|st| (st.size as f64 * (st.num_nodes as f64 / total as f64)) as i64)
        .sum()
}

/// Maps the summed image size onto 0..=MAX_NODE_SCORE.
fn calculate_priority(sum: i64, containers: i64) -> i64 {
    let max_threshold = MAX_CONTAINER_THRESHOLD * containers;
    let clamped = sum.max(MIN_THRESHOLD).min(max_threshold.max(MIN_THRESHOLD));
    if max_threshold <= MIN_THRESHOLD {
        return 0;
    }
    MAX_NODE_SCORE * (clamped - MIN_THRESHOLD) / (max_threshold - MIN_THRESHOLD)
}

// Exported so that the node count is computed once per cycle.
impl PreFilter for ImageLocality {}

impl Score for ImageLocality {
    fn score(&mut self, state: &mut CycleState, pod: &LazyPod, node: &NodeInfo) -> Result<i32, Status> {
        let total = match state.read::<i64>(TOTAL_NODES_KEY) {
            Some(n) => *n,
            None => {
                let n = node_list().get().len() as i64;
                state.write(TOTAL_NODES_KEY, n);
                n
            }
        };
        if total == 0 {
            return Err(Status::error("failed to list nodes"));
        }
        let spec = pod.spec();
        let containers = (spec.init_containers().count() + spec.containers().count()) as i64;
        let images = spec.init_containers().chain(spec.containers()).map(|c| c.image());
        let sum = sum_image_scores(images, node.image_states(), total);
        Ok(calculate_priority(sum, containers) as i32)
    }
}

register!(ImageLocality; prefilter, score);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_names() {
        for (i, want) in [
            ("nginx", "nginx:latest"),
            ("nginx:1.25", "nginx:1.25"),
            ("registry:5000/app", "registry:5000/app:latest"),
            ("registry:5000/app:v1", "registry:5000/app:v1"),
        ] {
            assert_eq!(normalized_image_name(i), want);
        }
    }

    #[test]
    fn priority_formula() {
        // abi.md §8 item 26: 100 MB image on 2 of 3 nodes, one container.
        let sum = (100_000_000f64 * (2.0 / 3.0)) as i64;
        assert_eq!(calculate_priority(sum, 1), 4);
        assert_eq!(calculate_priority(0, 1), 0);
        assert_eq!(calculate_priority(i64::MAX / 4, 1), 100);
        assert_eq!(calculate_priority(5 * MB, 0), 0);
    }
}
