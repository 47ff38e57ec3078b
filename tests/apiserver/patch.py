"""The patch formats the real server accepts: JSON merge, strategic merge, JSON patch, apply."""

from __future__ import annotations

import copy
from typing import Any

JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"
APPLY_PATCH_CBOR = "application/apply-patch+cbor"
PATCH_TYPES = (JSON_PATCH, MERGE_PATCH, STRATEGIC_PATCH, APPLY_PATCH)

# patchMergeKey of the list fields a scheduler, kubelet or controller patches (k8s.io/api tags).
# Keyed by field name, not full path: every listed name has a single meaning in core objects.
MERGE_KEYS: dict[str, str] = {
    "conditions": "type",
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "volumes": "name",
    "env": "name",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
    "ownerReferences": "uid",
    "taints": "key",
    "addresses": "type",
    "imagePullSecrets": "name",
    "podIPs": "ip",
    "hostIPs": "ip",
    "hostAliases": "ip",
    "resourceClaims": "name",
    "resourceClaimStatuses": "name",
    "schedulingGates": "name",
    "topologySpreadConstraints": "topologyKey",
    "ports": "containerPort",
    "reservedFor": "uid",
}
# Lists of scalars with patchStrategy=merge: the patch adds to the set.
PRIMITIVE_MERGE = frozenset({"finalizers"})


class PatchError(ValueError):
    """A patch that cannot be applied: the server answers 422 (JSON patch) or 400."""


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def _strip_directives(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: _strip_directives(v)
            for k, v in value.items()
            if not k.startswith("$") and v is not None
        }
    if isinstance(value, list):
        return [_strip_directives(v) for v in value]
    return value


def _merge_keyed_list(
    orig: list[Any], patch: list[Any], key: str, order: list[Any] | None
) -> list[Any]:
    if any(isinstance(p, dict) and p.get("$patch") == "replace" for p in patch):
        return [_strip_directives(p) for p in patch if not (isinstance(p, dict) and "$patch" in p)]
    result = list(orig)
    for item in patch:
        if not isinstance(item, dict) or key not in item:
            result.append(_strip_directives(item))
            continue
        idx = next(
            (
                i
                for i, cur in enumerate(result)
                if isinstance(cur, dict) and cur.get(key) == item[key]
            ),
            None,
        )
        if item.get("$patch") == "delete":
            if idx is not None:
                del result[idx]
        elif idx is None:
            result.append(_strip_directives(item))
        else:
            result[idx] = strategic_merge(result[idx], item)
    if order:
        # $setElementOrder: listed elements first, in that order; the rest keep their order.
        wanted = [o.get(key) for o in order if isinstance(o, dict)]
        rank = {v: i for i, v in enumerate(wanted)}
        listed = sorted(
            (r for r in result if isinstance(r, dict) and r.get(key) in rank),
            key=lambda r: rank[r.get(key)],
        )
        rest = [r for r in result if not (isinstance(r, dict) and r.get(key) in rank)]
        result = listed + rest
    return result


def strategic_merge(orig: Any, patch: Any) -> Any:
    """Strategic merge patch for the built-in types (see MERGE_KEYS for list semantics)."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if patch.get("$patch") == "replace":
        return _strip_directives(patch)
    result: dict[str, Any] = dict(orig) if isinstance(orig, dict) else {}
    for key, value in patch.items():
        if key.startswith("$deleteFromPrimitiveList/"):
            name = key.split("/", 1)[1]
            result[name] = [x for x in result.get(name) or [] if x not in (value or [])]
            continue
        if key.startswith("$"):
            continue
        if value is None:
            result.pop(key, None)
            continue
        cur = result.get(key)
        if isinstance(value, dict):
            if value.get("$patch") == "delete":
                result.pop(key, None)
            else:
                result[key] = strategic_merge(cur, value)
        elif isinstance(value, list) and key in MERGE_KEYS:
            order = patch.get(f"$setElementOrder/{key}")
            result[key] = _merge_keyed_list(
                cur if isinstance(cur, list) else [], value, MERGE_KEYS[key], order
            )
        elif isinstance(value, list) and key in PRIMITIVE_MERGE:
            merged = list(cur) if isinstance(cur, list) else []
            merged.extend(v for v in value if v not in merged)
            result[key] = merged
        else:
            result[key] = copy.deepcopy(value)
    retain = patch.get("$retainKeys")
    if isinstance(retain, list):
        result = {k: v for k, v in result.items() if k in retain}
    return result


def apply_merge(orig: Any, applied: Any) -> Any:
    """Server-side apply without field ownership: merge like SMP, never delete."""
    return strategic_merge(orig, _strip_directives(applied))


def _pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError(f"invalid JSON pointer {path!r}")
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _walk(doc: Any, parts: list[str]) -> Any:
    cur = doc
    for part in parts:
        if isinstance(cur, dict) and part in cur:
            cur = cur[part]
        elif isinstance(cur, list) and part.isdigit() and int(part) < len(cur):
            cur = cur[int(part)]
        else:
            raise PatchError(f"path not found: /{'/'.join(parts)}")
    return cur


def _add(doc: Any, parts: list[str], value: Any) -> Any:
    if not parts:
        return value
    parent = _walk(doc, parts[:-1])
    last = parts[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        if last == "-":
            parent.append(value)
        elif last.isdigit() and int(last) <= len(parent):
            parent.insert(int(last), value)
        else:
            raise PatchError(f"insert index out of range: {last}")
    else:
        raise PatchError("add target is not a container")
    return doc


def _remove(doc: Any, parts: list[str]) -> tuple[Any, Any]:
    if not parts:
        raise PatchError("cannot remove the document root")
    parent = _walk(doc, parts[:-1])
    last = parts[-1]
    if isinstance(parent, dict) and last in parent:
        return doc, parent.pop(last)
    if isinstance(parent, list) and last.isdigit() and int(last) < len(parent):
        return doc, parent.pop(int(last))
    raise PatchError(f"unable to remove nonexistent key: {last}: missing value")


def json_patch(doc: Any, ops: Any) -> Any:
    """RFC 6902 JSON patch."""
    if not isinstance(ops, list):
        raise PatchError("json patch must be a list of operations")
    result = copy.deepcopy(doc)
    for op in ops:
        if not isinstance(op, dict) or "op" not in op or "path" not in op:
            raise PatchError(f"invalid operation {op!r}")
        kind, parts = op["op"], _pointer(op["path"])
        if kind == "add":
            result = _add(result, parts, copy.deepcopy(op.get("value")))
        elif kind == "remove":
            result, _ = _remove(result, parts)
        elif kind == "replace":
            _walk(result, parts)
            result, _ = _remove(result, parts) if parts else (result, None)
            result = _add(result, parts, copy.deepcopy(op.get("value")))
        elif kind in ("move", "copy"):
            src = _pointer(op.get("from", ""))
            if kind == "move":
                result, value = _remove(result, src)
            else:
                value = copy.deepcopy(_walk(result, src))
            result = _add(result, parts, value)
        elif kind == "test":
            if _walk(result, parts) != op.get("value"):
                raise PatchError(f"testing value {op['path']} failed")
        else:
            raise PatchError(f"Unexpected kind: {kind}")
    return result
