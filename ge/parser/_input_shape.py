"""The `--input_shape` grammar shared by the parsers (spec/atc-cli.md §6.2, §6.12):
`name:d0,d1;...` with positive static dims.  The range form (`-1`, `a~b`: ge.parser._shape_range)
gives -1 for every dimension that varies; ge.compiler.dynamic_shape applies the ranges.
Grammar errors: E10002 / E10011 / E10014.

`read_shaping_options` reads what every parser reads the same way: `input_format` against the
parser's table, `input_shape` (alias `ge.inputShape`) and the `ge.outputNodeName` (alias
`out_nodes`) text, whose grammar differs per parser.  `parse_node_indexes` is the
`name:index;...` form of that text the TensorFlow and Caffe parsers read (E10003)."""
from __future__ import annotations

from ge.errors import GeError

from ._shape_range import fixed_dims, is_range_shape, parse_range_shape

__all__ = ["parse_input_shape", "read_shaping_options", "parse_node_indexes"]

_SHAPE_SAMPLE = '"input_name1:n1,c1,h1,w1;input_name2:n2,c2,h2,w2"'


def _shape_error(value: str, reason: str) -> GeError:
    return GeError("E10002", {"value": value, "reason": reason, "format": _SHAPE_SAMPLE})


def parse_input_shape(text: str) -> dict:
    shapes: dict[str, list[int]] = {}
    if is_range_shape(text):      # spec §6.12: the range form; varying dims become -1
        return {name: fixed_dims(dims) for name, dims in parse_range_shape(text).items()
                if isinstance(name, str)}        # by-index entries: ge.compiler.dynamic_shape
    for entry in text.split(";"):
        if ":" not in entry:
            raise _shape_error(entry, "The shape must contain two parts: name and value")
        name, _, dims_text = entry.rpartition(":")
        name = name.strip()          # CANN trims the name: "a:1,3; b:1,10" names input b
        if not name:
            raise _shape_error(entry, "The input name is empty")
        dims: list[int] = []
        for d in (dims_text.split(",") if dims_text.strip() else []):
            d = d.strip()
            if not d:
                raise GeError("E10014", {"value": entry, "parameter": "input_shape"})
            if "." in d:
                raise _shape_error(entry, "The float number is unsupported")
            if not d.lstrip("-").isdigit():
                raise _shape_error(entry, "It is not a digit")
            if int(d) <= 0:
                raise GeError("E10011", {"value": entry, "dim": d})
            dims.append(int(d))
        shapes[name] = dims
    return shapes


def _first(options: dict, *keys: str) -> str:
    for key in keys:
        value = options.get(key)
        if value:
            return str(value)
    return ""


def read_shaping_options(options: dict, formats: dict, default_format: str,
                         format_reason: str) -> tuple:
    """(input shapes, input Format, out_nodes text); E10001 with `format_reason` for an
    `input_format` not in `formats`."""
    fmt_text = _first(options, "input_format") or default_format
    if fmt_text not in formats:
        raise GeError("E10001", {"value": fmt_text, "parameter": "--input_format",
                                 "reason": format_reason})
    shape_text = _first(options, "input_shape", "ge.inputShape")
    return (parse_input_shape(shape_text) if shape_text else {}, formats[fmt_text],
            _first(options, "ge.outputNodeName", "out_nodes"))


def parse_node_indexes(text: str, reason: str, bare_names: bool = False) -> tuple:
    """`name:index;...` as ((name, index), ...): names may hold `/` and `:` (the last `:`
    separates the index); with `bare_names` an entry without `:` is (name, None).  E10003 with
    `reason` otherwise."""
    out = []
    for entry in filter(None, (e.strip() for e in text.split(";"))):
        name, sep, index = entry.rpartition(":")
        if not sep and bare_names:
            out.append((entry, None))
        elif sep and name and index.strip().isdigit():
            out.append((name, int(index)))
        else:
            raise GeError("E10003", {"value": entry, "parameter": "out_nodes", "reason": reason})
    return tuple(out)
