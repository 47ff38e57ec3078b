"""Guest log records (``k8s.io/klog``: upstream's scheduler/plugin/host.go k8sKlogLogFn,
k8sKlogLogsFn) and klog's text rendering of them."""

from __future__ import annotations

import json

from wasmsched.wasm.native import untrack_class

__all__ = ["LogRecord", "klog_text"]


def _go_quote(text: str) -> str:
    """Close to Go's ``strconv.Quote`` for the strings klog prints."""
    return json.dumps(text, ensure_ascii=False)


def _klog_value(value: str) -> str:
    if "\n" not in value:
        return _go_quote(value)
    lines = value[:-1] if value.endswith("\n") else value
    return "<\n" + "\n".join("\t" + line if line else "\t" for line in lines.split("\n")) + "\n >"


def klog_text(message: str, kvs: tuple[tuple[str, str], ...]) -> str:
    """klog's text rendering of a structured message: ``"msg" key="value" ...``."""
    parts = [_go_quote(message)]
    parts.extend(f"{key}={_klog_value(value)}" for key, value in kvs)
    return " ".join(parts)


class LogRecord:
    """A message logged by a guest (or by the host about a guest).

    A guest's record keeps the bytes it logged and decodes them on first access (most are
    never shown: the logger is off at their level and nobody reads ``WasmPlugin.logs``);
    what is shown is the same as decoding at once.
    """

    __slots__ = ("_kvs", "_message", "_raw", "_raw_kvs", "severity", "size", "structured")

    def __init__(
        self,
        severity: int,
        message: str,
        kvs: tuple[tuple[str, str], ...] = (),
        structured: bool = False,
    ) -> None:
        self.severity = severity
        self.structured = structured
        self._message: str | None = message
        self._kvs: tuple[tuple[str, str], ...] | None = kvs
        self._raw: bytes | None = None
        self._raw_kvs: bytes | None = None
        self.size = len(message) + sum(len(k) + len(v) for k, v in kvs)
        """Characters of text the record holds (what retention counts)."""

    @classmethod
    def from_guest(cls, severity: int, data: bytes, raw_kvs: bytes | None) -> LogRecord:
        """A record of ``klog.log`` (``raw_kvs`` None: a trailing newline is dropped) or
        ``klog.logs`` (message plus NUL-terminated key/values, upstream's
        scheduler/plugin/cstring.go: fromNULTerminated), decoded lazily when ASCII."""
        if raw_kvs is None:
            if data.endswith(b"\n"):
                data = data[:-1]
            parts = None
        else:
            parts = _kv_parts(raw_kvs)
        if not (data.isascii() and (raw_kvs is None or raw_kvs.isascii())):
            # non-ASCII: decode now, so sizes count characters exactly as before
            message = data.decode("utf-8", "replace")
            if parts is None:
                return cls(severity, message)
            return cls(severity, message, _pairs(parts), structured=True)
        record = cls.__new__(cls)
        record.severity = severity
        record.structured = parts is not None
        record._message = None
        record._kvs = None if parts else ()
        record._raw = data
        record._raw_kvs = raw_kvs
        size = len(data)
        if parts:
            size += sum(map(len, parts)) + (len("(MISSING)") if len(parts) % 2 else 0)
        record.size = size
        return record

    @property
    def message(self) -> str:
        message = self._message
        if message is None:
            message = self._message = (self._raw or b"").decode("ascii")
        return message

    @property
    def kvs(self) -> tuple[tuple[str, str], ...]:
        kvs = self._kvs
        if kvs is None:
            kvs = self._kvs = _pairs(_kv_parts(self._raw_kvs or b""))
        return kvs

    @property
    def text(self) -> str:
        return klog_text(self.message, self.kvs) if self.structured else self.message

    def _key(self) -> tuple[int, str, tuple[tuple[str, str], ...], bool]:
        return (self.severity, self.message, self.kvs, self.structured)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LogRecord) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (
            f"LogRecord(severity={self.severity!r}, message={self.message!r}, "
            f"kvs={self.kvs!r}, structured={self.structured!r})"
        )

    def __str__(self) -> str:
        return self.text


# A record holds only ints, bools, bytes, None, strings and tuples of strings, so it can be
# in no reference cycle: with the compiled extension its class is not a GC one (a guest
# logging on every Score otherwise made the collector run every 700 records).
untrack_class(LogRecord)


def _kv_parts(raw_kvs: bytes) -> list[bytes]:
    """The non-empty NUL-terminated strings (upstream's scheduler/plugin/cstring.go:
    fromNULTerminated); bytes after the last NUL are not one."""
    return [p for p in raw_kvs.split(b"\0")[:-1] if p]


def _pairs(parts: list[bytes]) -> tuple[tuple[str, str], ...]:
    items = [p.decode("utf-8", "replace") for p in parts]
    if len(items) % 2:
        items.append("(MISSING)")
    return tuple(zip(items[::2], items[1::2], strict=True))
