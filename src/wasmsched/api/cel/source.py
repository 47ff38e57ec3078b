"""What the text of a selector says before it is compiled: its device fields and domain keys.

Two facts of kube's DRA environment are not expressible in cel-expr-python's declarations,
so they are read off the expression's tokens:

- ``device`` is an object type (``kubernetes.DRADevice``) whose fields are ``driver``,
  ``attributes``, ``capacity`` and ``allowMultipleAllocations``; any other field is a compile
  error (``undefined field 'x'``). Here ``device`` is declared ``dyn``.
- ``device.attributes`` and ``device.capacity`` answer an unknown domain with an empty map
  (``newStringInterfaceMapWithDefault`` in compile.go), so ``device.attributes["other.com"]
  .?model.orValue("")`` is ``""``, not an error. When every use of the two maps is an index by
  a string literal, adding an empty map for each missing literal domain is invisible to the
  expression, so the evaluator does exactly that (:attr:`SourceFacts.attribute_domains`).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEVICE_FIELDS", "SourceFacts", "read_source"]

DEVICE_FIELDS = frozenset({"driver", "attributes", "capacity", "allowMultipleAllocations"})
_OUTER_MAPS = ("attributes", "capacity")


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str  # "ident", "string", "number" or "punct"
    text: str  # the identifier, the punctuation, or a string literal's value
    start: int
    plain: bool = True  # a string literal whose value is its text (no escapes)


@dataclass(frozen=True, slots=True)
class SourceFacts:
    """What :func:`read_source` found.

    ``undefined_field`` is ``(field, offset)`` of the first ``device.<field>`` that is not a
    field of kube's device type. ``attribute_domains``/``capacity_domains`` are the literal
    domains the expression indexes, or None when some use of that map is not such an index
    (then missing domains are left missing).
    """

    undefined_field: tuple[str, int] | None
    attribute_domains: frozenset[str] | None
    capacity_domains: frozenset[str] | None


_PUNCT2 = ("&&", "||", "==", "!=", "<=", ">=", ".?")


def _string_end(source: str, start: int, quote: str, raw: bool) -> tuple[int, bool]:
    """The offset after the literal opened at ``start``, and whether it has no escapes."""
    pos = start + len(quote)
    plain = True
    while pos < len(source):
        if source.startswith(quote, pos):
            return pos + len(quote), plain
        if source[pos] == "\\" and not raw:
            plain = False
            pos += 2
            continue
        pos += 1
    return len(source), False


def _tokens(source: str) -> list[_Token]:
    tokens: list[_Token] = []
    pos, end = 0, len(source)
    while pos < end:
        ch = source[pos]
        if ch.isspace():
            pos += 1
        elif ch == "/" and source.startswith("//", pos):
            newline = source.find("\n", pos)
            pos = end if newline == -1 else newline
        elif ch.isalpha() or ch == "_":
            start = pos
            while pos < end and (source[pos].isalnum() or source[pos] == "_"):
                pos += 1
            word = source[start:pos]
            if pos < end and source[pos] in "\"'" and word.lower() in ("r", "b", "br", "rb"):
                token, pos = _string(source, pos, raw="r" in word.lower())
                tokens.append(token)
            else:
                tokens.append(_Token("ident", word, start))
        elif ch in "\"'":
            token, pos = _string(source, pos, raw=False)
            tokens.append(token)
        elif ch.isdigit():
            start = pos
            while pos < end and (source[pos].isalnum() or source[pos] == "."):
                pos += 1
            tokens.append(_Token("number", source[start:pos], start))
        else:
            two = source[pos : pos + 2]
            text = two if two in _PUNCT2 else ch
            tokens.append(_Token("punct", text, pos))
            pos += len(text)
    return tokens


def _string(source: str, pos: int, raw: bool) -> tuple[_Token, int]:
    """The string literal opened at ``pos``, and the offset after it."""
    quote = source[pos] * 3 if source.startswith(source[pos] * 3, pos) else source[pos]
    after, plain = _string_end(source, pos, quote, raw)
    body = source[pos + len(quote) : after - len(quote)]
    return _Token("string", body, pos, plain), after


def read_source(source: str) -> SourceFacts:
    """The facts of one expression; linear in its length."""
    tokens = _tokens(source)
    undefined: tuple[str, int] | None = None
    domains: dict[str, set[str] | None] = {name: set() for name in _OUTER_MAPS}
    for i, token in enumerate(tokens):
        if token.kind != "ident" or token.text != "device":
            continue
        if i > 0 and tokens[i - 1].text in (".", ".?"):
            continue  # a field named "device" of something else
        if i + 2 >= len(tokens) or tokens[i + 1].text != "." or tokens[i + 2].kind != "ident":
            for name in _OUTER_MAPS:
                domains[name] = None  # device itself escapes (bound, passed, compared)
            continue
        field = tokens[i + 2]
        if field.text not in DEVICE_FIELDS:
            if undefined is None:
                undefined = (field.text, tokens[i + 1].start)  # cel-go points at the "."
            continue
        if field.text not in domains:
            continue
        indexed = (
            i + 5 < len(tokens)
            and tokens[i + 3].text == "["
            and tokens[i + 4].kind == "string"
            and tokens[i + 4].plain
            and tokens[i + 5].text == "]"
        )
        known = domains[field.text]
        if indexed and known is not None:
            known.add(tokens[i + 4].text)
        else:
            domains[field.text] = None

    def frozen(found: set[str] | None) -> frozenset[str] | None:
        return None if found is None else frozenset(found)

    return SourceFacts(undefined, frozen(domains["attributes"]), frozen(domains["capacity"]))
