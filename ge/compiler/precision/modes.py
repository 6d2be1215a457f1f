"""The precision mode of a compile: `ge.exec.precision_mode` / `ge.exec.precision_mode_v2`
resolved to one `Policy` (spec/atc-cli.md §3.6; docs/precision.md).

Both option keys are read the same way whichever entry point set them (ATC flag,
--raw_ge_options, ge.offline_compile): setting both is CANN's E10056, the hif8 values of v2 are
refused (EP0002: the host has no HiFloat8), and with neither set the mode is CANN's default.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from ge.errors import GeError
from ge.graph import DataType

__all__ = ["Policy", "POLICIES", "V2_TO_V1", "DEFAULT_MODE", "OPT_MODE", "OPT_MODE_V2",
           "resolve_policy"]

OPT_MODE, OPT_MODE_V2 = "ge.exec.precision_mode", "ge.exec.precision_mode_v2"

# How a float op's dtype is chosen (docs/precision.md, "Rules"):
FORCE_LOW = "force_low"        # every float op in the low dtype
ORIGIN = "origin"              # every op keeps the graph's dtype
CUBE_IN_LOW = "cube_in_low"    # matrix ops: x and weight in the low dtype, the rest fp32
CUBE_LOW = "cube_low"          # matrix ops wholly in the low dtype, vector ops keep fp32
MIXED = "mixed"                # white list low, black list fp32, gray list follows its input
FP32 = "fp32"                  # every float op in float32


@dataclass(frozen=True)
class Policy:
    mode: str            # the --precision_mode name (v2 values are mapped to it)
    rule: str            # one of the rules above
    low: DataType        # the reduced dtype of the mode
    v2: str = ""         # the --precision_mode_v2 name when the user gave that one

    @property
    def name(self) -> str:
        """The name the user gave: the v2 value when set, else the v1 value."""
        return self.v2 or self.mode


_F16, _BF16 = DataType.DT_FLOAT16, DataType.DT_BF16
POLICIES = {p.mode: p for p in (
    Policy("force_fp16", FORCE_LOW, _F16),
    Policy("force_fp32", FP32, _F16),
    Policy("cube_fp16in_fp32out", CUBE_IN_LOW, _F16),
    Policy("must_keep_origin_dtype", ORIGIN, _F16),
    Policy("allow_fp32_to_fp16", CUBE_LOW, _F16),
    Policy("allow_mix_precision", MIXED, _F16),
    Policy("allow_mix_precision_fp16", MIXED, _F16),
    Policy("allow_mix_precision_bf16", MIXED, _BF16),
    Policy("allow_fp32_to_bf16", CUBE_LOW, _BF16),
)}
V2_TO_V1 = {"fp16": "force_fp16", "origin": "must_keep_origin_dtype",
            "cube_fp16in_fp32out": "cube_fp16in_fp32out",
            "mixed_float16": "allow_mix_precision_fp16",
            "mixed_bfloat16": "allow_mix_precision_bf16"}
_REFUSED_V2 = ("cube_hif8", "mixed_hif8")

# CANN's ATC default (--precision_mode force_fp16, --precision_mode_v2 fp16, every SoC family).
DEFAULT_MODE = "force_fp16"


def resolve_policy(options: Mapping[str, str]) -> Policy:
    v1 = (options.get(OPT_MODE) or "").strip()
    v2 = (options.get(OPT_MODE_V2) or "").strip()
    if v1 and v2:
        raise GeError("E10056", {"parameter1": OPT_MODE, "parameter2": OPT_MODE_V2})
    if v2:
        if v2 in _REFUSED_V2:
            raise GeError("EP0002", {"feature": f"--precision_mode_v2={v2}",
                                     "reason": "the host target has no HiFloat8 data type"})
        if v2 not in V2_TO_V1:
            raise GeError("E10001", {"parameter": "--precision_mode_v2", "value": v2,
                                     "reason": "The value must be one of "
                                               + ", ".join(list(V2_TO_V1) + list(_REFUSED_V2))
                                               + "."})
        base = POLICIES[V2_TO_V1[v2]]
        return Policy(base.mode, base.rule, base.low, v2)
    mode = v1 or DEFAULT_MODE
    if mode not in POLICIES:
        raise GeError("E10001", {"parameter": "--precision_mode", "value": mode,
                                 "reason": "The value must be one of "
                                           + ", ".join(POLICIES) + "."})
    return POLICIES[mode]
