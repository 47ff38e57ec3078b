//! Test guest for the wasm host benchmarks: every hook decodes every field the SDK
//! exposes, so the cost of fetching and decoding a realistic Pod and Node shows up.
//!
//! prefilter walks the pod; filter and score walk the pod and the node. Filter fails with
//! Error if the node is unknown. Score is the number of the pod's containers (init and
//! regular) plus the number of images on the node, capped at 100.

use wasmsched_guest::api::{
    Affinity, Condition, Container, LabelSelector, Node, ObjectMeta, Pod, QuantityMap, SelectorRequirement,
    StrMap,
};
use wasmsched_guest::{
    register, ClusterEvent, CycleState, EnqueueExtensions, Filter, LazyPod, NodeInfo, PreFilter, Score,
    Status,
};

/// Accumulates what was read so the optimiser cannot drop the walk.
#[derive(Default)]
struct Sum(u64);

impl Sum {
    fn s(&mut self, s: &str) {
        self.0 = self.0.wrapping_mul(31).wrapping_add(s.len() as u64 + 1);
    }
    fn n(&mut self, v: i64) {
        self.0 = self.0.wrapping_mul(31).wrapping_add(v as u64);
    }
    fn map(&mut self, m: StrMap<'_>) {
        for (k, v) in m {
            self.s(k);
            self.s(v);
        }
    }
    fn quantities(&mut self, m: QuantityMap<'_>) {
        for (k, q) in m {
            self.s(k);
            self.n(q.milli_value().unwrap_or(-1));
        }
    }
    fn requirement(&mut self, r: SelectorRequirement<'_>) {
        self.s(r.key());
        self.s(r.operator());
        for v in r.values() {
            self.s(v);
        }
    }
    fn selector(&mut self, l: Option<LabelSelector<'_>>) {
        if let Some(l) = l {
            self.map(l.match_labels());
            for r in l.match_expressions() {
                self.requirement(r);
            }
        }
    }
    fn meta(&mut self, m: ObjectMeta<'_>) {
        for s in [m.name(), m.generate_name(), m.namespace(), m.uid(), m.resource_version()] {
            self.s(s);
        }
        self.n(m.generation());
        self.n(m.creation_timestamp());
        self.n(m.deletion_timestamp().unwrap_or(0));
        self.map(m.labels());
        self.map(m.annotations());
        for o in m.owner_references() {
            for s in [o.kind(), o.name(), o.uid(), o.api_version()] {
                self.s(s);
            }
            self.n(o.controller().unwrap_or(false) as i64);
            self.n(o.block_owner_deletion().unwrap_or(false) as i64);
        }
        for f in m.finalizers() {
            self.s(f);
        }
    }
    fn container(&mut self, c: Container<'_>) {
        for s in
            [c.name(), c.image(), c.working_dir(), c.image_pull_policy(), c.restart_policy().unwrap_or("")]
        {
            self.s(s);
        }
        for s in c.command().chain(c.args()) {
            self.s(s);
        }
        for p in c.ports() {
            for s in [p.name(), p.protocol(), p.host_ip()] {
                self.s(s);
            }
            self.n(i64::from(p.host_port()));
            self.n(i64::from(p.container_port()));
        }
        for e in c.env() {
            self.s(e.name());
            self.s(e.value());
        }
        self.quantities(c.resources().limits());
        self.quantities(c.resources().requests());
    }
    fn condition(&mut self, c: Condition<'_>) {
        for s in [c.type_(), c.status(), c.reason(), c.message()] {
            self.s(s);
        }
    }
    fn affinity(&mut self, a: Affinity<'_>) {
        if let Some(na) = a.node_affinity() {
            if let Some(req) = na.required() {
                for t in req.terms() {
                    for r in t.match_expressions().chain(t.match_fields()) {
                        self.requirement(r);
                    }
                }
            }
            for p in na.preferred() {
                self.n(i64::from(p.weight()));
                let t = p.preference();
                for r in t.match_expressions().chain(t.match_fields()) {
                    self.requirement(r);
                }
            }
        }
        for pa in a.pod_affinity().into_iter().chain(a.pod_anti_affinity()) {
            for t in pa.required() {
                self.selector(t.label_selector());
                for n in t.namespaces() {
                    self.s(n);
                }
                self.s(t.topology_key());
            }
            for w in pa.preferred() {
                self.n(i64::from(w.weight()));
                let t = w.term();
                self.selector(t.label_selector());
                self.s(t.topology_key());
            }
        }
    }
    fn pod(&mut self, p: Pod<'_>) {
        self.meta(p.metadata());
        let s = p.spec();
        for c in s.containers().chain(s.init_containers()) {
            self.container(c);
        }
        for x in [
            s.restart_policy(),
            s.service_account_name(),
            s.node_name(),
            s.scheduler_name(),
            s.priority_class_name(),
        ] {
            self.s(x);
        }
        self.map(s.node_selector());
        self.n(s.host_network() as i64);
        if let Some(a) = s.affinity() {
            self.affinity(a);
        }
        for t in s.tolerations() {
            for x in [t.key(), t.operator(), t.value(), t.effect()] {
                self.s(x);
            }
            self.n(t.toleration_seconds().unwrap_or(-1));
        }
        self.n(i64::from(s.priority().unwrap_or(0)));
        self.s(s.preemption_policy().unwrap_or(""));
        self.quantities(s.overhead());
        for t in s.topology_spread_constraints() {
            self.n(i64::from(t.max_skew()));
            self.s(t.topology_key());
            self.s(t.when_unsatisfiable());
            self.selector(t.label_selector());
        }
        for g in s.scheduling_gates() {
            self.s(g);
        }
        if let Some(r) = s.resources() {
            self.quantities(r.limits());
            self.quantities(r.requests());
        }
        let st = p.status();
        for x in [
            st.phase(),
            st.message(),
            st.reason(),
            st.host_ip(),
            st.pod_ip(),
            st.qos_class(),
            st.nominated_node_name(),
        ] {
            self.s(x);
        }
        for c in st.conditions() {
            self.condition(c);
        }
    }
    fn node(&mut self, n: Node<'_>) {
        self.meta(n.metadata());
        let s = n.spec();
        self.s(s.pod_cidr());
        self.s(s.provider_id());
        self.n(s.unschedulable() as i64);
        for t in s.taints() {
            for x in [t.key(), t.value(), t.effect()] {
                self.s(x);
            }
        }
        let st = n.status();
        self.quantities(st.capacity());
        self.quantities(st.allocatable());
        self.s(st.phase());
        for c in st.conditions() {
            self.condition(c);
        }
        for a in st.addresses() {
            self.s(a.type_());
            self.s(a.address());
        }
        let i = st.node_info();
        for x in [
            i.kernel_version(),
            i.os_image(),
            i.container_runtime_version(),
            i.kubelet_version(),
            i.operating_system(),
            i.architecture(),
        ] {
            self.s(x);
        }
        for img in st.images() {
            for name in img.names() {
                self.s(name);
            }
            self.n(img.size_bytes());
        }
    }
}

