"""DynamicResources, split as upstream's pkg/scheduler/framework/plugins/dynamicresources.

``plugin`` holds the plugin (dynamicresources.go), ``hints`` its events and queueing hints,
``scoring`` its Score (computeScore), ``extended`` extended resources backed by
DeviceClasses (extendeddynamicresources.go), ``tracker`` the claims across cycles
(dra_manager.go: claimTracker), ``answers`` Filter's allocations kept per node, and
``claims`` how a pod's
``spec.resourceClaims`` name their ResourceClaims
(k8s.io/dynamic-resource-allocation/resourceclaim). This module re-exports what the rest of
wasmsched imports.
"""

from wasmsched.plugins.dynamic_resources.plugin import (
    ERR_NOT_FOUND,
    NAME,
    STATE_KEY,
    DynamicResources,
    new,
)

__all__ = ["ERR_NOT_FOUND", "NAME", "STATE_KEY", "DynamicResources", "new"]
