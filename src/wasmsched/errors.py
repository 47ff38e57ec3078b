"""The one exception hierarchy of wasmsched.

Every error that wasmsched raises on purpose derives from :class:`WasmschedError`, so an
embedding program (and the CLI) can catch that one base. The subclasses say which layer
refused: bad input (manifests, configuration, wasm guests), a failure of the scheduling
framework, or a failure talking to something outside (an extender, the API server).
"""

from __future__ import annotations

__all__ = ["ExternalError", "InputError", "InternalError", "WasmschedError"]


class WasmschedError(Exception):
    """Base of every exception wasmsched raises on purpose."""


class InputError(WasmschedError, ValueError):
    """Something the user gave us (a file, a field, a flag, a guest) is invalid.

    The message is one line naming the file, object, field path and value where known.
    """


class ExternalError(WasmschedError):
    """Something outside the process (an extender, an API server) failed or refused."""


class InternalError(WasmschedError):
    """Control flow inside wasmsched; never escapes a public entry point."""
