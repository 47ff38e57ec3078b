"""DynamicResources' Score (dynamicresources.go: computeScore, from 1.35): prioritized
lists rank the nodes by the subrequests they could give.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from wasmsched.framework.status import Code, Status
from wasmsched.plugins.dynamic_resources.allocator import FIRST_AVAILABLE_MAX_SIZE
from wasmsched.plugins.dynamic_resources.claims import (
    Manifest,
    allocation_of,
    as_list,
    as_mapping,
    requests_of,
)


def compute_score(
    claims: Sequence[Manifest], allocations: Sequence[Mapping[str, Any]]
) -> tuple[int, Status | None]:
    """dynamicresources.go: computeScore. For each claim's request with a prioritized list,
    8 - i for the subrequest i allocated; an allocated claim counts with its own allocation,
    the others with Filter's, in order."""
    score = 0
    pending = iter(allocations)
    for claim in claims:
        allocation = allocation_of(claim)
        if allocation is None:
            allocation = next(pending, None)
            if allocation is None:
                return 0, Status(
                    Code.ERROR,
                    f"number of allocations {len(allocations)} is smaller than number of "
                    "claims needing allocation",
                )
        chosen = {
            str(as_mapping(r).get("request"))
            for r in as_list(as_mapping(allocation.get("devices")).get("results"))
            if "/" in str(as_mapping(r).get("request"))
        }
        for request in requests_of(claim):
            r = as_mapping(request)
            if r.get("exactly") is not None:
                continue
            for i, sub in enumerate(as_list(r.get("firstAvailable"))):
                if f"{r.get('name')}/{as_mapping(sub).get('name')}" in chosen:
                    score += FIRST_AVAILABLE_MAX_SIZE - i
    return score, None
