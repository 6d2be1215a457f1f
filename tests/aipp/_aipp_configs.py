"""AIPP configurations of the tests, written as CANN's users write them (protobuf text).

The CSC matrices are those of CANN's "colour-space conversion" guide (YUV420SP_U8 to RGB for
BT.601/BT.709, narrow and full range; RGB888_U8 to YUV444 for JPEG)."""
from __future__ import annotations


def block(**fields) -> str:
    """One aipp_op block; values are written as given (enums and bools as bare words)."""
    lines = ["aipp_op {"]
    for key, value in fields.items():
        values = value if isinstance(value, list) else [value]
        for v in values:
            text = str(v).lower() if isinstance(v, bool) else f'"{v}"' if (
                key == "related_input_name") else str(v)
            lines.append(f"    {key}: {text}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def matrix(rows, bias_kind: str, bias) -> dict:
    out = {f"matrix_r{r}c{c}": rows[r][c] for r in range(3) for c in range(3)}
    out.update({f"{bias_kind}_bias_{i}": b for i, b in enumerate(bias)})
    return out


YUV2RGB = {
    "bt601_narrow": matrix(((298, 0, 409), (298, -100, -208), (298, 516, 0)), "input",
                           (16, 128, 128)),
    "bt601_full": matrix(((256, 0, 359), (256, -88, -183), (256, 454, 0)), "input",
                         (0, 128, 128)),
    "bt709_narrow": matrix(((298, 0, 459), (298, -55, -136), (298, 541, 0)), "input",
                           (16, 128, 128)),
    "bt709_full": matrix(((256, 0, 403), (256, -48, -120), (256, 475, 0)), "input",
                         (0, 128, 128)),
}
RGB2YUV_JPEG = matrix(((77, 150, 29), (-43, -85, 128), (128, -107, -21)), "output",
                      (0, 128, 128))

# the normalisation the tests use (ImageNet-like)
MEAN = (124, 116, 104, 0)
LOW = (0.5, 0.25, 0.0, 0.0)
VAR = (0.0171, 0.0175, 0.0174, 1.0)
NORMALISE = {**{f"mean_chn_{i}": v for i, v in enumerate(MEAN)},
             **{f"min_chn_{i}": v for i, v in enumerate(LOW)},
             **{f"var_reci_chn_{i}": v for i, v in enumerate(VAR)}}
