"""Filter's allocation per node kept across cycles (DynamicResources' answers).

kube's Filter runs the allocator on every node for every pod. Pods whose claims come from
one template ask the same of a node until something the allocator reads changes, so the
answer is kept per node while those inputs are equal, and whole simulations end as if
nothing were kept (tests/test_dra_answers.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from wasmsched.plugins.dynamic_resources.claims import Manifest, node_claim_inputs

if TYPE_CHECKING:
    from wasmsched.api.objects import Node
    from wasmsched.plugins.dynamic_resources.slices import Pool
    from wasmsched.plugins.dynamic_resources.state import StateData

Answer = list[dict[str, Any]] | None


class NodeAnswers:
    """The allocator's last answer per node name, with what it was asked: (the node
    object, the allocator's inputs, the versions of the node's pools, the answer)."""

    __slots__ = ("_kept", "_partitionable", "_pools_for")

    def __init__(self, pools_for: Callable[[Node, bool], list[Pool]], partitionable: bool) -> None:
        self._pools_for = pools_for
        self._partitionable = partitionable
        self._kept: dict[str, tuple[Node, tuple[Any, ...], tuple[int, ...], Answer]] = {}

    def allocate(
        self,
        s: StateData,
        node: Node,
        claims: Sequence[Manifest],
        node_claim: Manifest | None,
        explained: bool,
    ) -> Answer:
        """The allocator's answer on ``node``; kept across cycles while its inputs are
        equal: the claims' specs (claims from one template have equal specs), the classes,
        the slices, the node object, the versions of the node's pools (which devices of
        them are held), and the extended-resource claim made for this node (its requests
        depend on the node and the pod). Errors and answers with share IDs (derived from
        the claim's name) are not kept; an explained cycle always asks the allocator
        (explain.py records its verdicts beside a fresh answer), as kube's Filter does on
        every node."""
        assert s.allocator is not None
        inputs = s.inputs
        if inputs is not None and node_claim is not None:
            extra = node_claim_inputs(node_claim)
            inputs = None if extra is None else (*inputs, extra)
        if inputs is None or explained:
            return s.allocator.allocate(node, claims)
        pools = self._pools_for(node, self._partitionable)
        versions = tuple(s.pool_versions.get((p.driver, p.name), 0) for p in pools)
        kept = self._kept.get(node.name)
        if kept is not None and kept[0] is node and kept[1] == inputs and kept[2] == versions:
            return kept[3]
        answer = s.allocator.allocate(node, claims)
        if answer is None or not any(
            "shareID" in r for a in answer for r in a["devices"]["results"]
        ):
            self._kept[node.name] = (node, inputs, versions, answer)
        return answer
