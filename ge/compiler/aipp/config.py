"""Reading and checking an AIPP configuration file (`--insert_op_conf`, GE option
ge.insertOpFile) before anything is compiled.

The file is CANN's `domi.InsertNewOps` in protobuf text format (ge.proto.insert_op); a file that
does not parse (not text format, an unknown field, a value out of its field's range) is E13005
naming the parser's line, column and field.  Every rule a configuration breaks is E10052
("AIPP configuration is invalid. Reason: ...") naming the field and the value, as GE reports
its AIPP checks.  Rules that need the model (the related input, its shape) are in
ge.compiler.aipp.insert.  Defaults are then applied as GE applies them (the BT.601 narrow CSC
matrix when csc_switch is on and no matrix is given, var_reci_chn 1.0).
"""
from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from ge.errors import GeError
from ge.graph.types import AttrValueType as VT
from ge.proto.insert_op import AIPP_FIELDS, ParseError, parse_text

__all__ = ["AippConfig", "read_config", "check_op", "soc_limits", "SUPPORTED_FORMATS",
           "invalid_aipp"]

SUPPORTED_FORMATS = ("YUV420SP_U8", "XRGB8888_U8", "RGB888_U8", "YUV400_U8")
_REPEATED = [name for name, _n, _t, label in AIPP_FIELDS if label == "*"
             and name != "input_edge_idx"]

# Static field ranges from CANN's configuration template: field -> (low, high).
_RANGES = {
    "src_image_size_w": (0, 4096), "src_image_size_h": (0, 4096),
    "load_start_pos_w": (0, 4095), "load_start_pos_h": (0, 4095),
    "crop_size_w": (0, 4096), "crop_size_h": (0, 4096),
    **{f"{side}_padding_size": (0, 32) for side in ("left", "right", "top", "bottom")},
    "padding_value": (-65504, 65504), "cpadding_value": (-65504, 65504),
    **{f"mean_chn_{i}": (0, 255) for i in range(4)},
    **{f"min_chn_{i}": (0, 255) for i in range(4)},
    **{f"var_reci_chn_{i}": (-65504, 65504) for i in range(4)},
    **{f"matrix_r{r}c{c}": (-32677, 32676) for r in range(3) for c in range(3)},
    **{f"{kind}_bias_{i}": (0, 255) for kind in ("input", "output") for i in range(3)},
}
# Fields CANN's documentation lists as reserved ("not supported currently") on every product.
_RESERVED = ("resize", "single_line_mode", "support_rotation", "raw_rgbir_to_f16_n")
# Sizes that must be even for YUV420SP_U8 (chroma is subsampled 2x2).
_EVEN_YUV420SP = ("src_image_size_w", "src_image_size_h", "load_start_pos_w",
                  "load_start_pos_h", "crop_size_w", "crop_size_h")

# soc_version prefix -> (widest padded output W, YUV420SP crop positions must be even); the
# first matching prefix wins (CANN's configuration template, "padding" and "crop" limits).
_SOC_LIMITS = (("Ascend950", 4096, False), ("Ascend910B", 4096, True),
               ("Ascend910_93", 4096, True), ("Ascend310B", 4096, True),
               ("Ascend310P", 1080, True), ("Ascend910", 1080, True), ("Ascend310", 1080, True))

# Defaults GE applies when csc_switch is on (aipp_op.cc SetCscDefaultValue): YUV -> BGR and
# RGB -> YUV, both BT.601 narrow range.
_YUV2BGR = (298, 516, 0, 298, -100, -208, 298, 0, 409)
_RGB2YUV = (66, 129, 25, -38, -74, 112, 112, -94, -18)
_BIAS = (16, 128, 128)

# GE's AIPP attribute (NamedAttrs "aipp", aipp_op.cc ConvertParamToAttr): field -> kind.
_STATIC_ATTRS = (
    ("input_format", VT.VT_INT), ("csc_switch", VT.VT_BOOL), ("crop", VT.VT_BOOL),
    ("resize", VT.VT_BOOL), ("load_start_pos_w", VT.VT_INT), ("load_start_pos_h", VT.VT_INT),
    ("crop_size_w", VT.VT_INT), ("crop_size_h", VT.VT_INT), ("resize_output_w", VT.VT_INT),
    ("resize_output_h", VT.VT_INT), ("padding", VT.VT_BOOL),
    *[(f"{s}_padding_size", VT.VT_INT) for s in ("left", "right", "top", "bottom")],
    ("src_image_size_w", VT.VT_INT), ("src_image_size_h", VT.VT_INT),
    ("cpadding_value", VT.VT_FLOAT), ("rbuv_swap_switch", VT.VT_BOOL),
    ("ax_swap_switch", VT.VT_BOOL), ("single_line_mode", VT.VT_BOOL),
    *[(f"mean_chn_{i}", VT.VT_INT) for i in range(4)],
    *[(f"min_chn_{i}", VT.VT_FLOAT) for i in range(4)],
    *[(f"var_reci_chn_{i}", VT.VT_FLOAT) for i in range(4)],
    *[(f"matrix_r{r}c{c}", VT.VT_INT) for r in range(3) for c in range(3)],
    *[(f"{k}_bias_{i}", VT.VT_INT) for k in ("output", "input") for i in range(3)],
)
_DYNAMIC_ATTRS = (("max_src_image_size", VT.VT_INT), ("support_rotation", VT.VT_BOOL))


