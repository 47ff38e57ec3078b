//! Cluster events returned by `enqueue` (EnqueueExtensions, abi.md §3.3).

use std::fmt;
use std::ops::BitOr;

/// The resource of a cluster event (the ABI's u32 GVK code).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Resource(pub u32);

impl Resource {
    /// Pod.
    pub const POD: Resource = Resource(0);
    /// Node.
    pub const NODE: Resource = Resource(1);
    /// PersistentVolume.
    pub const PERSISTENT_VOLUME: Resource = Resource(2);
    /// PersistentVolumeClaim.
    pub const PERSISTENT_VOLUME_CLAIM: Resource = Resource(3);
    /// PodSchedulingContext.
    pub const POD_SCHEDULING_CONTEXT: Resource = Resource(4);
    /// ResourceClaim.
    pub const RESOURCE_CLAIM: Resource = Resource(5);
    /// storage.k8s.io/StorageClass.
    pub const STORAGE_CLASS: Resource = Resource(6);
    /// storage.k8s.io/CSINode.
    pub const CSI_NODE: Resource = Resource(7);
    /// storage.k8s.io/CSIDriver.
    pub const CSI_DRIVER: Resource = Resource(8);
    /// storage.k8s.io/CSIStorageCapacity.
    pub const CSI_STORAGE_CAPACITY: Resource = Resource(9);
    /// Any resource (`*`).
    pub const WILDCARD: Resource = Resource(10);
}

impl fmt::Display for Resource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self.0 {
            0 => "Pod",
            1 => "Node",
            2 => "PersistentVolume",
            3 => "PersistentVolumeClaim",
            4 => "PodSchedulingContext",
            5 => "ResourceClaim",
            6 => "StorageClass",
            7 => "CSINode",
            8 => "CSIDriver",
            9 => "CSIStorageCapacity",
            10 => "*",
            n => return write!(f, "GVK({})", n),
        };
        f.write_str(s)
    }
}

/// `framework.ActionType` bits, as in Kubernetes 1.33 (passed to the host unchanged).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ActionType(pub u32);

impl ActionType {
    /// Add.
    pub const ADD: ActionType = ActionType(1);
    /// Delete.
    pub const DELETE: ActionType = ActionType(1 << 1);
    /// UpdateNodeAllocatable.
    pub const UPDATE_NODE_ALLOCATABLE: ActionType = ActionType(1 << 2);
    /// UpdateNodeLabel.
    pub const UPDATE_NODE_LABEL: ActionType = ActionType(1 << 3);
    /// UpdateNodeTaint.
    pub const UPDATE_NODE_TAINT: ActionType = ActionType(1 << 4);
    /// UpdateNodeCondition.
    pub const UPDATE_NODE_CONDITION: ActionType = ActionType(1 << 5);
    /// UpdateNodeAnnotation.
    pub const UPDATE_NODE_ANNOTATION: ActionType = ActionType(1 << 6);
    /// UpdatePodLabel.
    pub const UPDATE_POD_LABEL: ActionType = ActionType(1 << 7);
    /// UpdatePodScaleDown.
    pub const UPDATE_POD_SCALE_DOWN: ActionType = ActionType(1 << 8);
    /// UpdatePodToleration.
    pub const UPDATE_POD_TOLERATION: ActionType = ActionType(1 << 9);
    /// UpdatePodSchedulingGatesEliminated.
    pub const UPDATE_POD_SCHEDULING_GATES_ELIMINATED: ActionType = ActionType(1 << 10);
    /// UpdatePodGeneratedResourceClaim.
    pub const UPDATE_POD_GENERATED_RESOURCE_CLAIM: ActionType = ActionType(1 << 11);
    /// Any other pod update.
    pub const UPDATE_POD_OTHER: ActionType = ActionType(1 << 12);
    /// Every action (Kubernetes 1.33's `All`; upstream's TinyGo SDK still uses 63).
    pub const ALL: ActionType = ActionType((1 << 13) - 1);
    /// Every update action.
    pub const UPDATE: ActionType = ActionType(((1 << 13) - 1) & !3);
}

impl BitOr for ActionType {
    type Output = ActionType;
    fn bitor(self, rhs: ActionType) -> ActionType {
        ActionType(self.0 | rhs.0)
    }
}

/// A cluster event that may make a rejected pod schedulable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ClusterEvent {
    /// The resource.
    pub resource: Resource,
    /// The actions (bitmask).
    pub action: ActionType,
}

impl ClusterEvent {
    /// A new event.
    pub fn new(resource: Resource, action: ActionType) -> Self {
        ClusterEvent { resource, action }
    }
}

/// Encodes events as 8-byte records: u32 LE resource, u32 LE action.
pub fn encode(events: &[ClusterEvent]) -> Vec<u8> {
    let mut out = Vec::with_capacity(events.len() * 8);
    for e in events {
        out.extend_from_slice(&e.resource.0.to_le_bytes());
        out.extend_from_slice(&e.action.0.to_le_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_vectors() {
        let cases: &[(&[ClusterEvent], &[u8])] = &[
            (&[], &[]),
            (&[ClusterEvent::new(Resource::NODE, ActionType::ADD)], &[1, 0, 0, 0, 1, 0, 0, 0]),
            (
                &[ClusterEvent::new(
                    Resource::NODE,
                    ActionType::UPDATE_NODE_LABEL | ActionType::UPDATE_NODE_CONDITION,
                )],
                &[1, 0, 0, 0, 0x28, 0, 0, 0],
            ),
            (
                &[
                    ClusterEvent::new(Resource::NODE, ActionType::ADD),
                    ClusterEvent::new(Resource::PERSISTENT_VOLUME, ActionType::DELETE),
                ],
                &[1, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0],
            ),
            (&[ClusterEvent::new(Resource(0x0102_0304), ActionType::ALL)], &[4, 3, 2, 1, 0xff, 0x1f, 0, 0]),
        ];
        for (events, want) in cases {
            assert_eq!(encode(events), *want);
        }
    }

    #[test]
    fn names_and_bits() {
        assert_eq!(Resource::WILDCARD.to_string(), "*");
        assert_eq!(Resource(99).to_string(), "GVK(99)");
        assert_eq!(ActionType::ALL.0, 8191);
        assert_eq!(ActionType::UPDATE.0, 8188);
    }
}
