"""The pass registry: `register_fusion_pass`, `register_decompose_pass`, descriptors
(spec/python-passes.md §3.6).

Two lists: user (Python plugin) passes, which the CANN registry API shows and
`clear_registered_passes()` empties, and built-in passes (`builtin=True`, registered by
`ge.compiler.fusion`), which the runner schedules beside them but the user API never shows.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Iterable, Optional

__all__ = ["PassDescriptor", "PASS_KIND_FUSION_BASE", "PASS_KIND_PATTERN_FUSION",
           "PASS_KIND_DECOMPOSE", "register_fusion_pass", "register_decompose_pass",
           "get_registered_passes", "get_registered_pass_dicts",
           "get_registered_pass_by_descriptor_key", "clear_registered_passes",
           "get_builtin_passes", "all_passes"]

PASS_KIND_FUSION_BASE = "fusion_base"
PASS_KIND_PATTERN_FUSION = "pattern_fusion"
PASS_KIND_DECOMPOSE = "decompose"


@dataclass(frozen=True)
class PassDescriptor:
    descriptor_key: str
    pass_name: str
    module_name: str
    class_name: str
    stage: object          # PassStage
    kind: str
    cls: type
    op_types: list = field(default_factory=list)
    builtin: bool = False

    def to_bridge_dict(self) -> dict:
        return {"descriptor_key": self.descriptor_key, "pass_name": self.pass_name,
                "module_name": self.module_name, "class_name": self.class_name,
                "stage": self.stage.value, "kind": self.kind, "op_types": list(self.op_types)}


_lock = threading.RLock()
_USER: dict[str, PassDescriptor] = {}      # descriptor_key -> descriptor, insertion order
_BUILTIN: dict[str, PassDescriptor] = {}


def _add(cls, name, stage, kind, op_types, builtin: bool) -> None:
    key = f"{cls.__module__}:{cls.__name__}:{name}"
    desc = PassDescriptor(key, name, cls.__module__, cls.__name__, stage, kind, cls,
                          list(op_types), builtin)
    with _lock:
        table = _BUILTIN if builtin else _USER
        if key in table:
            raise ValueError(f"pass descriptor_key already exists: {key}")
        for other in list(_USER.values()) + list(_BUILTIN.values()):
            if other.pass_name == name:
                raise ValueError(f"pass name already exists: {name} "
                                 f"(registered by {other.module_name}.{other.class_name})")
        table[key] = desc
    cls.__ge_pass_descriptor__ = desc


def register_fusion_pass(*, name: str, stage, kind: Optional[str] = None,
                         builtin: bool = False):
    """Class decorator registering a FusionBasePass/PatternFusionPass subclass."""
    def decorate(cls):
        from .base import FusionBasePass, PatternFusionPass
        if not isinstance(cls, type) or not issubclass(cls, FusionBasePass):
            raise TypeError("register_fusion_pass expects a FusionBasePass subclass")
        chosen = kind if kind is not None else (
            PASS_KIND_PATTERN_FUSION if issubclass(cls, PatternFusionPass)
            else PASS_KIND_FUSION_BASE)
        _add(cls, name, stage, chosen, (), builtin)
        return cls
    return decorate


def _check_op_types(op_types) -> list:
    if isinstance(op_types, (str, bytes)):
        raise TypeError("op_types must be an iterable of strings, not a single string")
    try:
        items = list(op_types)
    except TypeError:
        raise TypeError("op_types must be an iterable of strings") from None
    if not items:
        raise ValueError("op_types must contain at least one op type")
    for item in items:
        if not isinstance(item, str) or not item:
            raise TypeError("op_types elements must be non-empty strings")
    return items


def register_decompose_pass(*, name: str, stage, op_types: Iterable[str],
                            builtin: bool = False):
    """Class decorator registering a DecomposePass subclass for `op_types`."""
    types = _check_op_types(op_types)

    def decorate(cls):
        from .base import DecomposePass
        if not isinstance(cls, type) or not issubclass(cls, DecomposePass):
            raise TypeError("register_decompose_pass expects a DecomposePass subclass")
        _add(cls, name, stage, PASS_KIND_DECOMPOSE, types, builtin)
        cls.op_types = list(types)
        return cls
    return decorate


def get_registered_passes() -> list[PassDescriptor]:
    with _lock:
        return list(_USER.values())


def get_registered_pass_dicts() -> list[dict]:
    return [d.to_bridge_dict() for d in get_registered_passes()]


def get_registered_pass_by_descriptor_key(key: str) -> Optional[PassDescriptor]:
    with _lock:
        return _USER.get(key) or _BUILTIN.get(key)


def clear_registered_passes() -> None:
    with _lock:
        _USER.clear()


def get_builtin_passes() -> list[PassDescriptor]:
    with _lock:
        return list(_BUILTIN.values())


def all_passes() -> list[PassDescriptor]:
    """Built-in and user passes (what the runner schedules)."""
    with _lock:
        return list(_BUILTIN.values()) + list(_USER.values())
