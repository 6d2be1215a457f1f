"""Unknown dimensions and ranges (docs/dynamic-shapes.md "Unknown dimensions and ranges").

A compile whose options give `-1`/`lo~hi` dims (range form of `--input_shape`) or
`--input_shape_range` builds a dynamic-shape model:

1. `plan_dynamic_shape` applies the ranges to the graph's Data nodes (varying dims -1), keeps
   that parsed graph (the *source graph*, serialized), and sets every Data to the shape the
   OM is compiled at: its `--input_hint_shape` if given, else the upper bound of a bounded
   range and the lower bound (at least 1) of an unbounded one.  The rest of the pipeline runs
   unchanged, so the OM holds a complete static model at that shape and its memory plan is
   sized for the upper bounds.
2. `mark_dynamic` records what a reader needs: header `is_unknow_model`, the root graph's
   `_dynamic_shape_partitioned`, `_is_unknown_shape` and `shape_range` on each Data, the
   ranges as text, the source graph and the compile options.
3. `specialise` (called lazily by the host runtime) compiles the source graph at one concrete
   input shape through the same pipeline, op compiler and kernel cache, and returns the OM image.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

from ge.errors import GeError
from ge.graph import Graph, serialize as ser
from ge.graph.attr_names import (ATTR_DYNAMIC_OPTIONS, ATTR_DYNAMIC_RANGES,
                                 ATTR_DYNAMIC_SHAPE_PARTITIONED, ATTR_IS_UNKNOWN_SHAPE,
                                 TENSOR_SHAPE_RANGE)
from ge.graph.types import AttrValueType as VT
from ge.ops import Role, types_with_role
from ge.parser._shape_range import (RANGE_KEYS, UNBOUNDED, fixed_dims, range_text,
                                    shape_ranges_from_options)

__all__ = ["DynamicShape", "plan_dynamic_shape", "apply_ranges", "mark_dynamic", "mark_model_def",
           "source_without_weights", "specialise", "compiled_shape", "SHAPE_KEYS"]

# options that describe the shapes: not carried into a specialisation (it sets them itself)
SHAPE_KEYS = ("input_shape", "ge.inputShape", "ge.inputHintShape") + RANGE_KEYS


@dataclass
class DynamicShape:
    ranges: dict            # Data name -> [(lo, hi), ...], hi UNBOUNDED for none; index order
    source: bytes           # ModelDef of the parsed graph, Data dims -1 where they vary


def _data_nodes(graph: Graph) -> list:
    data_types = types_with_role(Role.DATA)
    nodes = [n for n in graph.nodes if n.type in data_types]
    return sorted(nodes, key=lambda n: int(n.attr("index") or 0))


def _flag_of(options: dict) -> str:
    return "input_shape_range" if any(options.get(k) for k in RANGE_KEYS) else "input_shape"


def _by_name(ranges: dict, datas: list, options: dict) -> dict:
    names = [n.name for n in datas]
    out = {}
    for key, dims in ranges.items():
        if isinstance(key, int):
            if key >= len(names):
                raise GeError("E10016", {"opname": f"input index {key}",
                                         "parameter": _flag_of(options)})
            key = names[key]
        elif key not in names:
            raise GeError("E10016", {"opname": key, "parameter": _flag_of(options)})
        out[key] = dims
    return out


def compiled_shape(ranges: list, hint: list | None = None) -> list[int]:
    """The shape an input is compiled at in the OM: its `--input_hint_shape`, else the upper
    bounds, else max(lower bound, 1) for an unbounded dim."""
    if hint is not None:
        return list(hint)
    return [high if high != UNBOUNDED else max(low, 1) for low, high in ranges]


_HINT_KEY = "ge.inputHintShape"


def _hint_shapes(options: dict) -> dict:
    """`--input_hint_shape` "0:[d0,d1];1:[d0]": input index -> dims (E10014 as CANN)."""
    text = str(options.get(_HINT_KEY) or "")
    hints: dict = {}
    for entry in filter(None, (e.strip() for e in text.split(";"))):
        index, colon, dims = entry.partition(":")
        inner = dims.strip()
        ok = (colon and index.strip().isdigit() and int(index) not in hints
              and inner.startswith("[") and inner.endswith("]")
              and all(d.strip().isdigit() for d in inner[1:-1].split(",") if inner[1:-1].strip()))
        if not ok:
            raise GeError("E10014", {"value": text, "parameter": _HINT_KEY})
        hints[int(index)] = [int(d) for d in inner[1:-1].split(",") if d.strip()]
    return hints


def _check_hint(name: str, hint: list, dims: list) -> None:
    inside = len(hint) == len(dims) and all(
        lo <= d and (hi == UNBOUNDED or d <= hi) for d, (lo, hi) in zip(hint, dims))
    if not inside:
        raise GeError("E10001", {"value": str(hint), "parameter": "--input_hint_shape",
                                 "reason": f"The hint shape of input {name} is outside its "
                                           f"ranges {range_text(dims)}."})


def _set_shape(node, shape: list) -> None:
    desc = node.out_desc(0).clone()
    desc.set_shape(list(shape))
    desc.set_origin_shape(list(shape))
    node.update_input_desc(0, desc)
    node.update_output_desc(0, desc)


def plan_dynamic_shape(graph: Graph, options: dict) -> DynamicShape | None:
    """Apply the ranges of `options` to `graph` (see the module doc); None for a static
    compile (no ranges asked for).  Gears are built by ge.compiler.gears instead."""
    asked = shape_ranges_from_options(options)
    if not asked:
        return None
    if options.get("ge.insertOpFile"):
        raise GeError("EP0002", {"feature": "--insert_op_conf (AIPP) with unknown dimensions",
                                 "reason": "the runtime checks an AIPP model's image inputs "
                                           "against the ranges of the original inputs"})
    return apply_ranges(graph, _by_name(asked, _data_nodes(graph), options), options)


def _check_model_dims(shape: list, dims: list) -> None:
    """E10050 (as CANN) for a dim the model fixes outside the range given for it."""
    for size, (low, high) in zip(shape, dims):
        if size >= 0 and (size < low or (high != UNBOUNDED and size > high)):
            raise GeError("E10050", {"cur_dim": str(size), "shape_range_left": str(low),
                                     "shape_range_right": str(high)})


def apply_ranges(graph: Graph, asked: dict, options: dict) -> DynamicShape | None:
    """`asked`: Data name -> ranges; a Data not named keeps its dims, its -1 dims unbounded.
    Sets the Data nodes to their compiled shapes; None when every dim is fixed."""
    datas = _data_nodes(graph)
    ranges = {}
    for node in datas:
        shape = list(node.out_desc(0).shape)
        dims = asked.get(node.name)
        if dims is None:
            if shape == [-2]:
                continue                    # unknown rank: refused by input_dims
            dims = [(d, d) if d >= 0 else (0, UNBOUNDED) for d in shape]
        elif shape != [-2] and len(shape) != len(dims):
            raise GeError("E10049", {"shape_range_size": str(len(dims)),
                                     "cur_dim_size": str(len(shape))})
        elif shape != [-2]:
            _check_model_dims(shape, dims)
        ranges[node.name] = [tuple(r) for r in dims]
        _set_shape(node, fixed_dims(dims))
    if all(lo == hi for dims in ranges.values() for lo, hi in dims):
        return None                         # every dim fixed: an ordinary static compile
    source = ser.graph_to_model_def(graph).SerializeToString(deterministic=True)
    hints = _hint_shapes(options)
    for index, node in enumerate(datas):
        if node.name in ranges:
            hint = hints.get(index)
            if hint is not None:
                _check_hint(node.name, hint, ranges[node.name])
            _set_shape(node, compiled_shape(ranges[node.name], hint))
    return DynamicShape(ranges=ranges, source=source)


# options that do not change what is compiled (reporting, compile threads), and the values
# a compile falls back to anyway: left out, so that ATC and ge.offline_compile (which sets
# neither) write the same OM
_NOT_KEPT = ("ge.optionNameMap", "ge.display_model_info", "check_report", "log", "dump_mode",
             "MULTI_THREAD_COMPILE")
_FALLBACKS = {"input_format": "NCHW"}


def _kept_options(options: dict) -> dict:
    """The compile options a specialisation needs: set ones that shape the compile."""
    return {k: str(v) for k, v in sorted(options.items())
            if k not in SHAPE_KEYS + _NOT_KEPT and isinstance(v, (str, int, float, bool))
            and str(v) != "" and _FALLBACKS.get(k) != str(v)}


def ranges_text(ranges: dict) -> str:
    return ";".join(f"{name}:{range_text(dims)}" for name, dims in ranges.items())


def mark_dynamic(compiled, dynamic: DynamicShape) -> None:
    """The model attributes of a dynamic-shape model (module doc, step 2)."""
    compiled.dynamic = dynamic
    compiled.model_attrs.update({       # ATTR_DYNAMIC_SOURCE: set by build.build_om_content
        ATTR_DYNAMIC_RANGES: (VT.VT_STRING, ranges_text(dynamic.ranges)),
        ATTR_DYNAMIC_OPTIONS: (VT.VT_STRING, json.dumps(_kept_options(compiled.options),
                                                        sort_keys=True)),
    })


def mark_model_def(model_def, dynamic: DynamicShape) -> None:
    """Root graph and Data ops of the OM's ModelDef (module doc, step 2)."""
    root = model_def.graph[0]
    ser.attr_to_proto(VT.VT_BOOL, True, root.attr[ATTR_DYNAMIC_SHAPE_PARTITIONED])
    for op in root.op:
        dims = dynamic.ranges.get(op.name)
        if dims is None or op.type not in types_with_role(Role.DATA):
            continue
        ser.attr_to_proto(VT.VT_BOOL, True, op.attr[ATTR_IS_UNKNOWN_SHAPE])
        for desc in list(op.output_desc) + list(op.input_desc):
            ser.attr_to_proto(VT.VT_LIST_LIST_INT, [list(r) for r in dims],
                              desc.attr[TENSOR_SHAPE_RANGE])


