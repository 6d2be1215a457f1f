"""Cast between float32, float16, bfloat16, double, the integer types and bool.

Every value goes through one C expression: read (float16/bfloat16 widened exactly to float32),
convert, write (float32 rounded to float16/bfloat16 to nearest even, lowprec.CONVERT_C).  The
result is the reference's (`ge.ops` Cast through ge.graph.lowprec): C's conversions are numpy's
for every value the target type holds (float to integer truncates toward zero; a NaN or an
out-of-range value is undefined in C and not promised to match).  A float16/bfloat16 result is
always rounded from float32, so the sources are those float32 holds exactly or that numpy also
rounds through float32: float32, float16, bfloat16, bool and the 8/16-bit integers.
"""
from __future__ import annotations

from .cgen import C_TYPE, KernelSource, Unsupported, io_decls, kernel_file, numel
from .lowprec import CONVERT_C

__all__ = ["VERSION", "CAST_DTYPES", "render_cast"]

VERSION = 1
_INTS = ("DT_INT8", "DT_UINT8", "DT_INT16", "DT_UINT16", "DT_INT32", "DT_UINT32", "DT_INT64",
         "DT_UINT64")
CAST_DTYPES = ("DT_FLOAT", "DT_FLOAT16", "DT_BF16", "DT_DOUBLE", "DT_BOOL") + _INTS
# sources whose value float32 holds exactly: a float16/bfloat16 result rounds once, as numpy's
_EXACT_IN_F32 = ("DT_FLOAT", "DT_FLOAT16", "DT_BF16", "DT_BOOL", "DT_INT8", "DT_UINT8",
                 "DT_INT16", "DT_UINT16")
_READ = {"DT_FLOAT16": "ge_f16_to_f32(x0[i])", "DT_BF16": "ge_bf16_to_f32(x0[i])"}
_WRITE = {"DT_FLOAT16": "ge_f32_to_f16((float)({v}))", "DT_BF16": "ge_f32_to_bf16((float)({v}))",
          "DT_BOOL": "(unsigned char)(({v}) != 0)"}


def render_cast(sig) -> KernelSource:
    src, dst = sig.inputs[0], sig.outputs[0]
    if src.dtype not in CAST_DTYPES or dst.dtype not in CAST_DTYPES:
        raise Unsupported(f"cast {src.dtype} -> {dst.dtype}")
    if dst.dtype in ("DT_FLOAT16", "DT_BF16") and src.dtype not in _EXACT_IN_F32:
        raise Unsupported(f"cast {src.dtype} -> {dst.dtype} would round twice")
    if tuple(src.shape) != tuple(dst.shape) or any(d < 0 for d in dst.shape):
        raise Unsupported("cast changes or does not know the shape")
    value = _READ.get(src.dtype, "x0[i]")
    store = _WRITE.get(dst.dtype, f"({C_TYPE[dst.dtype]})({{v}})").format(v=value)
    body = [f"    for (int64_t i = 0; i < {numel(dst.shape)}; ++i) y0[i] = {store};"]
    return KernelSource(kernel_file(sig, "cast", VERSION, io_decls(sig), body,
                                    helpers=CONVERT_C.splitlines()))