@dataclass
class AippConfig:
    """One `aipp_op` block after its checks and defaults."""
    index: int            # position in the file (GE's current_aipp_index)
    params: object        # domi.AippOpParams with GE's defaults applied
    padding_width_limit: int = 4096   # widest padded output of the target soc

    @property
    def mode(self) -> str:
        return self.params.DESCRIPTOR.fields_by_name["aipp_mode"].enum_type \
            .values_by_number[self.params.aipp_mode].name

    @property
    def input_format(self) -> str:
        return self.params.DESCRIPTOR.fields_by_name["input_format"].enum_type \
            .values_by_number[self.params.input_format].name

    def value(self, name: str):
        """A field's value: the first element of a repeated field (0 when absent)."""
        v = getattr(self.params, name)
        if name in _REPEATED:
            return v[0] if len(v) else 0
        return v

    def to_json(self) -> str:
        """GE's JSON of the configuration (AippOp::ConvertParamToJson): the mode, the format by
        name and every field that is not zero, keys sorted."""
        out = {"aipp_mode": self.mode}
        if self.params.related_input_rank:
            out["related_input_rank"] = self.params.related_input_rank
        names = ([n for n, _ in _STATIC_ATTRS] + ["padding_value"] if self.mode == "static"
                 else ["max_src_image_size"])
        for name in names:
            value = self.input_format if name == "input_format" else self.value(name)
            if isinstance(value, float):  # float32 fields, printed as float32 (shortest)
                value = float(str(np.float32(value))) if abs(value) >= 1e-6 else 0
            if value:
                out[name] = value
        return json.dumps(out, sort_keys=True, separators=(",", ":"))

    def named_attrs(self) -> dict:
        """The `aipp` NamedAttrs GE puts on the Aipp node and the Data node it follows."""
        rows = ((("aipp_mode", VT.VT_INT), ("related_input_rank", VT.VT_INT))
                + (_STATIC_ATTRS if self.mode == "static" else _DYNAMIC_ATTRS))
        attrs = {}
        for name, kind in rows:
            value = self.value(name)
            attrs[name] = (kind, float(value) if kind == VT.VT_FLOAT else
                           bool(value) if kind == VT.VT_BOOL else int(value))
        return {"name": "", "attr": attrs}


def invalid_aipp(reason: str) -> GeError:
    """E10052 for an AIPP configuration that cannot be applied (to the file or to the model)."""
    return GeError("E10052", {"reason": reason})


def soc_limits(soc: str) -> tuple:
    for prefix, width, even in _SOC_LIMITS:
        if soc.startswith(prefix):
            return width, even
    return 4096, True


