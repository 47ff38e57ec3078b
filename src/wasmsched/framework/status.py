"""Plugin statuses: the codes and rules of kube-scheduler's framework.Status."""

from __future__ import annotations

from enum import IntEnum
from typing import Final


class Code(IntEnum):
    """framework.Code (pkg/scheduler/framework/interface.go); guests return the same values
    (kube-scheduler-wasm-extension guest/api/status.go: Code)."""

    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5
    PENDING = 6


_CODE_NAMES: Final[dict[int, str]] = {
    Code.SUCCESS: "Success",
    Code.ERROR: "Error",
    Code.UNSCHEDULABLE: "Unschedulable",
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable",
    Code.WAIT: "Wait",
    Code.SKIP: "Skip",
    Code.PENDING: "Pending",
}

_REJECTED: Final[frozenset[int]] = frozenset(
    (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING)
)
_NOT_ERRORS: Final[frozenset[int]] = frozenset(_CODE_NAMES) - {Code.ERROR}


def code_name(code: int) -> str:
    """kube-scheduler's name of a code; guests may return any int32."""
    return _CODE_NAMES.get(code, f"Code({code})")


class Status:
    """The result of a plugin call. ``None`` stands for Success everywhere in the framework."""

    __slots__ = ("code", "plugin", "reasons")

    def __init__(self, code: int, *reasons: str, plugin: str = "") -> None:
        self.code = code
        # Empty reasons are dropped (a generator only when there is one to drop).
        self.reasons: tuple[str, ...] = reasons if all(reasons) else tuple(r for r in reasons if r)
        self.plugin = plugin

    @property
    def message(self) -> str:
        """The reasons joined with ", " (Status.Message())."""
        return ", ".join(self.reasons)

    def is_success(self) -> bool:
        """Whether the code is Success."""
        return self.code == Code.SUCCESS

    def is_skip(self) -> bool:
        """Whether the code is Skip."""
        return self.code == Code.SKIP

    def is_wait(self) -> bool:
        """Whether the code is Wait."""
        return self.code == Code.WAIT

    def is_rejected(self) -> bool:
        """Unschedulable, UnschedulableAndUnresolvable or Pending."""
        return self.code in _REJECTED

    def is_error(self) -> bool:
        """Anything that is neither success-like nor a rejection is an error.

        Codes a guest invents (above 6 or negative) are generic errors, as Go's
        Status.IsRejected and IsSuccess treat any other Code.
        """
        return self.code not in _NOT_ERRORS

    def with_plugin(self, plugin: str) -> Status:
        """Sets the plugin that produced the status; returns it."""
        self.plugin = plugin
        return self

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Status):
            return NotImplemented
        return self.code == other.code and self.reasons == other.reasons

    def __hash__(self) -> int:
        return hash((self.code, self.reasons))

    def __repr__(self) -> str:
        plugin = f", plugin={self.plugin!r}" if self.plugin else ""
        return f"Status({code_name(self.code)}, {self.message!r}{plugin})"


def is_success(status: Status | None) -> bool:
    """Whether ``status`` is None or Success."""
    return status is None or status.code == Code.SUCCESS


def code_of(status: Status | None) -> int:
    """The code of ``status`` (Success for None)."""
    return 0 if status is None else status.code


def as_status(err: BaseException, plugin: str = "") -> Status:
    """An Error status from an exception (k8s AsStatus)."""
    return Status(Code.ERROR, str(err) or type(err).__name__, plugin=plugin)


def error(message: str) -> Status:
    """An Error status."""
    return Status(Code.ERROR, message)


def unschedulable(*reasons: str) -> Status:
    """An Unschedulable status."""
    return Status(Code.UNSCHEDULABLE, *reasons)


def unresolvable(*reasons: str) -> Status:
    """An UnschedulableAndUnresolvable status."""
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, *reasons)
