"""The DynamicResources plugin's data per pod and claim (dynamicresources.go: stateData,
informationForClaim), in a module of its own so that plugin.py holds the extension points."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from wasmsched.api.selectors import NodeSelector
from wasmsched.framework.status import Status
from wasmsched.plugins.dynamic_resources.claims import Manifest, allocation_of, claim_uid
from wasmsched.plugins.dynamic_resources.extended import (
    ExtendedResourceResolver,
    filter_extended,
    in_memory,
)

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod
    from wasmsched.framework.node_info import NodeInfo
    from wasmsched.plugins.dynamic_resources.allocator import Allocator

__all__ = ["ClaimInfo", "StateData"]


class ClaimInfo:
    """informationForClaim, with the claim: ``available_on`` is the node selector of an
    allocated claim; ``allocation`` the one Reserve made (published by PreBind)."""

    __slots__ = ("allocation", "available_on", "claim", "name", "uid")

    def __init__(self, name: str, claim: Manifest) -> None:
        self.name = name
        self.claim = claim
        # The uid in flight (the special claim's changes when PreBind creates it).
        self.uid = claim_uid(claim)
        self.available_on: NodeSelector | None = None
        self.allocation: dict[str, Any] | None = None


class StateData:
    """dynamicresources.go: stateData, written by PreFilter for every pod it sees.

    ``claims``: the pod's claims in ``spec.resourceClaims`` order, then ``extended``, the
    special claim for its extended resources backed by DRA (``pod_scalars``: its scalar
    requests); ``node_allocations``: Filter's allocations per node (the claims to allocate,
    in order), ``node_extended`` the special claim made per node with the request mappings;
    ``unavailable``: the indices of allocated claims some node could not use, ``not_ready``
    those whose binding failed or timed out (binding.py).
    ``allocating`` is what Filter hands the allocator on every node (the claims to allocate
    as PreFilter found them; the special claim is replaced by the node's), ``prioritized``
    whether any claim has a ``firstAvailable`` request (without one, computeScore is 0 on
    every node); ``inputs`` and ``pool_versions`` key Filter's answers kept across cycles
    (answers.py: NodeAnswers).
    """

    __slots__ = (
        "allocating",
        "allocator",
        "claims",
        "extended",
        "holders",
        "inputs",
        "node_allocations",
        "node_extended",
        "not_ready",
        "pod_scalars",
        "pool_versions",
        "prioritized",
        "unavailable",
    )

    def __init__(self) -> None:
        self.claims: list[ClaimInfo] = []
        self.extended: ClaimInfo | None = None
        self.allocator: Allocator | None = None
        self.allocating: list[Manifest] = []
        # What the allocator's answer depends on besides the node and its pools' devices
        # held (None: not kept across cycles), and those pools' versions at PreFilter.
        self.inputs: tuple[Any, ...] | None = None
        self.pool_versions: dict[tuple[str, str], int] = {}
        self.prioritized = False
        self.holders: dict[str, str] | None = None  # explained cycles: device -> its claim
        self.node_allocations: dict[str, list[dict[str, Any]]] = {}
        self.node_extended: dict[str, tuple[Manifest, list[dict[str, str]]]] = {}
        self.unavailable: set[int] = set()
        # Allocated claims whose binding failed or timed out (Filter: unavailable anywhere).
        self.not_ready: set[int] = set()
        self.pod_scalars: Mapping[str, int] = {}

    def no_user_claim(self) -> bool:
        """claimStore.noUserClaim: only the special claim, if any."""
        return len(self.claims) == (1 if self.extended is not None else 0)

    def filter_extended(
        self, pod: Pod, node_info: NodeInfo, resolver: ExtendedResourceResolver
    ) -> Manifest | Status | None:
        """filterExtendedResources: the special claim made for the node (kept), if any."""
        if self.extended is None:
            return None
        found = filter_extended(
            self.extended.claim, self.pod_scalars, self.no_user_claim(), pod, node_info, resolver
        )
        if found is None or isinstance(found, Status):
            return found
        self.node_extended[node_info.name] = found
        return found[0]

    def with_node_claim(self, node_claim: Manifest) -> list[Manifest]:
        """``allocating`` with the special claim made for a node in its place."""
        return [
            node_claim if info is self.extended else info.claim for _, info in self.to_allocate()
        ]

    def extended_created(self) -> bool:
        """The special claim exists on the API server (not isSpecialClaimName)."""
        return self.extended is not None and not in_memory(self.extended.claim)

    def clone(self) -> StateData:
        """The same object: upstream's stateData.Clone shares it across clones."""
        return self

    def to_allocate(self) -> list[tuple[int, ClaimInfo]]:
        """claimStore.toAllocate: the claims without an allocation, with their index."""
        return [(i, c) for i, c in enumerate(self.claims) if allocation_of(c.claim) is None]
