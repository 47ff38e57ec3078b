"""A cached property without a lock, and values kept the same way, for the parsed views of
manifests (api/objects.py); and parsed values kept once per distinct content, shared by the
objects whose content is equal (the pods of one template)."""

from __future__ import annotations

import marshal
from collections.abc import Callable, Hashable
from typing import Any, Generic, Self, TypeVar, cast, overload

_T = TypeVar("_T")
_A = TypeVar("_A")
_K = TypeVar("_K", bound=Hashable)


class cached_property(Generic[_T]):
    """functools.cached_property without its lock (Python 3.11 takes an RLock at every
    first read; 3.12 dropped it): computed on first read, then a plain instance
    attribute. The objects are immutable, so a value computed twice is the same value.

    A subclass may report the errors of ``catch`` raised by the computation as another
    (``convert``; None re-raises the error as it is)."""

    catch: tuple[type[Exception], ...] = ()

    def __init__(self, func: Callable[[Any], _T]) -> None:
        self.func = func
        self.attrname = func.__name__
        self.__doc__ = func.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.attrname = name

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> Self: ...

    @overload
    def __get__(self, instance: object, owner: type | None = None) -> _T: ...

    def __get__(self, instance: object, owner: type | None = None) -> Any:
        if instance is None:
            return self
        try:
            value = self.func(instance)
        except self.catch as err:  # nothing is caught unless a subclass says so
            converted = self.convert(err)
            if converted is None:
                raise
            raise converted from None
        instance.__dict__[self.attrname] = value
        return value

    def convert(self, err: Exception) -> Exception | None:
        """The error to report for ``err``, one of ``catch``; None: ``err`` itself."""
        return None


_MISSING = object()


def derived(instance: Any, key: str, compute: Callable[[Any], _T]) -> _T:
    """``compute(instance)``, kept in the instance's ``__dict__`` under ``key`` as
    ``cached_property`` keeps its values, so that api/objects.py's ``_derive`` carries it
    to the copies binding and status writes make of a Pod: for a value a plugin parses
    from the metadata and the spec but for spec.nodeName (every copy keeps those; ``updated``
    derives only then)."""
    found = instance.__dict__.get(key, _MISSING)
    if found is _MISSING:
        found = instance.__dict__[key] = compute(instance)
    return cast(_T, found)


def content_key(value: Any) -> bytes | None:
    """A key equal for equal values of the same types: ``marshal.dumps(value, 0)``, which
    writes only the exact built-in types and, at version 0, neither references nor
    interning. None for anything else (a subclass, another Mapping): not to be shared."""
    try:
        return marshal.dumps(value, 0)
    except ValueError:
        return None


def kept_by_content(
    table: dict[_K, _T], key: _K | None, make: Callable[[_A], _T], arg: _A, limit: int
) -> _T:
    """``make(arg)``, kept in ``table`` under ``key`` (what the value depends on) and
    shared by every later call with an equal key; ``key`` None: made anew, not kept. The
    table starts over at ``limit`` entries (a cluster has few templates)."""
    if key is None:
        return make(arg)
    found = table.get(key)
    if found is None:
        if len(table) >= limit:
            table.clear()
        found = table[key] = make(arg)
    return found
