"""Reading an op-list file (`atc --singleop`): JSON → `SingleOp` records, every check CANN's
reader makes, with CANN's codes (spec/atc-cli.md §6.13, docs/atc.md "Single-operator compiles").

The whole list is read and checked before anything is compiled, so a bad file writes nothing.
Order of the checks: the file (E10023 path, E10024 open, E10025 JSON), then per entry the
structure (E10032: a missing or mistyped field, naming the entry and the field), the op type
(E10026 empty, E10501 not in ge.ops), the tensors (E10027 data type / format, E13014 shapes,
ranges, constant values and the input and output counts the op needs), the attributes (E10029
empty name, E10030 unknown type or a value the type or the op does not take).
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass

import numpy as np

from ge import ops
from ge.errors import GeError, warn
from ge.fsutil import os_reason, read_text_regular
from ge.graph import DataType, Format
from ge.graph.types import AttrValueType as VT, to_numpy_dtype

from ._tables import ATTR_TYPES, DATA_TYPES, FORMATS, UNKNOWN_DIM, UNKNOWN_RANK_DIM

__all__ = ["TensorSpec", "AttrSpec", "SingleOp", "read_op_list"]

# An input given as format "reserved" and type "undefined" is an absent optional input.
_ABSENT = ("reserved", "undefined")


@dataclass(frozen=True)
class TensorSpec:
    data_type: DataType
    format: Format
    shape: tuple
    origin_format: Format
    origin_shape: tuple
    shape_range: tuple = ()        # (low, high) per -1 dim; high -1 = unbounded
    name: str = ""
    const_value: object = None     # numpy array of an `is_const` input
    absent: bool = False           # an optional input left out

    @property
    def dynamic(self) -> bool:
        return any(d < 0 for d in self.shape)


@dataclass(frozen=True)
class AttrSpec:
    name: str
    kind: VT
    value: object


@dataclass(frozen=True)
class SingleOp:
    entry: int                     # position in the file's list (messages)
    index: int                     # serial number among the ops built (file names)
    op_type: str
    name: str
    inputs: tuple
    outputs: tuple
    attrs: tuple

    @property
    def node_name(self) -> str:
        """The op node's name: the `name` field, else the op type (as CANN names it)."""
        return self.name or self.op_type


class _Entry:
    """One list entry being read: where it is, for the messages."""

    def __init__(self, path: str, entry: int, raw: dict):
        self.path, self.entry, self.raw = path, entry, raw
        self.op_type = raw.get("op") if isinstance(raw.get("op"), str) else ""
        name = raw.get("name")
        self.node_name = (name if isinstance(name, str) and name else "") or self.op_type

    @property
    def where(self) -> str:
        what = f" ({self.op_type})" if self.op_type else ""
        return f"Entry {self.entry}{what} of the op list {self.path}"

    def bad_json(self, what: str) -> GeError:
        return GeError("E10032", {"file": self.path, "reason": f"entry {self.entry}"
                                  f"{' (' + self.op_type + ')' if self.op_type else ''}: {what}"})

    def bad_value(self, value, parameter: str, reason: str) -> GeError:
        return GeError("E13014", {"value": _text(value), "parameter": parameter,
                                  "opname": self.node_name, "reason": reason})


def _text(value) -> str:
    return json.dumps(value, separators=(",", ":"))


# -- plain JSON values ---------------------------------------------------------------------------

def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v) -> bool:
    return _is_int(v) or isinstance(v, float)


def _field(obj: dict, key: str, check, kind: str, where: str, e: _Entry, default=None):
    place = where or "the entry "
    if key not in obj:
        if default is not None:
            return default
        raise e.bad_json(f"{place}has no field \"{key}\"")
    value = obj[key]
    if not check(value):
        raise e.bad_json(f"field \"{key}\" of {place}is {_text(value)}, which is not {kind}")
    return value


def _list_of(check):
    return lambda v: isinstance(v, list) and all(check(x) for x in v)


_INT_LIST = _list_of(_is_int)
_OBJECT_LIST = _list_of(lambda v: isinstance(v, dict))


# -- tensors -------------------------------------------------------------------------------------

