"""float16 / bfloat16 kernels from the float32 generators, for every generator row at once.

A generator is first asked for the node's own signature.  When it refuses one that has
float16/bfloat16 tensors, it is asked again for the same signature with those tensors made
float32; the kernel is then that float32 kernel (a static function of the same translation
unit) inside a wrapper that widens each low-precision input into the workspace (exact), calls
it, and rounds each low-precision output from its float32 buffer in the workspace to nearest,
ties to even (ge.graph.lowprec has the same rule for the reference kernels).  Matrix products
and convolutions thus take float16 operands and accumulate in float32, as the device's cube
unit does.  Workspace: the float32 kernel's own first, then one 64-byte-aligned float32 buffer
per converted slot.  docs/kernel-abi.md, "Low precision".
"""
from __future__ import annotations

from dataclasses import replace

from ge.kernel_abi import (CONSTANT_INPUTS_SYMBOL, KERNEL_SYMBOL, PREPARE_SYMBOL,
                           PREPARED_SYMBOL, SIGNATURE_SYMBOL, STATE_SYMBOL, VERSION_SYMBOL,
                           WORKSPACE_SYMBOL)

from .cgen import KernelSource, Unsupported, abi_symbols, banner, numel, prelude

__all__ = ["VERSION", "LOW_DTYPES", "REFERENCE_ULP", "CONVERT_C", "with_low_precision",
           "promote_signature", "has_low_precision", "wrap"]

VERSION = 1
LOW_DTYPES = ("DT_FLOAT16", "DT_BF16")
INNER = "ge_f32_kernel"          # the float32 kernel inside a wrapper (internal linkage)
_ALIGN = 64

# Exact widening and round-to-nearest-even narrowing, bit for bit numpy's float32 <-> float16
# conversions: a NaN keeps its sign and the top of its payload (a quiet NaN stays quiet; a
# payload that would vanish becomes 1), overflow gives infinity, float16 subnormals are rounded
# exactly.  bfloat16: a NaN becomes the quiet NaN of its top 16 bits.
CONVERT_C = r"""
static inline float ge_bits_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline uint32_t ge_f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
/* c ? a : b with masks: no branch for the compiler to keep around the float operations */
static inline uint32_t ge_sel(int c, uint32_t a, uint32_t b)
{
    const uint32_t m = 0u - (uint32_t)(c != 0);
    return (a & m) | (b & ~m);
}

/* Branch-free (the conversion loops vectorise): a normal half moves its exponent by 112; an
 * infinity/NaN gets the all-ones exponent; a subnormal half is m * 2^-24, computed exactly as
 * (2^-14 + m * 2^-24) - 2^-14 in float arithmetic. */
static inline float ge_f16_to_f32(uint16_t h)
{
    const uint32_t em = (uint32_t)(h & 0x7fffu) << 13, exp = em & 0x0f800000u;
    const uint32_t normal = em + 0x38000000u;
    const uint32_t special = em + 0x70000000u;
    const uint32_t sub = ge_f32_bits(ge_bits_f32(em + 0x38800000u) - ge_bits_f32(0x38800000u));
    const uint32_t mag = ge_sel(exp == 0x0f800000u, special, ge_sel(exp == 0, sub, normal));
    return ge_bits_f32(mag | ((uint32_t)(h & 0x8000u) << 16));
}

/* Normal results round by adding 0xfff + the lowest kept bit; results below 2^-14 are rounded
 * by the FPU (to nearest even, the default mode) when added to 0.5: the half's subnormal bits
 * land in the float's low mantissa bits.  >= 65520 gives infinity; a NaN keeps the top of its
 * payload, never zero (numpy's rule). */
static inline uint16_t ge_f32_to_f16(float f)
{
    const uint32_t x = ge_f32_bits(f), sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
    const uint32_t nan = 0x7c00u + ((ax & 0x7fffffu) >> 13);
    const uint32_t big = ge_sel(ax > 0x7f800000u, ge_sel(nan == 0x7c00u, 0x7c01u, nan), 0x7c00u);
    const uint32_t r = ax - 0x38000000u;
    const uint32_t normal = (r + 0xfffu + ((r >> 13) & 1u)) >> 13;
    const uint32_t sub = ge_f32_bits(ge_bits_f32(ax) + 0.5f) - 0x3f000000u;
    const uint32_t mag = ge_sel(ax >= 0x477ff000u, big, ge_sel(ax >= 0x38800000u, normal, sub));
    return (uint16_t)(sign | mag);
}

static inline float ge_bf16_to_f32(uint16_t b)
{
    return ge_bits_f32((uint32_t)b << 16);
}

static inline uint16_t ge_f32_to_bf16(float f)
{
    const uint32_t x = ge_f32_bits(f);
    const uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
    return (uint16_t)ge_sel((x & 0x7fffffffu) > 0x7f800000u, (x >> 16) | 0x40u, rounded);
}
"""
# Ops whose float16/bfloat16 kernel may differ from the reference kernel by up to this many
# units in the last place of the dtype (docs/kernel-abi.md lists them and why): their float32
# kernel and reference already differ in the last float32 bits, and a float32 difference can
# straddle a rounding boundary of the narrower type.  Every other op agrees bit for bit.
REFERENCE_ULP = {op: 1 for op in (
    # libm (expf, logf, sinf, ...) or fastmath.py's polynomials (Erf, GeluV2, SoftmaxV2) in the
    # kernel, numpy's own implementations in the reference
    "Exp", "Log", "Pow", "Erf", "GeluV2", "Sin", "Cos", "Tanh", "Sigmoid", "Softplus", "Mish",
    "SoftmaxV2",
    # the reference evaluates in float64 and rounds once; the kernel evaluates in float32
    "Elu", "Selu", "HardSigmoid", "HardSwish", "Softsign",
    # summation: the kernel accumulates in double in input order, numpy sums pairwise in float32
    "ReduceSum",
    # the recurrent kernels' polynomial exp / tanh (gen_recurrent: a few float32 ulp from libm)
    "CommonLSTM", "CommonGRU", "CommonRNN")}

