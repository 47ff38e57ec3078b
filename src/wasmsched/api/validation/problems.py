"""One validation problem: a field path and what is wrong there."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from wasmsched.api.quantity import quote

__all__ = ["FieldErrors", "Problem"]


@dataclass(frozen=True)
class Problem:
    """``path: detail``, as the API server's field.Error prints it (path may be empty)."""

    path: str
    detail: str

    def __str__(self) -> str:
        return f"{self.path}: {self.detail}" if self.path else self.detail


class FieldErrors:
    """Problems collected as k8s.io/apimachinery pkg/util/validation/field words them."""

    def __init__(self) -> None:
        self.items: list[Problem] = []

    def invalid(self, path: str, value: Any, detail: str) -> None:
        self.items.append(Problem(path, f"Invalid value: {quote(value)}: {detail}"))

    def required(self, path: str, detail: str = "") -> None:
        self.items.append(Problem(path, "Required value" + (f": {detail}" if detail else "")))

    def unsupported(self, path: str, value: Any, supported: Iterable[str]) -> None:
        values = ", ".join(quote(s) for s in supported)
        self.items.append(
            Problem(path, f"Unsupported value: {quote(value)}: supported values: {values}")
        )

    def forbidden(self, path: str, detail: str) -> None:
        self.items.append(Problem(path, f"Forbidden: {detail}"))

    def duplicate(self, path: str, value: Any) -> None:
        self.items.append(Problem(path, f"Duplicate value: {quote(value)}"))

    def enum(self, path: str, value: Any, supported: tuple[str, ...], optional: bool) -> None:
        if value is None or value == "":
            if not optional:
                self.required(path)
            return
        if value not in supported:
            self.unsupported(path, value, supported)

    def int_range(self, path: str, value: Any, low: int, high: int, detail: str = "") -> None:
        if isinstance(value, int | float) and not low <= value <= high:
            self.invalid(path, value, detail or f"must be between {low} and {high}, inclusive")