def _shape_range(e: _Entry, shape: list, ranges: list, parameter: str) -> tuple:
    """CANN's rules: -2 only as the whole shape [-2] and then no ranges; otherwise one [low,
    high] pair per -1 dim."""
    if UNKNOWN_RANK_DIM in shape:
        if shape != [UNKNOWN_RANK_DIM]:
            raise e.bad_value(shape, f"{parameter}.shape", "-2 (unknown rank) must be the "
                              "whole shape, written [-2]")
        if ranges:
            raise e.bad_value(ranges, f"{parameter}.shape_range", "a tensor of unknown rank "
                              "takes no shape_range")
        return ()
    bad = [d for d in shape if d < UNKNOWN_DIM]
    if bad:
        raise e.bad_value(shape, f"{parameter}.shape", f"dim {bad[0]} is negative; only -1 "
                          "(unknown dim) and [-2] (unknown rank) are allowed")
    unknown = shape.count(UNKNOWN_DIM)
    if len(ranges) != unknown:
        raise e.bad_value(len(ranges), f"{parameter}.shape_range size", f"the shape "
                          f"{_text(shape)} needs one [low, high] range per -1 dim, "
                          f"{unknown} in all")
    for k, pair in enumerate(ranges):
        if len(pair) != 2:
            raise e.bad_value(pair, f"{parameter}.shape_range[{k}]",
                              "a range is a pair [low, high]")
        low, high = pair
        if low < 0 or (high != -1 and high < low):
            raise e.bad_value(pair, f"{parameter}.shape_range[{k}]", "a range needs 0 <= low "
                              "<= high, or high -1 for no upper bound")
    return tuple(tuple(p) for p in ranges)


def _const_value(e: _Entry, obj: dict, dtype: DataType, shape: list, parameter: str):
    if not obj.get("is_const"):
        return None
    where = f"{parameter} "
    values = _field(obj, "const_value", _list_of(_is_number), "a list of numbers", where, e)
    try:
        np_dtype = to_numpy_dtype(dtype)
    except TypeError:
        raise e.bad_value(dtype.name, f"{parameter}.type", "a constant input needs a numeric "
                          "data type") from None
    count = int(np.prod(shape)) if shape else 1
    if any(d < 0 for d in shape) or len(values) != count:
        raise e.bad_value(len(values), f"{parameter}.const_value size",
                          f"the static shape {_text(shape)} holds {count} values")
    return np.asarray(values, dtype=np_dtype).reshape(shape)


def _tensor(e: _Entry, obj: dict, side: str, k: int, dynamic_count: dict) -> TensorSpec:
    parameter = f"{side}_desc[{k}]"
    where = f"{parameter} "
    shape = _field(obj, "shape", _INT_LIST, "a list of integers", where, e)
    fmt = _field(obj, "format", lambda v: isinstance(v, str), "a string", where, e)
    dtype = _field(obj, "type", lambda v: isinstance(v, str), "a string", where, e)
    if side == "input" and (fmt.lower(), dtype.lower()) == _ABSENT:
        return TensorSpec(DataType.DT_UNDEFINED, Format.FORMAT_RESERVED, (),
                          Format.FORMAT_RESERVED, (), absent=True)
    origin_fmt = _field(obj, "origin_format", lambda v: isinstance(v, str), "a string", where,
                        e, default=fmt)
    origin_shape = _field(obj, "origin_shape", _INT_LIST, "a list of integers", where, e,
                          default=shape)
    ranges = _field(obj, "shape_range", _list_of(_INT_LIST), "a list of [low, high] pairs",
                    where, e, default=[])
    name = _field(obj, "name", lambda v: isinstance(v, str), "a string", where, e, default="")
    group = _field(obj, "dynamic_input", lambda v: isinstance(v, str), "a string", where, e,
                   default="")
    if group:                      # x0, x1, ... per group, as CANN renames them
        name = f"{group}{dynamic_count.get(group, 0)}"
        dynamic_count[group] = dynamic_count.get(group, 0) + 1
    for attr, text, table in (("datatype", dtype, DATA_TYPES), ("format", fmt, FORMATS),
                              ("format", origin_fmt, FORMATS)):
        if text.lower() not in table:
            raise GeError("E10027", {"attr": attr, "input_output": side, "index": str(k),
                                     "op_name": e.op_type,
                                     "where": f"{e.where}: {parameter} gives {attr} "
                                              f"{_text(text)}."})
    data_type = DATA_TYPES[dtype.lower()]
    return TensorSpec(data_type, FORMATS[fmt.lower()], tuple(shape),
                      FORMATS[origin_fmt.lower()], tuple(origin_shape),
                      _shape_range(e, shape, ranges, parameter), name,
                      _const_value(e, obj, data_type, shape, parameter))


