//! Lazy, zero-copy views over `k8s.io.api.core.v1` protobuf messages.
//!
//! A view is a borrowed byte slice; every accessor scans only the fields it
//! needs, so touching `pod.metadata().name()` never decodes the spec. Absent
//! fields read as empty values (like Go's nil-safe getters); optional scalars
//! that Kubernetes marshals only when set return `Option`.
//!
//! Field numbers follow Kubernetes' `core/v1/generated.proto`.

use crate::pb::{self, Reader, Value};
use crate::quantity::Quantity;
use std::fmt;
use std::marker::PhantomData;

/// A type that can be built from the bytes of one length-delimited field.
pub trait FromField<'a>: Sized {
    /// Builds the value from a field's payload.
    fn from_field(bytes: &'a [u8]) -> Self;
}

impl<'a> FromField<'a> for &'a str {
    fn from_field(bytes: &'a [u8]) -> Self {
        std::str::from_utf8(bytes).unwrap_or("")
    }
}

impl<'a> FromField<'a> for &'a [u8] {
    fn from_field(bytes: &'a [u8]) -> Self {
        bytes
    }
}

/// Iterator over every occurrence of a repeated length-delimited field.
#[derive(Clone)]
pub struct Repeated<'a, T> {
    reader: Reader<'a>,
    number: u32,
    _t: PhantomData<T>,
}

impl<'a, T: FromField<'a>> Repeated<'a, T> {
    fn new(buf: &'a [u8], number: u32) -> Self {
        Repeated { reader: Reader::new(buf), number, _t: PhantomData }
    }
}

impl<'a, T: FromField<'a>> Iterator for Repeated<'a, T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        let number = self.number;
        self.reader.by_ref().find_map(|(n, v)| match v {
            Value::Bytes(b) if n == number => Some(T::from_field(b)),
            _ => None,
        })
    }
}

impl<'a, T> fmt::Debug for Repeated<'a, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Repeated(field {})", self.number)
    }
}

/// Repeated string field.
pub type Strings<'a> = Repeated<'a, &'a str>;

/// A `map<string,string>` (labels, annotations, nodeSelector), in wire order.
#[derive(Clone, Debug)]
pub struct StrMap<'a> {
    entries: Repeated<'a, &'a [u8]>,
}

impl<'a> StrMap<'a> {
    fn new(buf: &'a [u8], number: u32) -> Self {
        StrMap { entries: Repeated::new(buf, number) }
    }

    /// The value for `key`, if present.
    pub fn get(&self, key: &str) -> Option<&'a str> {
        self.clone().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    /// Whether `key` is present.
    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }
}

impl<'a> Iterator for StrMap<'a> {
    type Item = (&'a str, &'a str);

    fn next(&mut self) -> Option<Self::Item> {
        self.entries.next().map(|e| (pb::str_field(e, 1).unwrap_or(""), pb::str_field(e, 2).unwrap_or("")))
    }
}

/// A `map<string, resource.Quantity>` (requests, limits, capacity, allocatable).
#[derive(Clone, Debug)]
pub struct QuantityMap<'a> {
    entries: Repeated<'a, &'a [u8]>,
}

impl<'a> QuantityMap<'a> {
    fn new(buf: &'a [u8], number: u32) -> Self {
        QuantityMap { entries: Repeated::new(buf, number) }
    }

    /// The quantity for a resource name such as `cpu` or `memory`.
    pub fn get(&self, name: &str) -> Option<Quantity<'a>> {
        self.clone().find(|(k, _)| *k == name).map(|(_, v)| v)
    }
}

impl<'a> Iterator for QuantityMap<'a> {
    type Item = (&'a str, Quantity<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        self.entries.next().map(|e| {
            let q = pb::bytes_field(e, 2).and_then(|m| pb::str_field(m, 1)).unwrap_or("");
            (pb::str_field(e, 1).unwrap_or(""), Quantity::new(q))
        })
    }
}

macro_rules! view {
    ($(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        #[derive(Clone, Copy, Default, PartialEq, Eq)]
        pub struct $name<'a> {
            buf: &'a [u8],
        }

        impl<'a> $name<'a> {
            /// A view over the encoded message.
            pub fn new(buf: &'a [u8]) -> Self {
                $name { buf }
            }

            /// The encoded message.
            pub fn bytes(&self) -> &'a [u8] {
                self.buf
            }

            #[allow(dead_code)]
            fn s(&self, n: u32) -> &'a str {
                pb::str_field(self.buf, n).unwrap_or("")
            }

            #[allow(dead_code)]
            fn opt_s(&self, n: u32) -> Option<&'a str> {
                pb::str_field(self.buf, n)
            }

            #[allow(dead_code)]
            fn msg(&self, n: u32) -> Option<&'a [u8]> {
                pb::bytes_field(self.buf, n)
            }

            #[allow(dead_code)]
            fn sub<T: FromField<'a> + Default>(&self, n: u32) -> T {
                self.msg(n).map(T::from_field).unwrap_or_default()
            }

            #[allow(dead_code)]
            fn int(&self, n: u32) -> Option<i64> {
                pb::varint_field(self.buf, n).map(|v| v as i64)
            }

            #[allow(dead_code)]
            fn flag(&self, n: u32) -> Option<bool> {
                pb::varint_field(self.buf, n).map(|v| v != 0)
            }

            #[allow(dead_code)]
            fn rep<T: FromField<'a>>(&self, n: u32) -> Repeated<'a, T> {
                Repeated::new(self.buf, n)
            }
        }

        impl<'a> FromField<'a> for $name<'a> {
            fn from_field(bytes: &'a [u8]) -> Self {
                $name { buf: bytes }
            }
        }

        impl<'a> fmt::Debug for $name<'a> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!(stringify!($name), "({} bytes)"), self.buf.len())
            }
        }
    };
}

