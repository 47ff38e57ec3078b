"""The in-tree plugin registry: every plugin under its kube-scheduler name."""

from __future__ import annotations

from wasmsched.framework.interfaces import PluginFactory, Registry
from wasmsched.plugins import (
    default_binder,
    default_preemption,
    dynamic_resources,
    image_locality,
    inter_pod_affinity,
    node_affinity,
    node_name,
    node_ports,
    node_resources_balanced_allocation,
    node_resources_fit,
    node_unschedulable,
    node_volume_limits,
    pod_topology_spread,
    queue_sort,
    scheduling_gates,
    taint_toleration,
    volume_binding,
    volume_restrictions,
    volume_zone,
)

_FACTORIES: tuple[tuple[str, PluginFactory], ...] = (
    (scheduling_gates.NAME, scheduling_gates.new),
    (queue_sort.NAME, queue_sort.new),
    (node_unschedulable.NAME, node_unschedulable.new),
    (node_name.NAME, node_name.new),
    (taint_toleration.NAME, taint_toleration.new),
    (node_affinity.NAME, node_affinity.new),
    (node_ports.NAME, node_ports.new),
    (node_resources_fit.NAME, node_resources_fit.new),
    (volume_restrictions.NAME, volume_restrictions.new),
    (node_volume_limits.NAME, node_volume_limits.new),
    (volume_binding.NAME, volume_binding.new),
    (volume_zone.NAME, volume_zone.new),
    (pod_topology_spread.NAME, pod_topology_spread.new),
    (inter_pod_affinity.NAME, inter_pod_affinity.new),
    (dynamic_resources.NAME, dynamic_resources.new),
    (default_preemption.NAME, default_preemption.new),
    (node_resources_balanced_allocation.NAME, node_resources_balanced_allocation.new),
    (image_locality.NAME, image_locality.new),
    (default_binder.NAME, default_binder.new),
)

IN_TREE_NAMES: tuple[str, ...] = tuple(name for name, _ in _FACTORIES)


def in_tree_registry() -> Registry:
    """A fresh Registry holding a factory ``(args, handle) -> plugin`` per in-tree plugin."""
    registry = Registry()
    for name, factory in _FACTORIES:
        registry.register(name, factory)
    return registry
