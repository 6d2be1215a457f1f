"""Shape ranges of a dynamic-shape model (spec/atc-cli.md §6.11 step 8, §6.12): the grammar of
`--input_shape_range` and of the range form of `--input_shape`, read into one table.

    "x:[1~8,3,224~512,-1];y:[2]"        --input_shape_range, named    (deprecated flag)
    "[1~8,3,224,224],[2]"               --input_shape_range, by input index
    "x:1~8,3,224~512,-1;y:2"            --input_shape range form, named
    "1~8,3,224,224;2"                   --input_shape range form, by input index

A dimension is `n` (fixed), `lo~hi` (0 <= lo <= hi) or a negative value (`-1`: unbounded,
[0, inf)).  The result maps an input name (or, in the index forms, its position) to one
(lo, hi) pair per dimension, hi = UNBOUNDED for no upper bound.  Errors are CANN's: E10048 for
the range grammar, E10002 for characters `--input_shape` does not allow.
"""
from __future__ import annotations

import re

from ge.errors import GeError
from ge.gear_layout import GEAR_KEYS

__all__ = ["UNBOUNDED", "RANGE_KEYS", "parse_range_flag", "parse_range_shape",
           "shape_ranges_from_options", "range_text", "fixed_dims", "is_range_shape"]

UNBOUNDED = -1
RANGE_KEYS = ("input_shape_range",)

_SAMPLE_NAMED = '"input_name1:[n1~n2,c1,h1,w1]"'
_SAMPLE_DIMS = '"[1~20,3,3~6,-1]"'
_SAMPLE_LIST = '"input_name1:[1~20,3,3~6,-1];input_name2:[1~20,3,3~6,-1]"'
_SAMPLE_NUMBER = '"16"'
_SAMPLE_SHAPE = '"input_name1:n1~n2,c1,h1,w1"'
_SHAPE_CHARS = re.compile(r"^[0-9 ,~\-]*$")


def _e10048(value: str, reason: str, sample: str) -> GeError:
    return GeError("E10048", {"value": value, "reason": reason, "format": sample})


def _number(text: str) -> int:
    body = text.strip()
    if not re.fullmatch(r"-?[0-9]+", body):
        raise _e10048(text, "The current string cannot be converted to a number", _SAMPLE_NUMBER)
    return int(body)


def _dim(text: str, whole: str) -> tuple[int, int]:
    parts = text.split("~")
    if len(parts) == 1:
        value = _number(parts[0])
        return (0, UNBOUNDED) if value < 0 else (value, value)
    if len(parts) != 2:
        raise _e10048(whole, "The format of the shape range is invalid", _SAMPLE_DIMS)
    low, high = _number(parts[0]), _number(parts[1])
    if low < 0 or high < 0 or low > high:
        raise _e10048(whole, "The format of the shape range is invalid", _SAMPLE_DIMS)
    return low, high


def _dims(text: str, whole: str) -> list[tuple[int, int]]:
    text = text.strip()
    return [_dim(d, whole) for d in text.split(",")] if text else []     # "" = scalar


def _bracketed(text: str) -> str:
    """The inside of one `[...]`; E10048 unless the value holds exactly one pair."""
    brackets = [c for c in text if c in "[]"]
    inner = text.strip()
    if brackets != ["[", "]"] or not (inner.startswith("[") and inner.endswith("]")):
        raise _e10048(text, "The value can only contains a pair of '[]'", _SAMPLE_NAMED)
    return inner[1:-1]


def parse_range_flag(text: str) -> dict:
    """`--input_shape_range`: {name or index: [(lo, hi), ...]}."""
    if ":" not in text:                                     # "[..],[..]" by input index
        if len(text.strip()) < 2:
            raise _e10048(text, "The shape range size less than 2, and it is invalid",
                          _SAMPLE_LIST)
        items = re.findall(r"\[([^\[\]]*)\]", text)
        rest = re.sub(r"\[[^\[\]]*\]", "", text).replace(",", "").strip()
        if not items or rest:
            raise _e10048(text, "The format of the shape range is invalid", _SAMPLE_LIST)
        return {i: _dims(item, text) for i, item in enumerate(items)}
    ranges: dict = {}
    for entry in text.split(";"):
        if not entry.strip():
            continue
        name, colon, value = entry.rpartition(":")
        if not colon or not name.strip():
            raise _e10048(text, "The shape must contain two parts: name and value", _SAMPLE_NAMED)
        if not value.strip():
            raise _e10048(text, "The shape has a parameter name, whose value cannot be empty",
                          _SAMPLE_NAMED)
        ranges[name.strip()] = _dims(_bracketed(value), value)
    return ranges


def _shape_error(value: str, reason: str) -> GeError:
    return GeError("E10002", {"value": value, "reason": reason, "format": _SAMPLE_SHAPE})


def parse_range_shape(text: str) -> dict:
    """The range form of `--input_shape` (it holds `~` or `-1`), same result as
    `parse_range_flag`; without any `:` the entries are matched by input index."""
    named = ":" in text
    ranges: dict = {}
    for index, entry in enumerate(text.split(";")):
        name, _, value = entry.rpartition(":") if named else ("", "", entry)
        if named and not name.strip():
            raise _shape_error(text, "The input name is empty")
        if not _SHAPE_CHARS.match(value):
            raise _shape_error(text, "The shape must contain two parts: name and value")
        ranges[name.strip() if named else index] = _dims(value, text)
    return ranges


def is_range_shape(text: str) -> bool:
    return "~" in text or "-1" in text


def shape_ranges_from_options(options: dict) -> dict:
    """The ranges a compile asks for: `input_shape_range` wins (CANN clears `input_shape`
    then); else the range form of `input_shape` when no gear option is set; else {}."""
    flag = next((str(options[k]) for k in RANGE_KEYS if options.get(k)), "")
    if flag:
        return parse_range_flag(flag)
    shape = str(options.get("input_shape") or options.get("ge.inputShape") or "")
    if shape and is_range_shape(shape) and not any(options.get(k) for k in GEAR_KEYS):
        return parse_range_shape(shape)
    return {}


def fixed_dims(ranges: list) -> list[int]:
    """The static view of one input's ranges: fixed dims kept, varying ones -1."""
    return [low if low == high else -1 for low, high in ranges]


def range_text(ranges: list) -> str:
    """`[1~8,3,-1]`: one input's ranges in the `--input_shape_range` grammar."""
    def one(low: int, high: int) -> str:
        if high == UNBOUNDED:      # the grammar has no lower bound for it: shape_range has
            return "-1"
        return str(low) if low == high else f"{low}~{high}"
    return "[" + ",".join(one(lo, hi) for lo, hi in ranges) + "]"