_WIDEN = {"DT_FLOAT16": "ge_f16_to_f32", "DT_BF16": "ge_bf16_to_f32"}
_NARROW = {"DT_FLOAT16": "ge_f32_to_f16", "DT_BF16": "ge_f32_to_bf16"}
# (a wrapper exports no prepared-constants entries: its inner kernel's take float32 constants)
_RENAMED = {KERNEL_SYMBOL: INNER, VERSION_SYMBOL: "ge_f32_abi_version",
            SIGNATURE_SYMBOL: "ge_f32_signature", WORKSPACE_SYMBOL: "ge_f32_workspace_bytes",
            STATE_SYMBOL: "ge_f32_state_bytes", CONSTANT_INPUTS_SYMBOL: "ge_f32_constant_inputs",
            PREPARE_SYMBOL: "ge_f32_prepare", PREPARED_SYMBOL: "ge_f32_prepared"}


def has_low_precision(sig) -> bool:
    return any(t is not None and t.dtype in LOW_DTYPES for t in sig.inputs + sig.outputs)


def promote_signature(sig):
    """The signature with every float16/bfloat16 tensor made float32."""
    def up(t):
        return t if t is None or t.dtype not in LOW_DTYPES else replace(t, dtype="DT_FLOAT")
    return replace(sig, inputs=tuple(up(t) for t in sig.inputs),
                   outputs=tuple(up(t) for t in sig.outputs))


def _align(n: int) -> int:
    return (n + _ALIGN - 1) // _ALIGN * _ALIGN


def _staged(tensors, side: str, offset: int) -> tuple:
    """(pointers the float32 kernel gets, conversion loops, workspace end) for one side
    ("inputs" widened into the workspace before the call, "outputs" narrowed from it after)."""
    ptrs, loops = [], []
    for k, t in enumerate(tensors):
        if t is None or t.dtype not in LOW_DTYPES:
            ptrs.append(f"{side}[{k}]")
            continue
        n = numel(t.shape)
        ptrs.append(f"ws + {offset}")
        if side == "inputs":
            loops += [f"    {{ const uint16_t *s = (const uint16_t *)inputs[{k}]; "
                      f"float *d = (float *)(ws + {offset});",
                      f"      for (int64_t i = 0; i < {n}; ++i) "
                      f"d[i] = {_WIDEN[t.dtype]}(s[i]); }}"]
        else:
            loops += [f"    {{ const float *s = (const float *)(ws + {offset}); "
                      f"uint16_t *d = (uint16_t *)outputs[{k}];",
                      f"      for (int64_t i = 0; i < {n}; ++i) "
                      f"d[i] = {_NARROW[t.dtype]}(s[i]); }}"]
        offset = _align(offset + 4 * n)
    return ptrs, loops, offset


def wrap(sig, inner: KernelSource) -> KernelSource:
    """The kernel of `sig` around `inner`, the float32 kernel of promote_signature(sig)."""
    in_ptrs, convert_in, offset = _staged(sig.inputs, "inputs", _align(inner.workspace_bytes))
    out_ptrs, convert_out, offset = _staged(sig.outputs, "outputs", offset)
    text = [banner(sig, "lowprec", VERSION)] + prelude(inner.needs_blas) + [
        f"static int {INNER}(void *const *inputs, void *const *outputs, void *workspace);",
        "/* the float32 kernel, its ABI symbols renamed */"]
    text += [f"#define {s} {renamed}" for s, renamed in _RENAMED.items()]
    text += [inner.c_source]
    text += [f"#undef {s}" for s in _RENAMED]
    text += abi_symbols(sig)
    text += [CONVERT_C]
    text += [f"int {KERNEL_SYMBOL}(void *const *inputs, void *const *outputs, void *workspace)",
             "{",
             "    char *ws = (char *)workspace;",
             f"    void *in32[] = {{{', '.join(in_ptrs) or 'NULL'}}};",
             f"    void *out32[] = {{{', '.join(out_ptrs) or 'NULL'}}};",
             "    (void)ws;"]
    text += convert_in
    text += [f"    const int rc = {INNER}(in32, out32, workspace);",
             "    if (rc != 0) return rc;"]
    text += convert_out
    text += ["    return 0;", "}",
             f"const unsigned long long {WORKSPACE_SYMBOL} = {offset}ull;", ""]
    return KernelSource("\n".join(text), workspace_bytes=offset, needs_blas=inner.needs_blas)


def with_low_precision(renderer):
    """`renderer` (OpSignature -> KernelSource) that also serves float16/bfloat16 signatures
    through its float32 kernel when it does not handle them itself."""
    def render(sig) -> KernelSource:
        try:
            return renderer(sig)
        except Unsupported as native:
            if not has_low_precision(sig):
                raise
            try:
                inner = renderer(promote_signature(sig))
            except Unsupported as exc:
                raise Unsupported(f"{native}; with float32 tensors: {exc}") from None
            return wrap(sig, inner)
    render.__wrapped__ = renderer
    render.__name__ = getattr(renderer, "__name__", "render")
    return render
