"""A versioned object store with one etcd-like revision counter and a replayable history."""

from __future__ import annotations

import bisect
import threading
from dataclasses import dataclass

from .resources import RESOURCES, Obj, Resource


def storage_key(res: Resource, namespace: str | None, name: str) -> str:
    """etcd's key order: `ns/name` for namespaced objects, `name` otherwise."""
    return f"{namespace}/{name}" if res.namespaced else name


@dataclass(frozen=True)
class Change:
    """One committed write. For DELETED, `obj` is the last state stamped with the delete RV."""

    rv: int
    type: str
    res: Resource
    key: str
    obj: Obj
    prev: Obj | None


class Store:
    """Objects per resource plus the ordered history of changes.

    Stored dicts are never mutated after commit, so snapshots and history share them safely.
    All access happens under `cond`, which is notified on every commit.
    """

    def __init__(self) -> None:
        self.cond = threading.Condition(threading.RLock())
        self.rv = 1
        # Lists and watches from an RV below this answer 410 (etcd compaction).
        self.compacted = 0
        self._objects: dict[str, dict[str, Obj]] = {r.key: {} for r in RESOURCES}
        self._history: list[Change] = []
        self._history_rvs: list[int] = []

    def get(self, res: Resource, namespace: str | None, name: str) -> Obj | None:
        return self._objects[res.key].get(storage_key(res, namespace, name))

    def items(self, res: Resource) -> dict[str, Obj]:
        return self._objects[res.key]

    def commit(self, res: Resource, obj: Obj, event: str) -> Obj:
        """Store `obj` (ADDED or MODIFIED) at a new revision; returns the stored object."""
        meta = obj["metadata"]
        key = storage_key(res, meta.get("namespace"), meta["name"])
        self.rv += 1
        meta["resourceVersion"] = str(self.rv)
        prev = self._objects[res.key].get(key)
        self._objects[res.key][key] = obj
        self._record(Change(self.rv, event, res, key, obj, prev))
        return obj

    def remove(self, res: Resource, namespace: str | None, name: str) -> Obj | None:
        key = storage_key(res, namespace, name)
        prev = self._objects[res.key].pop(key, None)
        if prev is None:
            return None
        self.rv += 1
        last = {**prev, "metadata": {**prev["metadata"], "resourceVersion": str(self.rv)}}
        self._record(Change(self.rv, "DELETED", res, key, last, prev))
        return last

    def _record(self, change: Change) -> None:
        self._history.append(change)
        self._history_rvs.append(change.rv)
        self.cond.notify_all()

    def changes_after(self, rv: int) -> list[Change]:
        return self._history[bisect.bisect_right(self._history_rvs, rv) :]

    def snapshot(self, res: Resource, rv: int) -> dict[str, Obj]:
        """The resource's objects as they were at revision `rv` (undoing later history)."""
        state = dict(self._objects[res.key])
        for change in reversed(self.changes_after(rv)):
            if change.res is not res:
                continue
            if change.prev is None:
                state.pop(change.key, None)
            else:
                state[change.key] = change.prev
        return state

    def compact(self) -> int:
        self.compacted = self.rv
        return self.rv