// ------------------------------------------------------------------ meta/v1

view!(
    /// `metav1.ObjectMeta`.
    ObjectMeta
);

impl<'a> ObjectMeta<'a> {
    /// `name` (1).
    pub fn name(&self) -> &'a str {
        self.s(1)
    }
    /// `generateName` (2).
    pub fn generate_name(&self) -> &'a str {
        self.s(2)
    }
    /// `namespace` (3).
    pub fn namespace(&self) -> &'a str {
        self.s(3)
    }
    /// `uid` (5).
    pub fn uid(&self) -> &'a str {
        self.s(5)
    }
    /// `resourceVersion` (6).
    pub fn resource_version(&self) -> &'a str {
        self.s(6)
    }
    /// `generation` (7).
    pub fn generation(&self) -> i64 {
        self.int(7).unwrap_or(0)
    }
    /// `creationTimestamp` (8) as Unix seconds (0 for the zero time).
    pub fn creation_timestamp(&self) -> i64 {
        self.msg(8).and_then(|t| pb::varint_field(t, 1)).map(|v| v as i64).unwrap_or(0)
    }
    /// `deletionTimestamp` (9) as Unix seconds, if set.
    pub fn deletion_timestamp(&self) -> Option<i64> {
        self.msg(9).map(|t| pb::varint_field(t, 1).map(|v| v as i64).unwrap_or(0))
    }
    /// `labels` (11).
    pub fn labels(&self) -> StrMap<'a> {
        StrMap::new(self.buf, 11)
    }
    /// One label value.
    pub fn label(&self, key: &str) -> Option<&'a str> {
        self.labels().get(key)
    }
    /// `annotations` (12).
    pub fn annotations(&self) -> StrMap<'a> {
        StrMap::new(self.buf, 12)
    }
    /// One annotation value.
    pub fn annotation(&self, key: &str) -> Option<&'a str> {
        self.annotations().get(key)
    }
    /// `ownerReferences` (13).
    pub fn owner_references(&self) -> Repeated<'a, OwnerReference<'a>> {
        self.rep(13)
    }
    /// `finalizers` (14).
    pub fn finalizers(&self) -> Strings<'a> {
        self.rep(14)
    }
}

view!(
    /// `metav1.OwnerReference`.
    OwnerReference
);

impl<'a> OwnerReference<'a> {
    /// `kind` (1).
    pub fn kind(&self) -> &'a str {
        self.s(1)
    }
    /// `name` (3).
    pub fn name(&self) -> &'a str {
        self.s(3)
    }
    /// `uid` (4).
    pub fn uid(&self) -> &'a str {
        self.s(4)
    }
    /// `apiVersion` (5).
    pub fn api_version(&self) -> &'a str {
        self.s(5)
    }
    /// `controller` (6), if set.
    pub fn controller(&self) -> Option<bool> {
        self.flag(6)
    }
    /// `blockOwnerDeletion` (7), if set.
    pub fn block_owner_deletion(&self) -> Option<bool> {
        self.flag(7)
    }
}

view!(
    /// `metav1.LabelSelector`.
    LabelSelector
);

impl<'a> LabelSelector<'a> {
    /// `matchLabels` (1).
    pub fn match_labels(&self) -> StrMap<'a> {
        StrMap::new(self.buf, 1)
    }
    /// `matchExpressions` (2).
    pub fn match_expressions(&self) -> Repeated<'a, SelectorRequirement<'a>> {
        self.rep(2)
    }
}

view!(
    /// `metav1.LabelSelectorRequirement` and `v1.NodeSelectorRequirement` (same layout).
    SelectorRequirement
);

impl<'a> SelectorRequirement<'a> {
    /// `key` (1).
    pub fn key(&self) -> &'a str {
        self.s(1)
    }
    /// `operator` (2): In, NotIn, Exists, DoesNotExist, Gt, Lt.
    pub fn operator(&self) -> &'a str {
        self.s(2)
    }
    /// `values` (3).
    pub fn values(&self) -> Strings<'a> {
        self.rep(3)
    }
}

// ------------------------------------------------------------------ Pod

view!(
    /// `v1.Pod`.
    Pod
);

