"""The gear options (`--dynamic_batch_size`, `--dynamic_image_size`, `--dynamic_dims`) read
and checked as CANN checks them, into a `GearSpec` the gear build works from.

Two places check in CANN: ATC's CheckFlags (option_utils: the input shapes, the characters,
the number of values per profile) and GE when it builds the multi-batch graph (multi_batch
options: at least 2 and at most 100 profiles, equal sizes, positive values, no duplicates).
`parse_gear_options` does both, in that order, so `atc`, `pyatc` and `ge.offline_compile`
refuse the same option text with the same code.  Gears keep the order the user wrote: gear
`i` is branch `Batch_i` of the OM (CANN does not sort them either).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional

from ge.errors import GeError
from ge.gear_layout import GEAR_KEYS, HW_AXES as _HW_AXES, gear_shapes
from ge.parser._shape_range import RANGE_KEYS

__all__ = ["GearSpec", "GEAR_KEYS", "MIN_GEARS", "MAX_GEARS", "parse_gear_options",
           "gear_option_set", "static_shape_text"]

MIN_GEARS, MAX_GEARS = 2, 100            # CANN: (1, 100] profiles
_SHAPE_SAMPLE = '"input_name1:n1,c1,h1,w1"'
_DIGIT_SAMPLE = '"input_name1:1,3,224,224"'
_INT64_MAX = 2 ** 63 - 1


@dataclass(frozen=True)
class GearSpec:
    kind: str                       # "batch" | "image" | "dims"
    option: str                     # flag name, e.g. "dynamic_batch_size"
    dynamic_type: int               # CANN's mbatch_dynamic_type: 1 batch, 2 image, 3 dims
    inputs: tuple                   # ((name, (d0, d1, ...)), ...) as --input_shape lists them
    gears: tuple                    # ((v0, v1, ...), ...) in the order given
    input_format: str = ""

    def shapes(self, gear: int) -> dict:
        """{input name: static dims} of gear `gear` (every --input_shape entry)."""
        return {name: list(dims) for name, dims in gear_shapes(
            self.kind, [(n, d, self.input_format) for n, d in self.inputs],
            self.gears[gear]).items()}

    def largest(self) -> int:
        """The gear whose inputs hold the most elements (the shapes the parser reads the
        model at; the root's inputs are each sized for their own largest gear)."""
        def elements(g: int) -> int:
            total = 0
            for dims in self.shapes(g).values():
                count = 1
                for d in dims:
                    count *= d
                total += count
            return total
        return max(range(len(self.gears)), key=lambda g: (elements(g), -g))


def gear_option_set(options: Mapping[str, str]) -> list:
    return [key for key in GEAR_KEYS if (options.get(key) or "").strip()]


def static_shape_text(spec: GearSpec, gear: int) -> str:
    """--input_shape text of one gear (what the parsers read: static dims only)."""
    shapes = spec.shapes(gear)
    return ";".join(f"{name}:{','.join(str(d) for d in shapes[name])}"
                    for name, _ in spec.inputs)


def parse_gear_options(options: Mapping[str, str]) -> Optional[GearSpec]:
    """The GearSpec of the options, None when no gear option is set; CANN's codes on any
    refusal.  Reads GE option keys (ge.dynamicBatchSize, ...) and input_shape/ge.inputShape,
    input_shape_range, input_format."""
    keys = gear_option_set(options)
    ranges = any(str(options.get(key) or "").strip() for key in RANGE_KEYS)
    if len(keys) + ranges > 1:
        raise GeError("E10009", {})
    if not keys:
        return None
    kind, option, dynamic_type = GEAR_KEYS[keys[0]]
    value = options[keys[0]].strip()
    shape_text = str(options.get("input_shape") or options.get("ge.inputShape") or "")
    if not shape_text:
        raise GeError("E10004", {"parameter": "input_shape"})
    if "~" in shape_text:
        raise GeError("E10040", {"value": shape_text, "parameter": f"--{option}"})
    inputs = _parse_input_shape(shape_text)
    input_format = str(options.get("input_format") or "")
    value = _CHECKS[kind](inputs, value, input_format)
    gears = _profiles(kind, value)
    _check_profiles(gears)
    return GearSpec(kind, option, dynamic_type, tuple(inputs), tuple(gears), input_format)


# -- ATC side (CheckDynamicInputParamValid) ---------------------------------------------------
def _parse_input_shape(text: str) -> list:
    """`name:d0,d1;...` with -1 allowed (the gear form of --input_shape)."""
    out = []
    for entry in text.split(";"):
        name, colon, dims_text = entry.rpartition(":")
        if not colon:
            raise GeError("E10002", {"value": entry, "format": _SHAPE_SAMPLE, "reason":
                                     "The shape must contain two parts: name and value"})
        dims = []
        for dim in (dims_text.split(",") if dims_text else []):
            text = dim.strip()
            if "." in text:
                raise GeError("E10002", {"value": entry, "format": _DIGIT_SAMPLE,
                                         "reason": "The float number is unsupported"})
            body = text[1:] if text.startswith("-") else text
            if not (body.isascii() and body.isdigit()):
                raise GeError("E10002", {"value": entry, "format": _DIGIT_SAMPLE,
                                         "reason": "It is not a digit"})
            if abs(int(text)) > _INT64_MAX:
                raise GeError("E10013", {"value": text, "parameter": "input_shape"})
            dims.append(int(text))
        out.append((name.strip(), tuple(dims)))
    return out


def _by_name(inputs: list) -> list:
    """CANN walks a std::map of the shapes: by name."""
    return sorted(inputs, key=lambda item: item[0])


def _check_batch(inputs: list, value: str, input_format: str) -> str:
    batched = 0
    for _, dims in _by_name(inputs):
        if not dims:
            raise GeError("E10012", {})
        if -1 not in dims:
            continue
        for index, dim in enumerate(dims):
            if dim < 0 and (index > 0 or dim != -1):
                raise GeError("E10018", {"shape": str(dim), "index": str(index)})
        batched += 1
    if not batched:
        raise GeError("E10031", {})
    if any(not (c.isdigit() or c == ",") for c in value):
        raise GeError("E10003", {"value": value, "parameter": "dynamic_batch_size",
                                 "reason": 'It can only contain digits and ",".'})
    return value.rstrip(",")


def _check_image(inputs: list, value: str, input_format: str) -> str:
    sized = 0
    for _, dims in _by_name(inputs):
        if len(dims) != 4 or -1 not in dims:
            if -1 in dims:
                raise GeError("E10019", {})
            continue
        if input_format not in _HW_AXES:
            raise GeError("E10003", {"value": input_format, "parameter": "input_format",
                                     "reason": "When --dynamic_image_size is set, the input "
                                               "format only supports NCHW or NHWC."})
        h, w = _HW_AXES[input_format]
        if not (dims[h] == -1 and dims[w] == -1 and dims.count(-1) == 2):
            raise GeError("E10019", {})
        sized += 1
    if not sized:
        raise GeError("E10019", {})
    value = value.rstrip(";")
    if any(not (c.isdigit() or c in ", ;") for c in value):
        raise GeError("E10003", {"value": value, "parameter": "dynamic_image_size",
                                 "reason": 'It can only contain digits, ",", " " and ";".'})
    for profile in value.split(";"):
        if len(profile.split(",")) != 2:
            raise GeError("E10020", {"dynamic_image_size": value})
    return value


def _check_dims(inputs: list, value: str, input_format: str) -> str:
    unknown = sum(dims.count(-1) for _, dims in inputs)
    if unknown == 0:
        raise GeError("E10001", {"parameter": "--input_shape's dynamic dim num", "value": "0",
                                 "reason": "At least one dim should be -1 when dynamic_dims "
                                           "is set."})
    value = value.rstrip(";")
    if not value:
        raise GeError("E10058", {"parameter": "--dynamic_dims"})
    for profile in value.split(";"):
        values = profile.split(",")
        if len(values) != unknown:
            raise GeError("E10003", {"value": value, "parameter": "dynamic_dims",
                                     "reason": "Each setting needs to be consistent with the "
                                               "number of -1 in the input shape."})
        for dim in values:
            if not (dim.isascii() and dim.isdigit()):
                raise GeError("E10001", {"parameter": "--dynamic_dims", "value": dim,
                                         "reason": "Dynamic dims must be a positive integer."})
    return value


_CHECKS = {"batch": _check_batch, "image": _check_image, "dims": _check_dims}


# -- GE side (multi-batch options: InitDynamicParams, CheckDynamicParams) ----------------------
def _profiles(kind: str, value: str) -> list:
    if kind == "batch":
        return [(int(v),) for v in value.split(",") if v]
    gears = []
    for profile in value.split(";"):
        values = tuple(int(v) for v in profile.replace(" ", "").split(",") if v)
        if values:
            gears.append(values)
    return gears


def _check_profiles(gears: list) -> None:
    if len(gears) < MIN_GEARS:
        raise GeError("E10035", {"shapesize": str(len(gears)), "minshapesize": str(MIN_GEARS)})
    if len(gears) > MAX_GEARS:
        raise GeError("E10036", {"shapesize": str(len(gears)), "maxshapesize": str(MAX_GEARS)})
    # CANN's E10037 (profiles of different sizes) cannot happen here: the ATC-side checks
    # above already gave every profile the size E10020 / E10003 demand.
    for gear in gears:
        for dim in gear:
            if dim <= 0:
                raise GeError("E10038", {"dim": str(dim)})
    if len(set(gears)) != len(gears):
        raise GeError("E10039", {})
