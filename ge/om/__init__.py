"""OM container read/write, the ge.proto / domi schemas, OM -> JSON (spec/om-format.md).

Public API (docs/om.md):

    write_om(path, OmContent(...))      build_om(OmContent(...)) -> bytes
    read_om(path) -> OmFile             parse_om(bytes) -> OmFile
    om_to_json(path) -> str             pbtxt_to_json(path) -> str
    om_info(path) -> dict

Names are resolved lazily, so importing ge.om costs nothing until a name is used; the message
classes are those of ge.proto.ge_ir (re-exported here).
"""
from __future__ import annotations

import importlib

_EXPORTS = {
    "OmContent": "writer", "build_om": "writer", "write_om": "writer", "host_target": "writer",
    "OmFile": "reader", "read_om": "reader", "parse_om": "reader",
    "om_to_json": "inspector", "pbtxt_to_json": "inspector", "om_info": "inspector",
    "model_def_to_json": "inspector",
    "extract_weights": "weights", "restore_weights": "weights",
    "PartitionType": "container", "OmHeader": "container", "Partition": "container",
    "TensorInfo": "container",
    **{name: "ge.proto.ge_ir" for name in (
        "ModelDef", "GraphDef", "OpDef", "AttrDef", "TensorDescriptor", "TensorDef",
        "ModelTaskDef", "TaskDef", "KernelDef", "KernelContext")},
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'ge.om' has no attribute {name!r}")
    where = module if "." in module else f"{__name__}.{module}"
    value = getattr(importlib.import_module(where), name)
    globals()[name] = value
    return value