impl<'a> Pod<'a> {
    /// `metadata` (1).
    pub fn metadata(&self) -> ObjectMeta<'a> {
        self.sub(1)
    }
    /// `spec` (2).
    pub fn spec(&self) -> PodSpec<'a> {
        self.sub(2)
    }
    /// `status` (3).
    pub fn status(&self) -> PodStatus<'a> {
        self.sub(3)
    }
    /// Whether the message carries a `spec` field.
    pub fn has_spec(&self) -> bool {
        self.msg(2).is_some()
    }
    /// `metadata.name`.
    pub fn name(&self) -> &'a str {
        self.metadata().name()
    }
    /// `metadata.namespace`.
    pub fn namespace(&self) -> &'a str {
        self.metadata().namespace()
    }
    /// `metadata.uid`.
    pub fn uid(&self) -> &'a str {
        self.metadata().uid()
    }
    /// Whether the host sent any bytes (a nil pod reads as empty).
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }
}

view!(
    /// `v1.PodSpec`.
    PodSpec
);

impl<'a> PodSpec<'a> {
    /// `containers` (2).
    pub fn containers(&self) -> Repeated<'a, Container<'a>> {
        self.rep(2)
    }
    /// `restartPolicy` (3).
    pub fn restart_policy(&self) -> &'a str {
        self.s(3)
    }
    /// `nodeSelector` (7).
    pub fn node_selector(&self) -> StrMap<'a> {
        StrMap::new(self.buf, 7)
    }
    /// `serviceAccountName` (8).
    pub fn service_account_name(&self) -> &'a str {
        self.s(8)
    }
    /// `nodeName` (10).
    pub fn node_name(&self) -> &'a str {
        self.s(10)
    }
    /// `hostNetwork` (11).
    pub fn host_network(&self) -> bool {
        self.flag(11).unwrap_or(false)
    }
    /// `affinity` (18), if set.
    pub fn affinity(&self) -> Option<Affinity<'a>> {
        self.msg(18).map(Affinity::new)
    }
    /// `schedulerName` (19).
    pub fn scheduler_name(&self) -> &'a str {
        self.s(19)
    }
    /// `initContainers` (20).
    pub fn init_containers(&self) -> Repeated<'a, Container<'a>> {
        self.rep(20)
    }
    /// `tolerations` (22).
    pub fn tolerations(&self) -> Repeated<'a, Toleration<'a>> {
        self.rep(22)
    }
    /// `priorityClassName` (24).
    pub fn priority_class_name(&self) -> &'a str {
        self.s(24)
    }
    /// `priority` (25), if set.
    pub fn priority(&self) -> Option<i32> {
        self.int(25).map(|v| v as i32)
    }
    /// `preemptionPolicy` (31), if set.
    pub fn preemption_policy(&self) -> Option<&'a str> {
        self.opt_s(31)
    }
    /// `overhead` (32).
    pub fn overhead(&self) -> QuantityMap<'a> {
        QuantityMap::new(self.buf, 32)
    }
    /// `topologySpreadConstraints` (33).
    pub fn topology_spread_constraints(&self) -> Repeated<'a, TopologySpreadConstraint<'a>> {
        self.rep(33)
    }
    /// Names of `schedulingGates` (38).
    pub fn scheduling_gates(&self) -> impl Iterator<Item = &'a str> {
        self.rep::<&'a [u8]>(38).map(|g| pb::str_field(g, 1).unwrap_or(""))
    }
    /// Pod-level `resources` (40), if set.
    pub fn resources(&self) -> Option<ResourceRequirements<'a>> {
        self.msg(40).map(ResourceRequirements::new)
    }
}

view!(
    /// `v1.Container`.
    Container
);

impl<'a> Container<'a> {
    /// `name` (1).
    pub fn name(&self) -> &'a str {
        self.s(1)
    }
    /// `image` (2).
    pub fn image(&self) -> &'a str {
        self.s(2)
    }
    /// `command` (3).
    pub fn command(&self) -> Strings<'a> {
        self.rep(3)
    }
    /// `args` (4).
    pub fn args(&self) -> Strings<'a> {
        self.rep(4)
    }
    /// `workingDir` (5).
    pub fn working_dir(&self) -> &'a str {
        self.s(5)
    }
    /// `ports` (6).
    pub fn ports(&self) -> Repeated<'a, ContainerPort<'a>> {
        self.rep(6)
    }
    /// `env` (7).
    pub fn env(&self) -> Repeated<'a, EnvVar<'a>> {
        self.rep(7)
    }
    /// `resources` (8).
    pub fn resources(&self) -> ResourceRequirements<'a> {
        self.sub(8)
    }
    /// `imagePullPolicy` (14).
    pub fn image_pull_policy(&self) -> &'a str {
        self.s(14)
    }
    /// `restartPolicy` (24), set for sidecar init containers.
    pub fn restart_policy(&self) -> Option<&'a str> {
        self.opt_s(24)
    }
}

view!(
    /// `v1.ContainerPort`.
    ContainerPort
);

impl<'a> ContainerPort<'a> {
    /// `name` (1).
    pub fn name(&self) -> &'a str {
        self.s(1)
    }
    /// `hostPort` (2).
    pub fn host_port(&self) -> i32 {
        self.int(2).unwrap_or(0) as i32
    }
    /// `containerPort` (3).
    pub fn container_port(&self) -> i32 {
        self.int(3).unwrap_or(0) as i32
    }
    /// `protocol` (4).
    pub fn protocol(&self) -> &'a str {
        self.s(4)
    }
    /// `hostIP` (5).
    pub fn host_ip(&self) -> &'a str {
        self.s(5)
    }
}

