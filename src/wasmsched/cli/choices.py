"""Choices of command line options shared by the commands and the renderers (cheap to import)."""

from __future__ import annotations

from enum import StrEnum


class Only(StrEnum):
    """Which pods the table lists."""

    pending = "pending"
    unschedulable = "unschedulable"
    all = "all"
