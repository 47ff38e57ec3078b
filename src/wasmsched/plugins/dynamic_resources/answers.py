"""Filter's allocation per node kept across cycles (DynamicResources' answers).

kube's Filter runs the allocator on every node for every pod. Pods whose claims come from
one template ask the same of a node until something the allocator reads changes, so the
answer is kept per node while those inputs are equal, and whole simulations end as if
nothing were kept (tests/test_dra_answers.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from wasmsched.plugins.dynamic_resources.allocator import claim_key, share_id
from wasmsched.plugins.dynamic_resources.claims import Manifest, node_claim_inputs
from wasmsched.plugins.dynamic_resources.slices import device_id_text

if TYPE_CHECKING:
    from wasmsched.api.objects import Node
    from wasmsched.plugins.dynamic_resources.slices import Pool
    from wasmsched.plugins.dynamic_resources.state import StateData

Answer = list[dict[str, Any]] | None

# Answers kept per node, one per distinct set of claim specs: a trace's pods come from a
# few templates (the openb trace's GPU shares), taking turns.
ANSWERS_PER_NODE = 32


class _Kept:
    """One node's kept answer and what it was asked."""

    __slots__ = ("answer", "keys", "node", "numbers", "versions")

    def __init__(
        self,
        node: Node,
        versions: tuple[int, ...],
        answer: Answer,
        keys: tuple[str, ...],
        numbers: dict[str, int],
    ) -> None:
        self.node = node
        self.versions = versions
        self.answer = answer
        self.keys = keys  # the claims' keys, when the answer has share IDs
        self.numbers = numbers  # share ID -> its number (allocator.share_id)


class NodeAnswers:
    """The allocator's last answers per node name (up to ANSWERS_PER_NODE, by the
    allocator's inputs), each with what it was asked: the node object, the versions of the
    node's pools, and, for an answer with consumable-capacity shares, the claims it was
    for."""

    __slots__ = ("_kept", "_partitionable", "_pools_for")

    def __init__(self, pools_for: Callable[[Node, bool], list[Pool]], partitionable: bool) -> None:
        self._pools_for = pools_for
        self._partitionable = partitionable
        self._kept: dict[str, dict[tuple[Any, ...], _Kept]] = {}

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
        depend on the node and the pod). Errors are not kept; an explained cycle always
        asks the allocator (explain.py records its verdicts beside a fresh answer), as
        kube's Filter does on every node.

        Share IDs name the claim (allocator.share_id), so an answer with shares kept for
        other claims is given to these with the IDs the allocator would have made for
        them: equal specs take the same search, which numbers its shares alike."""
        assert s.allocator is not None
        inputs = s.inputs
        if inputs is not None and node_claim is not None:
            extra = node_claim_inputs(node_claim)
            inputs = None if extra is None else (*inputs, extra)
        if inputs is None or explained:
            return s.allocator.allocate(node, claims)
        pools = self._pools_for(node, self._partitionable)
        versions = tuple(s.pool_versions.get((p.driver, p.name), 0) for p in pools)
        per_node = self._kept.get(node.name)
        if per_node is None:
            per_node = self._kept[node.name] = {}
        kept = per_node.get(inputs)
        if kept is not None and kept.node is node and kept.versions == versions:
            if not kept.numbers:
                return kept.answer
            keys = tuple(map(claim_key, claims))
            if keys != kept.keys:
                assert kept.answer is not None
                kept.answer, kept.numbers = _renamed_shares(kept.answer, keys, kept.numbers)
                kept.keys = keys
            return kept.answer
        answer, numbers = s.allocator.allocate_numbering_shares(node, claims)
        shared = answer is not None and any(
            "shareID" in r for a in answer for r in a["devices"]["results"]
        )
        if per_node:
            first = next(iter(per_node.values()))
            if first.node is not node or first.versions != versions:
                per_node.clear()  # the node or its devices changed: every answer is stale
            elif len(per_node) >= ANSWERS_PER_NODE:
                del per_node[next(iter(per_node))]
        per_node[inputs] = _Kept(
            node,
            versions,
            answer,
            tuple(map(claim_key, claims)) if shared else (),
            numbers if shared else {},
        )
        return answer


def _renamed_shares(
    answer: list[dict[str, Any]], keys: tuple[str, ...], numbers: dict[str, int]
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """``answer`` with each share ID made for the claim of its position in ``keys``; the
    results are new dicts (a kept answer is shared by the cycles that got it)."""
    renamed: dict[str, int] = {}
    out: list[dict[str, Any]] = []
    for key, allocation in zip(keys, answer, strict=True):
        devices = allocation["devices"]
        results = []
        for r in devices["results"]:
            old = r.get("shareID")
            if old is not None:
                number = numbers[old]
                share = share_id(
                    key, r["request"], device_id_text((r["driver"], r["pool"], r["device"])), number
                )
                renamed[share] = number
                r = {**r, "shareID": share}
            results.append(r)
        out.append({**allocation, "devices": {**devices, "results": results}})
    return out, renamed