def _check_port_count(e: _Entry, opdef, side: str, given: int) -> None:
    ports = opdef.inputs if side == "input" else opdef.outputs
    needed = [p.name for p in ports if p.kind == "required"]
    if given < len(needed):
        raise e.bad_value(given, f"{side} size", f"op type {e.op_type} needs at least "
                          f"{len(needed)} {side}s ({', '.join(needed)})")
    if given > len(ports) and not any(p.kind == "dynamic" for p in ports):
        raise e.bad_value(given, f"{side} size", f"op type {e.op_type} has {len(ports)} "
                          f"{side}s ({', '.join(p.name for p in ports)})")


# -- attributes ----------------------------------------------------------------------------------

def _data_type_value(v):
    if isinstance(v, str):
        return DataType.__members__.get(v)
    if _is_int(v) and v in DataType._value2member_map_:
        return DataType(v)
    return None


# per file type: does the JSON value fit, and the IR value
_VALUE_OF = {
    VT.VT_BOOL: (lambda v: isinstance(v, bool), bool),
    VT.VT_INT: (_is_int, int),
    VT.VT_FLOAT: (_is_number, float),
    VT.VT_STRING: (lambda v: isinstance(v, str), str),
    VT.VT_LIST_BOOL: (_list_of(lambda v: isinstance(v, bool)), list),
    VT.VT_LIST_INT: (_INT_LIST, list),
    VT.VT_LIST_FLOAT: (_list_of(_is_number), lambda v: [float(x) for x in v]),
    VT.VT_LIST_STRING: (_list_of(lambda v: isinstance(v, str)), list),
    VT.VT_LIST_LIST_INT: (_list_of(_INT_LIST), lambda v: [list(x) for x in v]),
    VT.VT_DATA_TYPE: (lambda v: _data_type_value(v) is not None, _data_type_value),
}
# the op definition's kind <- a file type that converts without loss
_CONVERT = {
    (VT.VT_DATA_TYPE, VT.VT_INT): int,
    (VT.VT_INT, VT.VT_DATA_TYPE): DataType,
    (VT.VT_INT, VT.VT_FLOAT): float,
    (VT.VT_LIST_INT, VT.VT_LIST_FLOAT): lambda v: [float(x) for x in v],
}


def _attr(e: _Entry, obj: dict, k: int, opdef) -> AttrSpec:
    where = f"attr[{k}] "
    name = _field(obj, "name", lambda v: isinstance(v, str), "a string", where, e)
    if not name:
        raise GeError("E10029", {"op_name": e.op_type, "where": f"{e.where}: attr[{k}]."})
    type_name = _field(obj, "type", lambda v: isinstance(v, str), "a string", where, e)
    if "value" not in obj:
        raise e.bad_json(f"{where}({name}) has no field \"value\"")

    def invalid(reason: str) -> GeError:
        return GeError("E10030", {"attrname": name, "op_name": e.op_type,
                                  "reason": f"{e.where}: {reason}."})
    kind = ATTR_TYPES.get(type_name)
    if kind is None:
        raise invalid(f"type {_text(type_name)} is not an attribute type; the types are "
                      + ", ".join(ATTR_TYPES))
    fits, convert = _VALUE_OF[kind]
    if not fits(obj["value"]):
        raise invalid(f"value {_text(obj['value'])} is not a {type_name}")
    value = convert(obj["value"])
    spec = opdef.attr_spec(name)
    if spec is None or spec.kind == kind:
        return AttrSpec(name, kind, value)
    to_spec = _CONVERT.get((kind, spec.kind))
    if to_spec is None:
        raise invalid(f"op type {e.op_type} takes {name} as {_kind_name(spec.kind)}, the file "
                      f"gives {type_name}")
    return AttrSpec(name, spec.kind, to_spec(value))


