"""The cache key: sha256 over tagged fields, so fields cannot run together or collide.

Everything that can change a kernel binary is a field: the op signature (type, shapes, dtypes,
formats, attrs, constant inputs), the SoC, the generator family and version, the generated
source itself, the compiler identity and flags, and the BLAS identity when the kernel links it.
KEY_SCHEMA versions every key: bump it when the entry layout or key material changes.
"""
from __future__ import annotations

import hashlib
import json
import re

__all__ = ["KEY_SCHEMA", "ENTRY_NAME", "key_material", "kernel_key", "kernel_name"]

KEY_SCHEMA = "ge-kernel-cache-v1"


def key_material(fields: dict) -> str:
    """The exact text that is hashed: one `<tag>:<length>:<value>` record per field, tags in
    sorted order; values are canonical JSON.  Stored in the entry's JSON to explain misses."""
    parts = [f"schema:{len(KEY_SCHEMA)}:{KEY_SCHEMA}"]
    for tag in sorted(fields):
        value = json.dumps(fields[tag], sort_keys=True, separators=(",", ":"))
        parts.append(f"{tag}:{len(value)}:{value}")
    return "\n".join(parts)


def kernel_key(fields: dict) -> str:
    return hashlib.sha256(key_material(fields).encode("utf-8")).hexdigest()


# what kernel_name makes: listings of a cache directory take only these names as entries
ENTRY_NAME = re.compile(r"te_[a-z0-9_]+")


def kernel_name(op_type: str, key: str) -> str:
    """`te_<optype>_<sha256>`, lower-cased with '-' as '_' (spec §3.3)."""
    return f"te_{op_type}_{key}".lower().replace("-", "_")
