"""`--input_shape` grammar and the gear flags (spec/atc-cli.md §6.2, §6.11 steps 8-11, §6.12).

Only the checks the command line can decide without the model live here; name lookups (E10016,
E10017) need the graph and are raised by the parser/compiler.
"""
from __future__ import annotations

import re

from ge.errors import GeError
from ge.gear_layout import GEAR_KEYS
from ge.parser._shape_range import parse_range_flag, parse_range_shape

__all__ = ["check_shapes_and_gears", "check_shape_range_flag", "check_gear_options",
           "GEAR_FLAGS"]

GEAR_FLAGS = tuple(flag for _, flag, _ in GEAR_KEYS.values())
_STATIC_SAMPLE = '"input_name1:n1,c1,h1,w1"'
_RANGE_SAMPLE = '"input_name1:n1~n2,c1,h1,w1"'
_INT64_MAX = 2 ** 63 - 1
_RANGE_CHARS = re.compile(r"^[0-9 ,~\-]*$")


def _e10002(value: str, reason: str, sample: str = _STATIC_SAMPLE) -> GeError:
    return GeError("E10002", {"value": value, "reason": reason, "format": sample})


def _check_static_shape(shape: str) -> None:
    """Static form: every entry `name:d0,d1,...` with integer dims > 0 (§6.12)."""
    for entry in shape.split(";"):
        name, colon, dims = entry.rpartition(":")
        if not colon:
            raise _e10002(shape, "The shape must contain two parts: name and value")
        if not dims:
            continue                                   # scalar input `name:`
        for dim in dims.split(","):
            text = dim.strip()
            if not text:
                raise GeError("E10014", {"value": shape, "parameter": "input_shape"})
            if "." in text:
                raise _e10002(shape, "The float number is unsupported")
            body = text[1:] if text.startswith("-") else text
            if not (body.isascii() and body.isdigit()):
                raise _e10002(shape, "It is not a digit")
            if int(text) > _INT64_MAX:
                raise GeError("E10013", {"value": shape, "parameter": "input_shape"})
            if int(text) <= 0:
                raise GeError("E10011", {"value": shape, "dim": text})


def _check_range_shape(shape: str) -> None:
    """Range form (`~` or `-1`): allowed characters, names, `lo~hi` bounds (§6.12)."""
    named = ":" in shape
    for entry in shape.split(";"):
        name, colon, dims = entry.rpartition(":") if named else ("", "", entry)
        if named and not name:
            raise _e10002(shape, "The input name is empty", _RANGE_SAMPLE)
        if not _RANGE_CHARS.match(dims):
            raise _e10002(shape, "Only digits, spaces and ',' '~' '-' are allowed in dims",
                          _RANGE_SAMPLE)
        for dim in dims.split(","):
            if "~" not in dim:
                continue
            low, _, high = dim.partition("~")
            if not (low.strip().isdigit() and high.strip().isdigit()):
                raise GeError("E10048", {"value": shape, "reason": f"Range {dim.strip()} needs "
                                         "two non-negative integers",
                                         "format": '"input_name1:[n1~n2,c1,h1,w1]"'})


def check_shape_range_flag(state) -> None:
    """`--input_shape_range` (deprecated): CANN's two screen warnings, `--input_shape` cleared
    when both are set, the range grammar (E10048)."""
    state.warn("WP0220", {})
    if state.get("input_shape"):
        state.warn("WP0221", {})
        state.values["input_shape"] = ""
    parse_range_flag(state.get("input_shape_range"))


def check_gear_options(state) -> None:
    """Step 10, the gear flags (spec/atc-cli.md §6.2): CANN's checks of the option text
    (E10009, E10004, E10040, the profiles), shared with ge.offline_compile
    (ge.compiler.gear_options)."""
    from ge.compiler.gear_options import parse_gear_options
    options = {key: state.get(flag) for key, (_, flag, _) in GEAR_KEYS.items()}
    options.update(input_shape=state.get("input_shape"),
                   input_shape_range=state.get("input_shape_range"),
                   input_format=state.get("input_format"))
    parse_gear_options(options)


def check_shapes_and_gears(state) -> None:
    """CheckFlags steps 8-11 (shape normalisation, hint shape, gears, AIPP with dims)."""
    shape = state.get("input_shape")
    gears = [name for name in GEAR_FLAGS if state.get(name)]
    if state.get("input_shape_range"):
        check_shape_range_flag(state)
    elif shape and not gears:                  # with gears: parse_gear_options reads it
        if "~" in shape or "-1" in shape:
            _check_range_shape(shape)
            parse_range_shape(shape)           # the range grammar (E10048)
        else:
            _check_static_shape(shape)
    if state.get("input_hint_shape") and gears:
        raise GeError("E10001", {"value": state.get("input_hint_shape"),
                                 "parameter": "--input_hint_shape",
                                 "reason": "It cannot be used together with the dynamic gear "
                                           "options."})
    if gears:
        check_gear_options(state)
    if state.get("insert_op_conf") and state.get("dynamic_dims"):
        raise GeError("E10001", {"value": state.get("insert_op_conf"),
                                 "parameter": "--insert_op_conf",
                                 "reason": "The dynamic dims function does not support AIPP."})