def source_without_weights(dynamic: DynamicShape) -> tuple:
    """(source ModelDef with its Const bytes taken out, [(Const OpDef, bytes)]): the writer
    places those bytes in WEIGHTS_DATA beside the compiled model's, identical ones shared,
    and the OM stores the ModelDef (with the offsets) as `_pyatc_dynamic_source_graph`."""
    from ge.om.weights import const_ops
    from ge.proto import ge_ir as pb
    model_def = pb.ModelDef.FromString(dynamic.source)
    pairs = []
    for _, op in const_ops(model_def):
        tensor = op.attr["value"].t
        if tensor.data:
            pairs.append((op, tensor.data))
            tensor.data = b""
    return model_def, pairs


def specialise(source: bytes, weights: bytes, options_json: str, shapes: dict,
               framework: int):
    """The OM image (bytes) of the source graph (its constants in the OM's `weights`)
    compiled at `shapes` (Data name -> dims)."""
    from ge.proto import ge_ir as pb
    from .api import build_graph
    from .build import build_om_content
    from ge.om import build_om
    from ge.om.weights import restore_weights
    model_def = pb.ModelDef()
    model_def.ParseFromString(source)
    restore_weights(model_def, weights, "<dynamic source graph>")
    graph = ser.model_def_to_graph(model_def, "<dynamic source graph>")
    for node in _data_nodes(graph):
        if node.name in shapes:
            _set_shape(node, shapes[node.name])
    options = json.loads(options_json)
    compiled = build_graph(graph, options, framework=framework)
    return build_om(build_om_content(compiled))