view!(
    /// `v1.EnvVar` (name and literal value only).
    EnvVar
);

impl<'a> EnvVar<'a> {
    /// `name` (1).
    pub fn name(&self) -> &'a str {
        self.s(1)
    }
    /// `value` (2).
    pub fn value(&self) -> &'a str {
        self.s(2)
    }
}

view!(
    /// `v1.ResourceRequirements`.
    ResourceRequirements
);

impl<'a> ResourceRequirements<'a> {
    /// `limits` (1).
    pub fn limits(&self) -> QuantityMap<'a> {
        QuantityMap::new(self.buf, 1)
    }
    /// `requests` (2).
    pub fn requests(&self) -> QuantityMap<'a> {
        QuantityMap::new(self.buf, 2)
    }
}

view!(
    /// `v1.Toleration`.
    Toleration
);

impl<'a> Toleration<'a> {
    /// `key` (1).
    pub fn key(&self) -> &'a str {
        self.s(1)
    }
    /// `operator` (2): Exists or Equal (empty means Equal).
    pub fn operator(&self) -> &'a str {
        self.s(2)
    }
    /// `value` (3).
    pub fn value(&self) -> &'a str {
        self.s(3)
    }
    /// `effect` (4).
    pub fn effect(&self) -> &'a str {
        self.s(4)
    }
    /// `tolerationSeconds` (5), if set.
    pub fn toleration_seconds(&self) -> Option<i64> {
        self.int(5)
    }

    /// Kubernetes' `Toleration.ToleratesTaint`.
    pub fn tolerates(&self, taint: &Taint<'_>) -> bool {
        let effect = self.effect();
        if !effect.is_empty() && effect != taint.effect() {
            return false;
        }
        let key = self.key();
        if !key.is_empty() && key != taint.key() {
            return false;
        }
        match self.operator() {
            "Exists" => true,
            "" | "Equal" => self.value() == taint.value(),
            _ => false,
        }
    }
}

view!(
    /// `v1.Affinity`.
    Affinity
);

impl<'a> Affinity<'a> {
    /// `nodeAffinity` (1), if set.
    pub fn node_affinity(&self) -> Option<NodeAffinity<'a>> {
        self.msg(1).map(NodeAffinity::new)
    }
    /// `podAffinity` (2), if set.
    pub fn pod_affinity(&self) -> Option<PodAffinity<'a>> {
        self.msg(2).map(PodAffinity::new)
    }
    /// `podAntiAffinity` (3), if set (same layout as pod affinity).
    pub fn pod_anti_affinity(&self) -> Option<PodAffinity<'a>> {
        self.msg(3).map(PodAffinity::new)
    }
}

view!(
    /// `v1.NodeAffinity`.
    NodeAffinity
);

impl<'a> NodeAffinity<'a> {
    /// `requiredDuringSchedulingIgnoredDuringExecution` (1), if set.
    pub fn required(&self) -> Option<NodeSelector<'a>> {
        self.msg(1).map(NodeSelector::new)
    }
    /// `preferredDuringSchedulingIgnoredDuringExecution` (2).
    pub fn preferred(&self) -> Repeated<'a, PreferredSchedulingTerm<'a>> {
        self.rep(2)
    }
}

view!(
    /// `v1.NodeSelector`.
    NodeSelector
);

impl<'a> NodeSelector<'a> {
    /// `nodeSelectorTerms` (1); the terms are ORed.
    pub fn terms(&self) -> Repeated<'a, NodeSelectorTerm<'a>> {
        self.rep(1)
    }
}

view!(
    /// `v1.NodeSelectorTerm`; its requirements are ANDed.
    NodeSelectorTerm
);

impl<'a> NodeSelectorTerm<'a> {
    /// `matchExpressions` (1) over node labels.
    pub fn match_expressions(&self) -> Repeated<'a, SelectorRequirement<'a>> {
        self.rep(1)
    }
    /// `matchFields` (2) over node fields (`metadata.name`).
    pub fn match_fields(&self) -> Repeated<'a, SelectorRequirement<'a>> {
        self.rep(2)
    }
}

view!(
    /// `v1.PreferredSchedulingTerm`.
    PreferredSchedulingTerm
);

impl<'a> PreferredSchedulingTerm<'a> {
    /// `weight` (1).
    pub fn weight(&self) -> i32 {
        self.int(1).unwrap_or(0) as i32
    }
    /// `preference` (2).
    pub fn preference(&self) -> NodeSelectorTerm<'a> {
        self.sub(2)
    }
}

view!(
    /// `v1.PodAffinity` / `v1.PodAntiAffinity`.
    PodAffinity
);

impl<'a> PodAffinity<'a> {
    /// Required terms (1).
    pub fn required(&self) -> Repeated<'a, PodAffinityTerm<'a>> {
        self.rep(1)
    }
    /// Preferred weighted terms (2).
    pub fn preferred(&self) -> Repeated<'a, WeightedPodAffinityTerm<'a>> {
        self.rep(2)
    }
}

view!(
    /// `v1.PodAffinityTerm`.
    PodAffinityTerm
);

