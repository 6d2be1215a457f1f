"""Helpers shared by the kernel generators: C types, literals, broadcasting strides, dimension
coalescing, loop nests and the one kernel file template (the ABI of docs/kernel-abi.md).

Everything here is deterministic text: no time, path or PID ever reaches generated C.
"""
from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from typing import Optional

from ge import blas as blas_lib
from ge.graph.attr_names import ATTR_IMPL_MODE
from ge.kernel_abi import (ABI_VERSION, KERNEL_SYMBOL, SIGNATURE_SYMBOL, VERSION_SYMBOL,
                           WORKSPACE_SYMBOL)

__all__ = ["Unsupported", "KernelSource", "DataTemplate", "SIGNATURE_CAPACITY", "abi_patches",
           "fill", "C_TYPE", "ELEM_SIZE", "ABI_VERSION", "KERNEL_SYMBOL", "flit", "numel",
           "strides_of", "broadcast_strides", "coalesce", "loop_nest", "banner", "abi_symbols",
           "kernel_head", "kernel_file", "prelude", "require_dtypes", "hw_pair",
           "HIGH_PRECISION", "high_precision"]

HIGH_PRECISION = 0x4     # CANN's _op_impl_mode_enum bit for high_precision (docs/precision.md)


class Unsupported(Exception):
    """The generator cannot handle this signature; the op falls back to the AiCpu engine."""


WORKSPACE_TYPE = "unsigned long long"   # of WORKSPACE_SYMBOL: 8 bytes, the target's order


def fill(text: str, values: dict) -> str:
    """Fixed C text with its @NAME@ placeholders replaced by str(values[NAME]) (C's braces rule
    out str.format)."""
    for name, value in values.items():
        text = text.replace(f"@{name}@", str(value))
    return text


@dataclass(frozen=True)
class DataTemplate:
    """A kernel whose text differs from other kernels' only in the initial values of some
    data symbols (a convolution's plan, its signature, its workspace size): `text` is the
    kernel with placeholder values, `patches` the (symbol, bytes) of this kernel's values.
    build.py compiles `text` once per process and writes `patches` into a copy of it: the
    same bytes as compiling the kernel's own text (tests/opcompile/test_build.py)."""
    text: str
    patches: tuple


@dataclass(frozen=True)
class KernelSource:
    c_source: str
    workspace_bytes: int = 0
    needs_blas: bool = False
    template: Optional[DataTemplate] = None

    def __post_init__(self):
        # the workspace size is declared in the kernel itself (ABI 2): a loader checks the
        # memory plan against it, so a plan edited after compilation cannot overrun it
        decl = f"const {WORKSPACE_TYPE} {WORKSPACE_SYMBOL} = {int(self.workspace_bytes)}ull;\n"
        if WORKSPACE_SYMBOL not in self.c_source:
            object.__setattr__(self, "c_source", self.c_source + decl)


C_TYPE = {
    "DT_FLOAT": "float", "DT_DOUBLE": "double", "DT_BOOL": "unsigned char",
    "DT_INT8": "int8_t", "DT_UINT8": "uint8_t", "DT_INT16": "int16_t", "DT_UINT16": "uint16_t",
    "DT_INT32": "int32_t", "DT_UINT32": "uint32_t", "DT_INT64": "int64_t", "DT_UINT64": "uint64_t",
    "DT_FLOAT16": "uint16_t", "DT_BF16": "uint16_t",
}
ELEM_SIZE = {"DT_FLOAT": 4, "DT_DOUBLE": 8, "DT_BOOL": 1, "DT_INT8": 1, "DT_UINT8": 1,
             "DT_INT16": 2, "DT_UINT16": 2, "DT_INT32": 4, "DT_UINT32": 4, "DT_INT64": 8,
             "DT_UINT64": 8, "DT_FLOAT16": 2, "DT_BF16": 2}


