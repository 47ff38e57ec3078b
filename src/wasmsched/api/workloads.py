"""Workload controllers (placeholder, filled in by the workloads change)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["workload_warnings"]


def workload_warnings(others: Iterable[Mapping[str, Any]]) -> list[str]:
    """Warnings about workload objects (none yet)."""
    return []
