"""Whether a newer version of a pod differs from an older one only as a binding or a
status patch makes it differ (``Pod.updated`` then keeps what the older one parsed)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["only_bound_or_status"]

_META_BOOKKEEPING = frozenset({"resourceVersion", "managedFields", "labels"})
# The labels a binding may add or change: kube-apiserver's PodTopologyLabels admission
# (plugin/pkg/admission/podtopologylabels: defaultConfig, on by default from 1.35) copies
# the node's zone and region labels onto the pod being bound.
_BINDING_LABELS = frozenset({"topology.kubernetes.io/zone", "topology.kubernetes.io/region"})
_SPEC_BINDING = frozenset({"nodeName"})


def only_bound_or_status(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """``new`` (a pod's manifest) differs from ``old`` only in its binding (spec.nodeName
    and the topology labels it copies from the node), its status, its resourceVersion and
    its managedFields."""
    old_meta, new_meta = old.get("metadata"), new.get("metadata")
    new_spec = new.get("spec")
    return (
        isinstance(old_meta, Mapping)
        and isinstance(new_meta, Mapping)
        and isinstance(new_spec, Mapping)
        and _same_except(old_meta, new_meta, _META_BOOKKEEPING)
        and _same_labels(old_meta, new_meta)
        and _same_except(old.get("spec"), new_spec, _SPEC_BINDING)
    )


def _same_labels(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """The pods' metadata have the same labels but for those a binding sets."""
    old_labels, new_labels = old.get("labels") or {}, new.get("labels") or {}
    return isinstance(new_labels, Mapping) and _same_except(old_labels, new_labels, _BINDING_LABELS)


def _same_except(old: Any, new: Mapping[str, Any], ignored: frozenset[str]) -> bool:
    """``old`` is a mapping with the same entries as ``new`` but for the ``ignored`` keys."""
    if not isinstance(old, Mapping):
        return False
    for key, value in new.items():
        if key not in ignored and (key not in old or old[key] != value):
            return False
    return all(key in new or key in ignored for key in old)