def require_dtypes(sig, inputs: dict, outputs: dict) -> None:
    """inputs/outputs map slot -> allowed dtype names; absent optional inputs are skipped."""
    for slot, allowed in inputs.items():
        t = sig.inputs[slot] if slot < len(sig.inputs) else None
        if t is not None and t.dtype not in allowed:
            raise Unsupported(f"input {slot} dtype {t.dtype} (generator handles {allowed})")
    for slot, allowed in outputs.items():
        if sig.outputs[slot].dtype not in allowed:
            raise Unsupported(f"output {slot} dtype {sig.outputs[slot].dtype}")


def high_precision(sig) -> bool:
    """Whether the node asked for its high-precision variant (--op_select_implmode & co.);
    no attribute, or any other mode, selects the high-performance one."""
    return bool(int(sig.attr(ATTR_IMPL_MODE, 0) or 0) & HIGH_PRECISION)


def flit(value: float) -> str:
    """An exact float32 C literal of a Python float (rounded to float32 as numpy would)."""
    v = float(value)
    if math.isnan(v):
        return "NAN"
    if math.isinf(v):
        return "INFINITY" if v > 0 else "(-INFINITY)"
    return f"((float){v.hex()})"


def hw_pair(values, what: str) -> tuple:
    """(h, w) of a 2-D window attribute given as (h, w) or in NCHW order (n, c, h, w)."""
    values = [int(v) for v in values]
    if len(values) == 4:
        return values[2], values[3]
    if len(values) == 2:
        return values[0], values[1]
    raise Unsupported(f"{what} must have 2 or 4 values")


def numel(shape) -> int:
    n = 1
    for d in shape:
        n *= int(d)
    return n


def strides_of(shape) -> list:
    out, acc = [], 1
    for d in reversed(shape):
        out.append(acc)
        acc *= int(d)
    return out[::-1]


def broadcast_strides(in_shape, out_shape) -> list:
    """Element strides of `in_shape` viewed as `out_shape` (numpy broadcasting, 0 = repeated)."""
    in_shape, out_shape = list(in_shape), list(out_shape)
    if len(in_shape) > len(out_shape):
        raise Unsupported(f"cannot broadcast {in_shape} to {out_shape}")
    padded = [1] * (len(out_shape) - len(in_shape)) + in_shape
    strides = strides_of(padded)
    out = []
    for d_in, d_out, s in zip(padded, out_shape, strides):
        if d_in == d_out:
            out.append(s if d_in != 1 else 0)
        elif d_in == 1:
            out.append(0)
        else:
            raise Unsupported(f"cannot broadcast {in_shape} to {out_shape}")
    return out


def coalesce(dims, strides_list):
    """Merge adjacent dims that every operand walks contiguously; drop size-1 dims."""
    keep = [i for i, d in enumerate(dims) if d != 1]
    dims = [dims[i] for i in keep]
    strides_list = [[s[i] for i in keep] for s in strides_list]
    if not dims:
        return [1], [[0] for _ in strides_list]
    out_dims, out_strides = [dims[0]], [[s[0]] for s in strides_list]
    for k in range(1, len(dims)):
        if all(os[-1] == s[k] * dims[k] for os, s in zip(out_strides, strides_list)):
            out_dims[-1] *= dims[k]
            for os, s in zip(out_strides, strides_list):
                os[-1] = s[k]
        else:
            out_dims.append(dims[k])
            for os, s in zip(out_strides, strides_list):
                os.append(s[k])
    return out_dims, out_strides


def loop_nest(dims, body: list, var: str = "i", indent: int = 1) -> list:
    """Nested for loops over `dims` with indices {var}0, {var}1, ... around `body` lines."""
    lines = []
    pad = "    " * indent
    for k, d in enumerate(dims):
        lines.append(f"{pad}{'    ' * k}for (int64_t {var}{k} = 0; {var}{k} < {d}; ++{var}{k}) {{")
    inner = "    " * (indent + len(dims))
    lines += [inner + b for b in body]
    for k in reversed(range(len(dims))):
        lines.append(f"{pad}{'    ' * k}}}")
    return lines