impl<'a> PodAffinityTerm<'a> {
    /// `labelSelector` (1), if set.
    pub fn label_selector(&self) -> Option<LabelSelector<'a>> {
        self.msg(1).map(LabelSelector::new)
    }
    /// `namespaces` (2).
    pub fn namespaces(&self) -> Strings<'a> {
        self.rep(2)
    }
    /// `topologyKey` (3).
    pub fn topology_key(&self) -> &'a str {
        self.s(3)
    }
}

view!(
    /// `v1.WeightedPodAffinityTerm`.
    WeightedPodAffinityTerm
);

impl<'a> WeightedPodAffinityTerm<'a> {
    /// `weight` (1).
    pub fn weight(&self) -> i32 {
        self.int(1).unwrap_or(0) as i32
    }
    /// `podAffinityTerm` (2).
    pub fn term(&self) -> PodAffinityTerm<'a> {
        self.sub(2)
    }
}

view!(
    /// `v1.TopologySpreadConstraint`.
    TopologySpreadConstraint
);

impl<'a> TopologySpreadConstraint<'a> {
    /// `maxSkew` (1).
    pub fn max_skew(&self) -> i32 {
        self.int(1).unwrap_or(0) as i32
    }
    /// `topologyKey` (2).
    pub fn topology_key(&self) -> &'a str {
        self.s(2)
    }
    /// `whenUnsatisfiable` (3).
    pub fn when_unsatisfiable(&self) -> &'a str {
        self.s(3)
    }
    /// `labelSelector` (4), if set.
    pub fn label_selector(&self) -> Option<LabelSelector<'a>> {
        self.msg(4).map(LabelSelector::new)
    }
}

view!(
    /// `v1.PodStatus`.
    PodStatus
);

impl<'a> PodStatus<'a> {
    /// `phase` (1).
    pub fn phase(&self) -> &'a str {
        self.s(1)
    }
    /// `conditions` (2).
    pub fn conditions(&self) -> Repeated<'a, Condition<'a>> {
        self.rep(2)
    }
    /// `message` (3).
    pub fn message(&self) -> &'a str {
        self.s(3)
    }
    /// `reason` (4).
    pub fn reason(&self) -> &'a str {
        self.s(4)
    }
    /// `hostIP` (5).
    pub fn host_ip(&self) -> &'a str {
        self.s(5)
    }
    /// `podIP` (6).
    pub fn pod_ip(&self) -> &'a str {
        self.s(6)
    }
    /// `qosClass` (9).
    pub fn qos_class(&self) -> &'a str {
        self.s(9)
    }
    /// `nominatedNodeName` (11).
    pub fn nominated_node_name(&self) -> &'a str {
        self.s(11)
    }
}

view!(
    /// `v1.PodCondition` and `v1.NodeCondition`: type (1), status (2), reason (5), message (6).
    Condition
);

impl<'a> Condition<'a> {
    /// `type` (1).
    pub fn type_(&self) -> &'a str {
        self.s(1)
    }
    /// `status` (2): True, False or Unknown.
    pub fn status(&self) -> &'a str {
        self.s(2)
    }
    /// `reason` (5).
    pub fn reason(&self) -> &'a str {
        self.s(5)
    }
    /// `message` (6).
    pub fn message(&self) -> &'a str {
        self.s(6)
    }
}

// ------------------------------------------------------------------ Node

view!(
    /// `v1.Node`.
    Node
);

impl<'a> Node<'a> {
    /// `metadata` (1).
    pub fn metadata(&self) -> ObjectMeta<'a> {
        self.sub(1)
    }
    /// `spec` (2).
    pub fn spec(&self) -> NodeSpec<'a> {
        self.sub(2)
    }
    /// `status` (3).
    pub fn status(&self) -> NodeStatus<'a> {
        self.sub(3)
    }
    /// `metadata.name`.
    pub fn name(&self) -> &'a str {
        self.metadata().name()
    }
    /// One label of the node.
    pub fn label(&self, key: &str) -> Option<&'a str> {
        self.metadata().label(key)
    }
}

view!(
    /// `v1.NodeSpec`.
    NodeSpec
);

impl<'a> NodeSpec<'a> {
    /// `podCIDR` (1).
    pub fn pod_cidr(&self) -> &'a str {
        self.s(1)
    }
    /// `providerID` (3).
    pub fn provider_id(&self) -> &'a str {
        self.s(3)
    }
    /// `unschedulable` (4).
    pub fn unschedulable(&self) -> bool {
        self.flag(4).unwrap_or(false)
    }
    /// `taints` (5).
    pub fn taints(&self) -> Repeated<'a, Taint<'a>> {
        self.rep(5)
    }
}

view!(
    /// `v1.Taint`.
    Taint
);

impl<'a> Taint<'a> {
    /// `key` (1).
    pub fn key(&self) -> &'a str {
        self.s(1)
    }
    /// `value` (2).
    pub fn value(&self) -> &'a str {
        self.s(2)
    }
    /// `effect` (3): NoSchedule, PreferNoSchedule or NoExecute.
    pub fn effect(&self) -> &'a str {
        self.s(3)
    }
}

view!(
    /// `v1.NodeStatus`.
    NodeStatus
);