def _kind_name(kind: VT) -> str:
    return next((n for n, k in ATTR_TYPES.items() if k == kind), kind.name)


# -- one entry, the list -------------------------------------------------------------------------

def _op(e: _Entry, index: int) -> SingleOp:
    raw = e.raw
    op_type = _field(raw, "op", lambda v: isinstance(v, str), "a string", "", e, default="")
    name = _field(raw, "name", lambda v: isinstance(v, str), "a string", "", e, default="")
    in_objs = _field(raw, "input_desc", _OBJECT_LIST, "a list of objects", "", e, default=[])
    out_objs = _field(raw, "output_desc", _OBJECT_LIST, "a list of objects", "", e, default=[])
    attr_objs = _field(raw, "attr", _OBJECT_LIST, "a list of objects", "", e, default=[])
    if not op_type:
        raise GeError("E10026", {"where": f"{e.where} has no op type (field \"op\")."})
    opdef = ops.get(op_type)
    if opdef is None:
        raise GeError("E10501", {"opname": e.node_name, "optype": op_type})
    dynamic_count: dict = {}
    inputs = tuple(_tensor(e, o, "input", k, dynamic_count) for k, o in enumerate(in_objs))
    outputs = tuple(_tensor(e, o, "output", k, {}) for k, o in enumerate(out_objs))
    _check_port_count(e, opdef, "input", len(inputs))
    _check_port_count(e, opdef, "output", len(outputs))
    attrs = tuple(_attr(e, o, k, opdef) for k, o in enumerate(attr_objs))
    given = {a.name for a in attrs}
    for spec in opdef.attrs:
        if spec.required and spec.name not in given:
            raise GeError("E10030", {"attrname": spec.name, "op_name": e.op_type,
                                     "reason": f"{e.where}: op type {e.op_type} requires "
                                               f"attribute {spec.name}; the op has none."})
    return SingleOp(e.entry, index, op_type, name, inputs, outputs, attrs)


def _load(path: str):
    if not os.path.isfile(os.path.realpath(path)):
        raise GeError("E10023", {"value": path})
    try:
        text = read_text_regular(path)
    except (OSError, UnicodeDecodeError) as exc:
        reason = os_reason(exc) if isinstance(exc, OSError) else f"it is not UTF-8 ({exc})"
        raise GeError("E10024", {"value": path, "reason": reason}) from None
    try:
        return json.loads(text, parse_constant=_not_json)
    except (json.JSONDecodeError, ValueError) as exc:
        raise GeError("E10025", {"realpath": os.path.realpath(path), "errmsg": str(exc)}) \
            from None


def _not_json(word: str):
    """NaN and Infinity are Python's extensions, not JSON (CANN's reader refuses them)."""
    raise ValueError(f"{word} is not a JSON value")


def read_op_list(path: str) -> list[SingleOp]:
    """The ops of the file at `path`, in file order, each checked; raises the first problem."""
    document = _load(path)
    if not isinstance(document, list):
        raise GeError("E10032", {"file": path, "reason": "the top-level value must be a list "
                                 "of ops"})
    result: list[SingleOp] = []
    for entry, raw in enumerate(document):
        if not isinstance(raw, dict):
            raise GeError("E10032", {"file": path, "reason": f"entry {entry} is "
                                     f"{_text(raw)}, which is not an object"})
        e = _Entry(path, entry, raw)
        flag = _field(raw, "compile_flag", _is_int, "an integer", "", e, default=0)
        if flag == 1:
            # CANN: such an entry switches fuzzy build on for the ops after it and is not
            # itself compiled.  We compile exact shapes only, so the switch changes nothing.
            warn("WP0700", {"entry": str(entry), "file": path})
            continue
        result.append(_op(e, len(result)))
    return result