def offset_expr(strides, var: str = "i") -> str:
    terms = [f"{var}{k} * {s}" for k, s in enumerate(strides) if s != 0]
    return " + ".join(terms) if terms else "0"


def _c_string(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


# What a generated kernel uses of the C library, declared here instead of `#include <math.h>`,
# `<string.h>`, `<stdint.h>` and `<cblas.h>`: parsing those headers cost about as much as
# compiling a small kernel (docs/kernel-abi.md, "The binary").  The integer types are the
# compiler's own predefined ones, i.e. those of <stdint.h> on every target; the libm functions
# are the ISO C ones, so the compiler knows them as builtins; tests/opcompile/test_build.py
# compiles these declarations after the real headers to show that they agree.
INT_TYPES = ("int8_t", "int16_t", "int32_t", "int64_t",
             "uint8_t", "uint16_t", "uint32_t", "uint64_t")
LIBM_UNARY = ("exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "cbrt",
              "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
              "asinh", "acosh", "atanh", "erf", "erfc", "fabs", "floor", "ceil", "round",
              "rint", "nearbyint", "trunc")
LIBM_BINARY = ("pow", "fmin", "fmax", "fmod", "atan2", "hypot", "copysign")
STRING_DECLS = ("void *memcpy(void *restrict, const void *restrict, size_t);",
                "void *memmove(void *, const void *, size_t);",
                "void *memset(void *, int, size_t);")
# macro -> definition, each only where no header defined it first
MACROS = {"NULL": "((void *)0)", "NAN": "(__builtin_nanf(\"\"))", "INFINITY": "(__builtin_inff())",
          "isnan(x)": "__builtin_isnan(x)", "isinf(x)": "__builtin_isinf(x)",
          "isfinite(x)": "__builtin_isfinite(x)"}
# the part of the scipy-openblas32 cblas.h the kernels call (its blasint is int)
BLAS_ENUMS = {"CBLAS_ORDER": {"CblasRowMajor": 101, "CblasColMajor": 102},
              "CBLAS_TRANSPOSE": {"CblasNoTrans": 111, "CblasTrans": 112}}
BLAS_DECLS = (f"void {blas_lib.symbol('cblas_sgemm')}(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, "
              "enum CBLAS_TRANSPOSE, int, int, int, float, const float *, int, const float *, "
              "int, float, float *, int);",
              # products of one row (M = 1): no packing of the other operand (gen_matmul)
              f"void {blas_lib.symbol('cblas_sgemv')}(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, "
              "int, int, float, const float *, int, const float *, int, float, float *, int);",
              # the thread count, read and set by the kernels that split their own work (jobs.py)
              f"int {blas_lib.symbol('openblas_get_num_threads')}(void);",
              f"void {blas_lib.symbol('openblas_set_num_threads')}(int);")


def libc_decls() -> list:
    """Types, string and math declarations and macros of the prelude (no guard)."""
    lines = ["typedef __SIZE_TYPE__ size_t;"]
    lines += [f"typedef __{t[:-2].upper()}_TYPE__ {t};" for t in INT_TYPES]
    lines += list(STRING_DECLS)
    lines += [f"double {f}(double); float {f}f(float);" for f in LIBM_UNARY]
    lines += [f"double {f}(double, double); float {f}f(float, float);" for f in LIBM_BINARY]
    for macro, value in MACROS.items():
        lines += [f"#ifndef {macro.split('(')[0]}", f"#define {macro} {value}", "#endif"]
    return lines


def prelude(blas: bool = False) -> list:
    """The declarations every generated kernel starts with (guarded: a wrapped kernel, whose
    source holds another kernel's, declares them once)."""
    lines = ["#ifndef GE_KERNEL_PRELUDE", "#define GE_KERNEL_PRELUDE"] + libc_decls() + ["#endif"]
    if blas:
        lines += ["#ifndef GE_KERNEL_BLAS", "#define GE_KERNEL_BLAS"]
        lines += [f"enum {name} {{{', '.join(f'{k} = {v}' for k, v in values.items())}}};"
                  for name, values in BLAS_ENUMS.items()]
        lines += list(BLAS_DECLS) + ["#endif"]
    return lines


SYSTEM_HEADERS = ["#include <stddef.h>", "#include <stdint.h>", "#include <string.h>",
                  "#include <math.h>"]


def banner(sig, family: str, version: int) -> str:
    return (f"/* ge kernel: {family} generator v{version}, op {sig.op_type}. "
            "Generated; do not edit. */")


SIGNATURE_CAPACITY = 2048      # bytes of a templated kernel's signature array (DataTemplate)


def abi_patches(sig, workspace_bytes: int) -> Optional[tuple]:
    """The (symbol, bytes) of the signature (in a SIGNATURE_CAPACITY array: abi_symbols) and
    the workspace size (KernelSource) of a templated kernel of `sig`, as the C compiler lays
    them out; None when the signature does not fit the array."""
    text = sig.canonical()
    if not text.isascii() or len(text) >= SIGNATURE_CAPACITY:
        return None
    return ((SIGNATURE_SYMBOL, text.encode("ascii").ljust(SIGNATURE_CAPACITY, b"\0")),
            (WORKSPACE_SYMBOL, struct.pack("=Q", int(workspace_bytes))))


def abi_symbols(sig, signature: Optional[str] = None, capacity: int = 0) -> list:
    """The ABI version and signature symbols of a kernel of `sig` (or of the text
    `signature`), the signature in an array of `capacity` bytes (0: its own length)."""
    text = sig.canonical() if signature is None else signature
    return ["",
            f"const unsigned int {VERSION_SYMBOL} = {ABI_VERSION}u;",
            f'const char {SIGNATURE_SYMBOL}[{capacity or ""}] = "{_c_string(text)}";',
            ""]


def kernel_head(sig, family: str, version: int, blas: bool = False,
                system_headers: bool = False, signature: Optional[str] = None,
                capacity: int = 0) -> list:
    """The lines every kernel file opens with: the prelude (or, for C written by users, the
    system headers it was promised: docs/custom-ops.md), ABI version and signature symbols."""
    declared = SYSTEM_HEADERS if system_headers else prelude(blas)
    return [banner(sig, family, version)] + declared + abi_symbols(sig, signature, capacity)


def kernel_file(sig, family: str, version: int, decls: list, body: list,
                blas: bool = False, helpers: list = (), signature: Optional[str] = None,
                capacity: int = 0) -> str:
    """The whole translation unit of one kernel (docs/kernel-abi.md), less the workspace
    declaration that KernelSource appends; `signature`/`capacity`: abi_symbols'."""
    head = kernel_head(sig, family, version, blas, signature=signature,
                       capacity=capacity) + list(helpers)
    fn = [f"int {KERNEL_SYMBOL}(void *const *inputs, void *const *outputs, void *workspace)",
          "{"]
    fn += ["    " + d for d in decls]
    fn += ["    (void)inputs; (void)outputs; (void)workspace;"]
    fn += body
    fn += ["    return 0;", "}", ""]
    return "\n".join(head + fn)


def io_decls(sig, in_types: dict = None, out_types: dict = None) -> list:
    """`const T *restrict x<k> = inputs[k];` / `T *restrict y<k> = outputs[k];` for every
    present slot: outputs and workspace never overlap inputs or each other (docs/kernel-abi.md),
    so the compiler may vectorise without run-time overlap checks."""
    decls = []
    for k, t in enumerate(sig.inputs):
        if t is not None:
            ct = C_TYPE[t.dtype]
            decls.append(f"const {ct} *restrict x{k} = (const {ct} *)inputs[{k}];")
    for k, t in enumerate(sig.outputs):
        ct = C_TYPE[t.dtype]
        decls.append(f"{ct} *restrict y{k} = ({ct} *)outputs[{k}];")
    return decls