impl<'a> NodeStatus<'a> {
    /// `capacity` (1).
    pub fn capacity(&self) -> QuantityMap<'a> {
        QuantityMap::new(self.buf, 1)
    }
    /// `allocatable` (2).
    pub fn allocatable(&self) -> QuantityMap<'a> {
        QuantityMap::new(self.buf, 2)
    }
    /// `phase` (3).
    pub fn phase(&self) -> &'a str {
        self.s(3)
    }
    /// `conditions` (4).
    pub fn conditions(&self) -> Repeated<'a, Condition<'a>> {
        self.rep(4)
    }
    /// `addresses` (5).
    pub fn addresses(&self) -> Repeated<'a, NodeAddress<'a>> {
        self.rep(5)
    }
    /// `nodeInfo` (7).
    pub fn node_info(&self) -> NodeSystemInfo<'a> {
        self.sub(7)
    }
    /// `images` (8).
    pub fn images(&self) -> Repeated<'a, ContainerImage<'a>> {
        self.rep(8)
    }
}

view!(
    /// `v1.NodeAddress`.
    NodeAddress
);

impl<'a> NodeAddress<'a> {
    /// `type` (1).
    pub fn type_(&self) -> &'a str {
        self.s(1)
    }
    /// `address` (2).
    pub fn address(&self) -> &'a str {
        self.s(2)
    }
}

view!(
    /// `v1.NodeSystemInfo`.
    NodeSystemInfo
);

impl<'a> NodeSystemInfo<'a> {
    /// `kernelVersion` (4).
    pub fn kernel_version(&self) -> &'a str {
        self.s(4)
    }
    /// `osImage` (5).
    pub fn os_image(&self) -> &'a str {
        self.s(5)
    }
    /// `containerRuntimeVersion` (6).
    pub fn container_runtime_version(&self) -> &'a str {
        self.s(6)
    }
    /// `kubeletVersion` (7).
    pub fn kubelet_version(&self) -> &'a str {
        self.s(7)
    }
    /// `operatingSystem` (9).
    pub fn operating_system(&self) -> &'a str {
        self.s(9)
    }
    /// `architecture` (10).
    pub fn architecture(&self) -> &'a str {
        self.s(10)
    }
}

view!(
    /// `v1.ContainerImage`.
    ContainerImage
);

impl<'a> ContainerImage<'a> {
    /// `names` (1).
    pub fn names(&self) -> Strings<'a> {
        self.rep(1)
    }
    /// `sizeBytes` (2).
    pub fn size_bytes(&self) -> i64 {
        self.int(2).unwrap_or(0)
    }
}

view!(
    /// `v1.NodeList`.
    NodeList
);

impl<'a> NodeList<'a> {
    /// `items` (2).
    pub fn items(&self) -> Repeated<'a, Node<'a>> {
        self.rep(2)
    }
    /// Number of items, without decoding them.
    pub fn len(&self) -> usize {
        self.items().count()
    }
    /// Whether the list has no items.
    pub fn is_empty(&self) -> bool {
        self.items().next().is_none()
    }
}

// ------------------------------------------------------------------ object references

/// An object that can be referenced in logs and events (`klog.KObj`, `ObjectReference`).
pub trait KObject {
    /// `Kind`, e.g. `Pod`.
    fn kind(&self) -> &str;
    /// `metadata.name`.
    fn name(&self) -> &str;
    /// `metadata.namespace`.
    fn namespace(&self) -> &str;
    /// `metadata.uid`.
    fn uid(&self) -> &str;
    /// `metadata.resourceVersion`.
    fn resource_version(&self) -> &str;
    /// `APIVersion` (`v1` for pods and nodes).
    fn api_version(&self) -> &str {
        "v1"
    }
}

macro_rules! kobject_via_meta {
    ($t:ty, $kind:expr) => {
        impl KObject for $t {
            fn kind(&self) -> &str {
                $kind
            }
            fn name(&self) -> &str {
                self.metadata().name()
            }
            fn namespace(&self) -> &str {
                self.metadata().namespace()
            }
            fn uid(&self) -> &str {
                self.metadata().uid()
            }
            fn resource_version(&self) -> &str {
                self.metadata().resource_version()
            }
        }
    };
}

