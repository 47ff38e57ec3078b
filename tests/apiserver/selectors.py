"""Label and field selector parsing with the real server's grammar and matching rules."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from .resources import Obj, Resource


class SelectorError(ValueError):
    """An unparsable selector: the server answers 400 BadRequest with this message."""


Matcher = Callable[[Obj], bool]

_TOKEN = re.compile(r"\s*(!=|==|=|!|\(|\)|,|>|<|[^\s!=(),<>]+)")


def _tokens(text: str) -> list[str]:
    out: list[str] = []
    pos = 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise SelectorError(f"unable to parse requirement: invalid character at {pos}")
        out.append(m.group(1))
        pos = m.end()
    return out


def _label_requirement(
    tokens: list[str], i: int
) -> tuple[Callable[[Mapping[str, str]], bool], int]:
    """Parse one requirement at tokens[i]; returns (predicate, next index)."""
    negated = tokens[i] == "!"
    if negated:
        i += 1
    if i >= len(tokens) or tokens[i] in ("=", "==", "!=", "(", ")", ",", ">", "<"):
        raise SelectorError("unable to parse requirement: found '', expected: identifier")
    key = tokens[i]
    i += 1
    if negated:
        return (lambda labels: key not in labels), i
    if i >= len(tokens) or tokens[i] == ",":
        return (lambda labels: key in labels), i
    op = tokens[i]
    i += 1
    if op in ("in", "notin"):
        if i >= len(tokens) or tokens[i] != "(":
            raise SelectorError(
                f"unable to parse requirement: found '{tokens[i] if i < len(tokens) else ''}', expected: '('"
            )
        i += 1
        values: set[str] = set()
        while i < len(tokens) and tokens[i] != ")":
            if tokens[i] != ",":
                values.add(tokens[i])
            i += 1
        if i >= len(tokens):
            raise SelectorError("unable to parse requirement: found '', expected: ')'")
        i += 1
        if op == "in":
            return (lambda labels: labels.get(key) in values), i
        return (lambda labels: labels.get(key) not in values), i
    value = ""
    if i < len(tokens) and tokens[i] != ",":
        value = tokens[i]
        i += 1
    if op in ("=", "=="):
        return (lambda labels: key in labels and labels[key] == value), i
    if op == "!=":
        return (lambda labels: labels.get(key) != value), i
    if op in (">", "<"):
        try:
            bound = int(value)
        except ValueError as err:
            raise SelectorError(
                f"unable to parse requirement: for 'Gt', 'Lt' operators, the value must be an integer: {value}"
            ) from err

        def compare(labels: Mapping[str, str]) -> bool:
            try:
                have = int(labels[key])
            except (KeyError, ValueError):
                return False
            return have > bound if op == ">" else have < bound

        return compare, i
    raise SelectorError(
        f"unable to parse requirement: found '{op}', expected: in, notin, =, ==, !=, gt, lt"
    )


def parse_labels(text: str) -> Matcher | None:
    """A matcher over metadata.labels, or None for the empty (match-all) selector."""
    tokens = _tokens(text)
    if not tokens:
        return None
    preds: list[Callable[[Mapping[str, str]], bool]] = []
    i = 0
    while i < len(tokens):
        pred, i = _label_requirement(tokens, i)
        preds.append(pred)
        if i < len(tokens):
            if tokens[i] != ",":
                raise SelectorError(
                    f"unable to parse requirement: found '{tokens[i]}', expected: ','"
                )
            i += 1

    def match(obj: Obj) -> bool:
        labels = (obj.get("metadata") or {}).get("labels") or {}
        return all(p(labels) for p in preds)

    return match


def _split_unescaped(text: str, sep: str) -> list[str]:
    parts: list[str] = []
    cur: list[str] = []
    escaped = False
    for ch in text:
        if escaped:
            cur.append("\\" + ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == sep:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if escaped:
        raise SelectorError("invalid field selector: trailing backslash")
    parts.append("".join(cur))
    return parts


def _unescape(text: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text):
            if text[i + 1] not in "\\,=":
                raise SelectorError(
                    f"invalid field selector: invalid escape sequence: \\{text[i + 1]}"
                )
            out.append(text[i + 1])
            i += 2
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def parse_fields(text: str, res: Resource) -> Matcher | None:
    """A matcher over the resource's field labels, or None for the empty selector."""
    if not text.strip():
        return None
    terms: list[tuple[Callable[[Obj], str], bool, str]] = []
    for raw in _split_unescaped(text, ","):
        if not raw:
            continue
        m = re.match(r"^((?:[^\\!=]|\\.)*)(!=|==|=)(.*)$", raw)
        if m is None:
            raise SelectorError(f"invalid selector: '{text}'; can't understand '{raw}'")
        label, op, value = _unescape(m.group(1)), m.group(2), _unescape(m.group(3))
        getter = res.field_getter(label)
        if getter is None:
            raise SelectorError(f"field label not supported: {label}")
        terms.append((getter, op == "!=", value))

    def match(obj: Obj) -> bool:
        return all((get(obj) != value) if neg else (get(obj) == value) for get, neg, value in terms)

    return match