def read_config(path: str, soc: str = "") -> list[AippConfig]:
    """Parse, check and complete every `aipp_op` block of the file at `path`."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except UnicodeDecodeError:
        raise GeError("E13005", {"file": path, "reason": "it is not a UTF-8 text file"}) from None
    except OSError as exc:
        raise GeError("E13001", {"file": path, "reason": exc.strerror or str(exc)}) from None
    try:
        message = parse_text(text)
    except ParseError as exc:
        raise GeError("E13005", {"file": path, "reason": str(exc)}) from None
    if message.multi_shape_op:
        raise invalid_aipp("multi_shape_op blocks are not supported; use --dynamic_batch_size")
    configs = [AippConfig(i, op) for i, op in enumerate(message.aipp_op)]
    _check_positions(configs)
    for config in configs:
        check_op(config, soc)
        _apply_defaults(config)
    return configs


def _check_positions(configs: list) -> None:
    """One AIPP per model input, all static or all dynamic (GE CheckPositionNotRepeat)."""
    modes = {c.mode for c in configs if c.mode != "undefined"}
    if len(modes) > 1:
        raise invalid_aipp("aipp_mode static and aipp_mode dynamic cannot be mixed in one "
                       "configuration file")
    by_name = bool(configs) and bool(configs[0].params.related_input_name)
    seen: dict = {}
    for c in configs:
        if bool(c.params.related_input_name) != by_name:
            raise invalid_aipp("Cannot both set related_input_name and related_input_rank: "
                           f"aipp_op {c.index} differs from the first aipp_op")
        key = c.params.related_input_name if by_name else c.params.related_input_rank
        if key in seen:
            field = "related_input_name" if by_name else "related_input_rank"
            raise invalid_aipp(f"Cannot insert aipp to the same position! aipp_op {seen[key]} and "
                           f"aipp_op {c.index} both have {field} {key}")
        seen[key] = c.index


def check_op(config: AippConfig, soc: str) -> None:
    """The rules of one block that do not need the model (GE AippOp::ValidateParams and the
    limits of CANN's configuration template)."""
    p = config.params
    where = f"aipp_op {config.index}"
    if config.mode == "undefined":
        raise invalid_aipp(f"{where}: aipp_mode must be configured as static or dynamic")
    for name in _REPEATED:
        values = list(getattr(p, name))
        if len(values) > 1:
            raise invalid_aipp(f"{where}: The parameter {name} cannot be configured repeatedly "
                           f"(values {values})")
    for name in _RESERVED:
        if getattr(p, name):
            raise invalid_aipp(f"{where}: {name} {_text(getattr(p, name))} is not supported on "
                           f"{soc or 'this soc'} (CANN documents {name} as a reserved field)")
    if config.mode == "dynamic":
        if p.max_src_image_size <= 0:
            raise invalid_aipp(f"{where}: For dynamic AIPP params, max_src_image_size must be set "
                           "which number should be greater than 0")
        return
    _check_static(config, soc, where)


def _text(value) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _check_static(config: AippConfig, soc: str, where: str) -> None:
    p, fmt = config.params, config.input_format
    if fmt == "UNDEFINED":
        raise invalid_aipp(f"{where}: Input format of AIPP conf must be set in static aipp")
    if fmt not in SUPPORTED_FORMATS:
        raise invalid_aipp(f"{where}: input_format {fmt} is not supported; supported values: "
                       f"{', '.join(SUPPORTED_FORMATS)}")
    for name, (low, high) in _RANGES.items():
        value = config.value(name)
        if not low <= value <= high:
            raise invalid_aipp(f"{where}: {name} {value:g} is out of range [{low}, {high}]")
    if p.src_image_size_w == 1:
        raise invalid_aipp(f"{where}: src_image_size_w 1 is out of range: it must be 0 or in "
                       "[2, 4096]")
    width, even = soc_limits(soc)
    if fmt == "YUV420SP_U8":
        fields = _EVEN_YUV420SP if even else _EVEN_YUV420SP[:2] + _EVEN_YUV420SP[4:]
        fields = fields if p.crop else _EVEN_YUV420SP[:2]
        for name in fields:
            if getattr(p, name) % 2:
                raise invalid_aipp(f"{where}: {name} {getattr(p, name)} must be even for "
                               "input_format YUV420SP_U8")
    if p.csc_switch and fmt == "YUV400_U8":
        raise invalid_aipp(f"{where}: csc_switch true is not allowed for input_format YUV400_U8 "
                       "(a one-channel image has no colour-space conversion)")
    if p.ax_swap_switch and fmt != "XRGB8888_U8":
        raise invalid_aipp(f"{where}: ax_swap_switch true is only meaningful for input_format "
                       f"XRGB8888_U8, not {fmt}")
    if (p.crop or p.padding) and not (p.src_image_size_w and p.src_image_size_h):
        raise invalid_aipp(f"{where}: src_image_size_w {p.src_image_size_w} and src_image_size_h "
                       f"{p.src_image_size_h}: both must be set when crop or padding is enabled")
    if p.crop:
        for axis in ("w", "h"):
            start, size = getattr(p, f"load_start_pos_{axis}"), getattr(p, f"crop_size_{axis}")
            src = getattr(p, f"src_image_size_{axis}")
            if start + size > src or start >= src:
                raise invalid_aipp(f"{where}: load_start_pos_{axis} {start} + crop_size_{axis} "
                               f"{size} must lie inside src_image_size_{axis} {src}")
            if p.padding and not size:
                raise invalid_aipp(f"{where}: crop_size_{axis} 0: the crop size must be set when "
                               "padding is enabled")
    config.padding_width_limit = width  # checked against the model's W at insertion


def _apply_defaults(config: AippConfig) -> None:
    """GE AippOp::SetDefaultParams: CSC matrix and biases, var_reci 1.0, switched-off parts
    zeroed."""
    p = config.params
    if config.mode != "static":
        return
    if p.csc_switch:
        matrix = _YUV2BGR if config.input_format == "YUV420SP_U8" else _RGB2YUV
        for k, value in enumerate(matrix):
            field = getattr(p, f"matrix_r{k // 3}c{k % 3}")
            if not len(field):
                field.append(value)
        for kind in ("input", "output"):
            for i, value in enumerate(_BIAS):
                field = getattr(p, f"{kind}_bias_{i}")
                if not len(field):
                    field.append(value)
    for i in range(4):
        field = getattr(p, f"var_reci_chn_{i}")
        if not len(field):
            field.append(1.0)
    if not p.crop:
        for name in ("load_start_pos_w", "load_start_pos_h", "crop_size_w", "crop_size_h"):
            setattr(p, name, 0)
    if not p.padding:
        for side in ("left", "right", "top", "bottom"):
            setattr(p, f"{side}_padding_size", 0)