kobject_via_meta!(Pod<'_>, "Pod");
kobject_via_meta!(Node<'_>, "Node");

/// An owned object reference (for objects that are not at hand as protobuf).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ObjectRef {
    /// Kind.
    pub kind: String,
    /// API version.
    pub api_version: String,
    /// Name.
    pub name: String,
    /// Namespace.
    pub namespace: String,
    /// UID.
    pub uid: String,
    /// Resource version.
    pub resource_version: String,
}

impl KObject for ObjectRef {
    fn kind(&self) -> &str {
        &self.kind
    }
    fn name(&self) -> &str {
        &self.name
    }
    fn namespace(&self) -> &str {
        &self.namespace
    }
    fn uid(&self) -> &str {
        &self.uid
    }
    fn resource_version(&self) -> &str {
        &self.resource_version
    }
    fn api_version(&self) -> &str {
        &self.api_version
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pb::Writer;

    pub(crate) fn sample_pod() -> Vec<u8> {
        let mut w = Writer::new();
        w.message(1, |m| {
            m.string(1, "happy8-meta")
                .string(2, "")
                .string(3, "test")
                .string(5, "uid-1")
                .string(6, "42")
                .int(7, 3)
                .message(8, |t| {
                    t.int(1, 1_700_000_000);
                })
                .map_entry(11, "app", "web")
                .map_entry(11, "tier", "front")
                .map_entry(12, "note", "x")
                .message(13, |o| {
                    o.string(1, "ReplicaSet")
                        .string(3, "rs")
                        .string(4, "rs-uid")
                        .string(5, "apps/v1")
                        .boolean(6, true);
                })
                .string(14, "fin");
        })
        .message(2, |s| {
            s.message(2, |c| {
                c.string(1, "main")
                    .string(2, "nginx:1.25")
                    .string(3, "run")
                    .message(6, |p| {
                        p.string(1, "http").int(2, 8080).int(3, 80).string(4, "TCP");
                    })
                    .message(8, |r| {
                        r.quantity_entry(1, "cpu", "1").quantity_entry(2, "cpu", "100m");
                        r.quantity_entry(2, "memory", "500Mi");
                    });
            })
            .message(2, |c| {
                c.string(1, "side").string(2, "busybox");
            })
            .string(3, "Always")
            .map_entry(7, "disktype", "ssd")
            .string(10, "happy8")
            .message(18, |a| {
                a.message(1, |na| {
                    na.message(1, |ns| {
                        ns.message(1, |t| {
                            t.message(1, |r| {
                                r.string(1, "zone").string(2, "In").string(3, "a").string(3, "b");
                            });
                        });
                    })
                    .message(2, |p| {
                        p.int(1, 5).message(2, |t| {
                            t.message(2, |r| {
                                r.string(1, "metadata.name").string(2, "In").string(3, "n1");
                            });
                        });
                    });
                });
            })
            .string(19, "my-scheduler")
            .message(20, |c| {
                c.string(1, "init").string(2, "alpine:3");
            })
            .message(22, |t| {
                t.string(1, "k").string(2, "Equal").string(3, "v").string(4, "NoSchedule");
            })
            .int(25, -5);
        })
        .message(3, |st| {
            st.string(1, "Pending").string(11, "nominated");
        });
        w.finish()
    }

    #[test]
    fn pod_fields() {
        let bytes = sample_pod();
        let pod = Pod::new(&bytes);
        let meta = pod.metadata();
        assert_eq!(pod.name(), "happy8-meta");
        assert_eq!(pod.namespace(), "test");
        assert_eq!(pod.uid(), "uid-1");
        assert_eq!(meta.resource_version(), "42");
        assert_eq!(meta.generation(), 3);
        assert_eq!(meta.creation_timestamp(), 1_700_000_000);
        assert_eq!(meta.deletion_timestamp(), None);
        assert_eq!(meta.labels().collect::<Vec<_>>(), vec![("app", "web"), ("tier", "front")]);
        assert_eq!(meta.label("tier"), Some("front"));
        assert_eq!(meta.label("nope"), None);
        assert_eq!(meta.annotation("note"), Some("x"));
        let owner = meta.owner_references().next().unwrap();
        assert_eq!(
            (owner.kind(), owner.name(), owner.uid(), owner.api_version(), owner.controller()),
            ("ReplicaSet", "rs", "rs-uid", "apps/v1", Some(true))
        );
        assert_eq!(owner.block_owner_deletion(), None);
        assert_eq!(meta.finalizers().collect::<Vec<_>>(), vec!["fin"]);

        let spec = pod.spec();
        assert_eq!(spec.node_name(), "happy8");
        assert_eq!(spec.scheduler_name(), "my-scheduler");
        assert_eq!(spec.priority(), Some(-5));
        assert_eq!(spec.restart_policy(), "Always");
        assert_eq!(spec.node_selector().get("disktype"), Some("ssd"));
        let names: Vec<_> = spec.containers().map(|c| (c.name(), c.image())).collect();
        assert_eq!(names, vec![("main", "nginx:1.25"), ("side", "busybox")]);
        let main = spec.containers().next().unwrap();
        assert_eq!(main.command().collect::<Vec<_>>(), vec!["run"]);
        let port = main.ports().next().unwrap();
        assert_eq!(
            (port.name(), port.host_port(), port.container_port(), port.protocol()),
            ("http", 8080, 80, "TCP")
        );
        let res = main.resources();
        assert_eq!(res.limits().get("cpu").unwrap().as_str(), "1");
        assert_eq!(res.requests().get("cpu").unwrap().milli_value(), Some(100));
        assert_eq!(res.requests().get("memory").unwrap().value(), Some(500 << 20));
        assert_eq!(res.requests().count(), 2);
        assert_eq!(spec.init_containers().map(|c| c.image()).collect::<Vec<_>>(), vec!["alpine:3"]);
        let tol = spec.tolerations().next().unwrap();
        assert_eq!((tol.key(), tol.operator(), tol.value(), tol.effect()), ("k", "Equal", "v", "NoSchedule"));
        assert_eq!(tol.toleration_seconds(), None);

        let na = spec.affinity().unwrap().node_affinity().unwrap();
        let term = na.required().unwrap().terms().next().unwrap();
        let req = term.match_expressions().next().unwrap();
        assert_eq!((req.key(), req.operator()), ("zone", "In"));
        assert_eq!(req.values().collect::<Vec<_>>(), vec!["a", "b"]);
        let pref = na.preferred().next().unwrap();
        assert_eq!(pref.weight(), 5);
        assert_eq!(pref.preference().match_fields().next().unwrap().key(), "metadata.name");
        assert!(spec.affinity().unwrap().pod_affinity().is_none());

        assert_eq!(pod.status().phase(), "Pending");
        assert_eq!(pod.status().nominated_node_name(), "nominated");
    }

    #[test]
    fn empty_and_absent_fields_read_as_defaults() {
        let pod = Pod::new(&[]);
        assert!(pod.is_empty());
        assert!(!pod.has_spec());
        assert_eq!(pod.name(), "");
        assert_eq!(pod.spec().node_name(), "");
        assert_eq!(pod.spec().containers().count(), 0);
        assert_eq!(pod.spec().priority(), None);
        assert!(pod.spec().affinity().is_none());
        assert_eq!(pod.metadata().labels().count(), 0);
    }

    fn sample_node() -> Vec<u8> {
        let mut w = Writer::new();
        w.message(1, |m| {
            m.string(1, "glad8").map_entry(11, "disktype", "ssd");
        })
        .message(2, |s| {
            s.string(1, "10.0.0.0/24").boolean(4, true).message(5, |t| {
                t.string(1, "dedicated").string(2, "gpu").string(3, "NoSchedule");
            });
        })
        .message(3, |st| {
            st.quantity_entry(1, "cpu", "4")
                .quantity_entry(2, "cpu", "3800m")
                .quantity_entry(2, "pods", "110")
                .message(4, |c| {
                    c.string(1, "Ready").string(2, "True").string(5, "KubeletReady");
                })
                .message(5, |a| {
                    a.string(1, "InternalIP").string(2, "10.0.0.8");
                })
                .message(7, |i| {
                    i.string(7, "v1.33.0").string(10, "amd64");
                })
                .message(8, |i| {
                    i.string(1, "nginx@sha256:abc").string(1, "nginx:1.25").int(2, 1_000_000);
                });
        });
        w.finish()
    }

    #[test]
    fn node_fields() {
        let bytes = sample_node();
        let node = Node::new(&bytes);
        assert_eq!(node.name(), "glad8");
        assert_eq!(node.label("disktype"), Some("ssd"));
        let spec = node.spec();
        assert!(spec.unschedulable());
        assert_eq!(spec.pod_cidr(), "10.0.0.0/24");
        let taint = spec.taints().next().unwrap();
        assert_eq!((taint.key(), taint.value(), taint.effect()), ("dedicated", "gpu", "NoSchedule"));
        let st = node.status();
        assert_eq!(st.capacity().get("cpu").unwrap().milli_value(), Some(4000));
        assert_eq!(st.allocatable().get("cpu").unwrap().milli_value(), Some(3800));
        assert_eq!(st.allocatable().get("pods").unwrap().value(), Some(110));
        let cond = st.conditions().next().unwrap();
        assert_eq!((cond.type_(), cond.status(), cond.reason()), ("Ready", "True", "KubeletReady"));
        assert_eq!(st.addresses().next().unwrap().address(), "10.0.0.8");
        assert_eq!(st.node_info().kubelet_version(), "v1.33.0");
        assert_eq!(st.node_info().architecture(), "amd64");
        let img = st.images().next().unwrap();
        assert_eq!(img.names().collect::<Vec<_>>(), vec!["nginx@sha256:abc", "nginx:1.25"]);
        assert_eq!(img.size_bytes(), 1_000_000);

        let mut list = Writer::new();
        list.message(1, |_| {}).bytes(2, &bytes).bytes(2, &bytes);
        let l = list.finish();
        let nl = NodeList::new(&l);
        assert_eq!(nl.len(), 2);
        assert!(!nl.is_empty());
        assert_eq!(nl.items().map(|n| n.name()).collect::<Vec<_>>(), vec!["glad8", "glad8"]);
    }

    #[test]
    fn toleration_matches_taint() {
        let taint_bytes = {
            let mut w = Writer::new();
            w.string(1, "k").string(2, "v").string(3, "NoSchedule");
            w.finish()
        };
        let taint = Taint::new(&taint_bytes);
        let cases: &[(&str, &str, &str, &str, bool)] = &[
            ("k", "Equal", "v", "NoSchedule", true),
            ("k", "", "v", "", true),
            ("k", "Equal", "w", "NoSchedule", false),
            ("k", "Exists", "", "", true),
            ("", "Exists", "", "", true),
            ("other", "Exists", "", "", false),
            ("k", "Exists", "", "NoExecute", false),
            ("k", "Bogus", "v", "", false),
        ];
        for (key, op, value, effect, want) in cases {
            let mut w = Writer::new();
            w.string(1, key).string(2, op).string(3, value).string(4, effect);
            let b = w.finish();
            assert_eq!(Toleration::new(&b).tolerates(&taint), *want, "{:?}", (key, op, value, effect));
        }
    }
}