/// A checksum nobody can hit, used to keep the walk observable.
const NEVER: u64 = 0x5eed_5eed_5eed_5eed;

#[derive(Default)]
struct TestGuest;

impl EnqueueExtensions for TestGuest {
    fn events_to_register(&mut self) -> Vec<ClusterEvent> {
        Vec::new()
    }
}

impl PreFilter for TestGuest {
    fn pre_filter(&mut self, _: &mut CycleState, pod: &LazyPod) -> Result<Option<Vec<String>>, Status> {
        let mut sum = Sum::default();
        sum.pod(pod.get());
        if sum.0 == NEVER {
            return Err(Status::error("checksum"));
        }
        Ok(None)
    }
}

impl Filter for TestGuest {
    fn filter(&mut self, _: &mut CycleState, pod: &LazyPod, node: &NodeInfo) -> Status {
        let mut sum = Sum::default();
        sum.pod(pod.get());
        match node.node() {
            Some(n) => sum.node(n),
            None => return Status::error(format!("node {:?} not found", node.name())),
        }
        if sum.0 == NEVER {
            return Status::error("checksum");
        }
        Status::SUCCESS
    }
}

impl Score for TestGuest {
    fn score(&mut self, _: &mut CycleState, pod: &LazyPod, node: &NodeInfo) -> Result<i32, Status> {
        let mut sum = Sum::default();
        let p = pod.get();
        sum.pod(p);
        let images = match node.node() {
            Some(n) => {
                sum.node(n);
                n.status().images().count()
            }
            None => 0,
        };
        if sum.0 == NEVER {
            return Err(Status::error("checksum"));
        }
        let containers = p.spec().containers().count() + p.spec().init_containers().count();
        Ok((containers + images).min(100) as i32)
    }
}

register!(TestGuest; enqueue, prefilter, filter, score);
