"""Running a model compiled with gears (docs/dynamic-shapes.md, "Gears"; docs/om.md).

The OM's root graph is CANN's multi-batch root: the model inputs (sized for the largest gear),
the extra input `ascend_mbatch_shape_data`, MapIndex and a Case with one branch per gear.  As
ACL does, a run writes the gear's values into the shape input and the actual input bytes at the
start of each input buffer; MapIndex picks the branch, the Case runs it, and the outputs are
the branch's (the first bytes of the root's output buffers, in the branch's shapes).

The gear comes from the actual input shapes, or from msame-style values: `--dymBatch N`,
`--dymHW H,W`, `--dymDims "x:1,16;y:1,16"`.  A shape that is no gear is refused (EP0200)
before anything runs.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from ge.errors import GeError
from ge.gear_layout import KIND_OF_TYPE, SHAPE_DATA, gear_axes, gear_shapes

__all__ = ["GearInfo", "gear_info", "gear_of_shapes", "gear_of_option", "fill_prefix",
           "SHAPE_DATA"]

OPTION_OF_KIND = {"batch": "--dymBatch", "image": "--dymHW", "dims": "--dymDims"}
_LAYOUT = {0: "NCHW", 1: "NHWC"}             # ge Format values


@dataclass(frozen=True)
class GearInfo:
    kind: str                    # "batch" | "image" | "dims"
    gears: tuple                 # ((v0, ...), ...) in branch order
    order: tuple                 # input names, as --input_shape listed them
    dims: dict                   # input name -> dims with -1 where gears vary
    formats: dict                # input name -> ge Format value
    case_name: str

    def shapes(self, gear: int) -> dict:
        """{input name: static shape} of gear `gear`."""
        return gear_shapes(self.kind, [(n, self.dims.get(n, ()), self._layout(n))
                                       for n in self.order], self.gears[gear])

    def axes(self, name: str) -> list:
        return gear_axes(self.kind, self.dims.get(name, ()), self._layout(name))

    def _layout(self, name: str) -> str:
        return _LAYOUT.get(self.formats.get(name, 0), "")

    def text(self) -> str:
        return "[" + "; ".join(",".join(str(v) for v in g) for g in self.gears) + "]"


def gear_info(model_def) -> Optional[GearInfo]:
    """The gears of an OM's ModelDef (from the Case's `_batch_num`/`_pred_value_<i>`/
    `mbatch_dynamic_type`, as ACL reads them), None for a model without gears."""
    from ge.graph.serialize import attr_from_proto
    if not model_def.graph:
        return None
    root = model_def.graph[0]
    case = next((op for op in root.op if op.type == "Case" and "_batch_num" in op.attr), None)
    if case is None:
        return None

    def attr(op, key, default=None):
        return attr_from_proto(op.attr[key])[1] if key in op.attr else default
    count = int(attr(case, "_batch_num", 0))
    gears = tuple(tuple(int(v) for v in attr(case, f"_pred_value_{i}", ()))
                  for i in range(count))
    kind = KIND_OF_TYPE.get(int(attr(case, "mbatch_dynamic_type", 0)), "dims")
    dims, formats = {}, {}
    for op in root.op:
        if "_mbatch_origin_input_dims" in op.attr:
            dims[op.name] = tuple(int(d) for d in attr(op, "_mbatch_origin_input_dims"))
            formats[op.name] = _format_of(op)
    order = tuple(str(n) for n in attr(case, "user_designate_shape_order", ()) or ())
    return GearInfo(kind, gears, order or tuple(dims), dims, formats, case.name)


def _format_of(op) -> int:
    from ge.graph.serialize import desc_from_proto
    desc, _ = desc_from_proto(op.output_desc[0])
    return int(desc.format)


def gear_of_shapes(info: GearInfo, shapes: dict, model: str) -> int:
    """The gear whose input shapes are `shapes` ({input name: shape}); EP0200 otherwise."""
    for gear in range(len(info.gears)):
        wanted = info.shapes(gear)
        if all(tuple(shapes.get(name, ())) == tuple(shape) for name, shape in wanted.items()):
            return gear
    given = "; ".join(f"{n}:{','.join(str(d) for d in s)}" for n, s in shapes.items())
    raise GeError("EP0200", {"shapes": f"[{given}]", "model": model, "gears": info.text()})


def gear_of_option(info: GearInfo, option: str, value: str, model: str) -> int:
    """The gear named by an msame-style option (`--dymBatch`, `--dymHW`, `--dymDims`)."""
    expected = OPTION_OF_KIND[info.kind]
    if option != expected:
        raise GeError("EP0201", {"value": value, "option": option, "reason":
                                 f"the model's gears are {info.kind} gears: use {expected}"})
    try:
        if info.kind == "batch":
            values = (int(value),)
        elif info.kind == "image":
            values = tuple(int(v) for v in value.split(","))
        else:
            values = _dims_values(info, value)
    except ValueError:
        raise GeError("EP0201", {"value": value, "option": option,
                                 "reason": "it is not a list of integers in the option's "
                                           "form"}) from None
    if values not in info.gears:
        raise GeError("EP0200", {"shapes": f"[{option}={value}]", "model": model,
                                 "gears": info.text()})
    return info.gears.index(values)


def _dims_values(info: GearInfo, value: str) -> tuple:
    """`x:1,16;y:1,16` (full input shapes, msame's form) -> the gear values (the -1 positions
    in --input_shape order)."""
    given = {}
    for entry in filter(None, (e.strip() for e in value.split(";"))):
        name, sep, dims = entry.rpartition(":")
        if not sep:
            raise ValueError(entry)
        given[name.strip()] = [int(d) for d in dims.split(",")]
    values = []
    for name in info.order:
        if name not in given:
            raise ValueError(name)
        for axis in info.axes(name):
            values.append(given[name][axis])
    return tuple(values)


def fill_prefix(view: np.ndarray, value: np.ndarray) -> None:
    """Copy `value` into the first bytes of a (larger) buffer, as ACL fills a gear input."""
    flat = view.reshape(-1)
    data = np.asarray(value).reshape(-1)
    np.copyto(flat[:data.size], data, casting="unsafe")
