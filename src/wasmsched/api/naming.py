"""Generated names and hashes of workload controllers' objects."""

from __future__ import annotations

import json
import random
import struct
from collections.abc import Mapping
from typing import Any

__all__ = ["ALPHANUMS", "SUFFIX_LENGTH", "random_suffix", "safe_encode", "template_hash"]

# k8s.io/apimachinery pkg/util/rand: the alphabet of generated names (no vowels, no 0/1/3).
ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"
SUFFIX_LENGTH = 5  # apiserver pkg/storage/names: SimpleNameGenerator's randomLength


def safe_encode(text: str) -> str:
    """rand.SafeEncodeString: each byte mapped into ALPHANUMS (no vowels: no bad words)."""
    return "".join(ALPHANUMS[b % len(ALPHANUMS)] for b in text.encode())


def template_hash(template: Mapping[str, Any], collision_count: int | None = None) -> str:
    """A pod-template-hash for ``template``.

    The deployment controller (pkg/controller/deployment/util: ComputeHash, via
    controller.ComputeHash) feeds an FNV-32a hasher with hashutil.DeepHashObject of the Go
    template struct (a spew dump), then the collisionCount as 4 little-endian bytes, and
    encodes the decimal sum with SafeEncodeString. A spew dump of Go structs cannot be
    reproduced here, so the same hash runs over the template's canonical JSON: the value
    differs from a real cluster's, but is as stable and as sensitive to the template.
    """
    data = json.dumps(template, sort_keys=True, separators=(",", ":"), default=str).encode()
    if collision_count is not None:
        data += struct.pack("<I", collision_count & 0xFFFFFFFF)
    h = 0x811C9DC5
    for byte in data:
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return safe_encode(str(h))


def random_suffix(rng: random.Random, length: int = SUFFIX_LENGTH) -> str:
    """rand.String(length): ``length`` characters of ALPHANUMS from ``rng``."""
    return "".join(rng.choice(ALPHANUMS) for _ in range(length))
