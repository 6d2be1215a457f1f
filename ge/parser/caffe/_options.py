"""Graph-shaping options of a Caffe parse (docs/parser-caffe.md): `input_shape` on input names,
`input_format` (NCHW or ND), `out_nodes` as `layer:index` or top names, and `op_name_map` (the
layer-type mapping file: one `CaffeType:NewType` per line)."""
from __future__ import annotations

from dataclasses import dataclass, field

from ge.errors import GeError
from ge.fsutil import os_reason
from ge.graph import Format
from .._input_shape import parse_node_indexes, read_shaping_options

__all__ = ["CaffeOptions", "read_options", "read_op_name_map"]

INPUT_FORMATS = {"NCHW": Format.FORMAT_NCHW, "ND": Format.FORMAT_ND}


@dataclass(frozen=True)
class CaffeOptions:
    input_shapes: dict = field(default_factory=dict)   # input name -> dims
    input_format: Format = Format.FORMAT_NCHW
    out_nodes: tuple = ()        # (layer name, top index) or (top name, None), in order
    op_name_map: dict = field(default_factory=dict)    # Caffe type -> type to convert as


def _map_error(path: str, reason: str) -> GeError:
    return GeError("E10001", {"value": path, "parameter": "--op_name_map", "reason": reason})


def read_op_name_map(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        reason = os_reason(exc) if isinstance(exc, OSError) else str(exc)
        raise _map_error(path, f"the file cannot be read ({reason})") from None
    mapping = {}
    for number, line in enumerate(lines, 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        src, sep, dst = (part.strip() for part in line.partition(":"))
        if not sep or not src or not dst:
            raise _map_error(path, f"line {number} ({line}) is not of the form "
                             "CaffeType:NewType")
        mapping[src] = dst
    return mapping


_OUT_NODES_REASON = ('The format must be "layer_name:0;layer_name:1" or '
                     '"top_name1;top_name2"')


def read_options(options: dict | None) -> CaffeOptions:
    options = options or {}
    input_shapes, input_format, nodes_text = read_shaping_options(
        options, INPUT_FORMATS, "NCHW", "The value must be NCHW or ND in Caffe model.")
    map_path = str(options.get("op_name_map") or "")
    return CaffeOptions(input_shapes=input_shapes, input_format=input_format,
                        out_nodes=parse_node_indexes(nodes_text, _OUT_NODES_REASON,
                                                      bare_names=True),
                        op_name_map=read_op_name_map(map_path) if map_path else {})
