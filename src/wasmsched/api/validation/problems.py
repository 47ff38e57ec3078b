"""One validation problem: a field path and what is wrong there."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Problem"]


@dataclass(frozen=True)
class Problem:
    """``path: detail``, as the API server's field.Error prints it (path may be empty)."""

    path: str
    detail: str

    def __str__(self) -> str:
        return f"{self.path}: {self.detail}" if self.path else self.detail
