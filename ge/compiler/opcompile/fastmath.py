"""C helpers for exp, tanh and erf without libm calls, so that the loops around them vectorise
on the baseline ISA (glibc's expf / tanhf / erff are scalar calls: they made the activations
half of an LSTM step, and Erf and Softmax a third of a BERT run).  Their compare-and-select
vectorises because kernels are built with -fno-trapping-math (build.py); without it GCC keeps
them as branches and the loops stay scalar.  A generator that uses a `ge_*` function adds
`helpers_for(expression)` to its kernel file.

exp: round x*log2(e) to n (to nearest, ties to even), r = x - n*ln2 (ln2 split in two), a
degree-6 polynomial for e^r and 2^n from the exponent bits; x is clamped to [-87, 88] (no
overflow, no denormals).
`ge_exp_ieee` adds the IEEE ends: NaN stays NaN, below -87 is 0, above 88 is +inf.
tanh: an odd polynomial below |x| = 0.625, 1 - 2 / (e^2x + 1) above.
erf: the Maclaurin series to x^13 below |x| = 0.5 (relative error < 1e-9 there); above,
1 - t*exp(-x^2 + P(t)) with t = 1 / (1 + |x|/2) (Numerical Recipes' erfc, fractional error
< 1.2e-7; from |x| = 4 on, 1 - erfc rounds to +-1).  GELU (`ge_gelu_erf`) evaluates that erfc
once, at every x: x/2 erfc(|x|/sqrt2) on the negative side, where 1 + erf would cancel, x minus
it on the positive side.  All within a few float ulp of libm.
"""
from __future__ import annotations

__all__ = ["FAST_MATH", "WIDE", "WIDE_DEFINE", "helpers_for"]

WIDE = "GE_WIDE"    # a kernel function whose loops are also compiled for AVX2
# its definition: FAST_MATH carries it; a kernel with WIDE loops and no fast-math helpers
# (max pooling) takes it alone
WIDE_DEFINE = """\
/* A GE_WIDE function's loops (the fast-math helpers', max pooling's), in a second copy for
   AVX2 (without FMA: the same roundings, the same bits), chosen when the kernel is loaded
   (libgcc's CPU check, an ifunc: glibc only, which GCC marks __gnu_linux__; musl has none):
   SoftmaxV2 rows 2.4x faster than on the baseline ISA's 4 lanes, max pooling 2x */
#ifndef GE_WIDE
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__gnu_linux__)
#define GE_WIDE __attribute__((target_clones("avx2", "default")))
#else
#define GE_WIDE
#endif
#endif
"""
FAST_MATH = WIDE_DEFINE + """\
static inline float ge_exp(float x)
{
    x = x < -87.0f ? -87.0f : (x > 88.0f ? 88.0f : x);
    /* t + 1.5*2^23 - 1.5*2^23 rounds t to an integer without a select: with one, GCC
       evaluated the whole polynomial once per arm */
    const float t = x * 1.44269504088896341f;
    const float nf = (t + 12582912.0f) - 12582912.0f;
    const int32_t n = (int32_t)nf;
    const float r = (x - nf * 0.693359375f) + nf * 2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    union { int32_t i; float f; } scale;
    scale.i = (n + 127) << 23;
    return p * scale.f;
}

static inline float ge_exp_ieee(float x)
{
    const float e = ge_exp(x != x ? 0.0f : x);
    return x != x ? x : (x < -87.0f ? 0.0f : (x > 88.0f ? INFINITY : e));
}

static inline float ge_tanh(float x)
{
    const float z = x * x;
    const float small = ((((-5.70498872745e-3f * z + 2.06390887954e-2f) * z
                           - 5.37397155531e-2f) * z + 1.33314422036e-1f) * z
                         - 3.33332819422e-1f) * z * x + x;
    const float big = 1.0f - 2.0f / (ge_exp(2.0f * x) + 1.0f);
    return (x > -0.625f && x < 0.625f) ? small : big;
}

static inline float ge_erfc_tail(float a)
{
    /* erfc(a) for a >= 0 (ge_erf uses it from a = 0.5); clamped at 9, where erfc is below
       1e-36 */
    const float b = a < 9.0f ? a : 9.0f;
    const float t = 1.0f / (1.0f + 0.5f * b);
    const float poly = -1.26551223f + t * (1.00002368f + t * (0.37409196f + t * (0.09678418f
        + t * (-0.18628806f + t * (0.27886807f + t * (-1.13520398f + t * (1.48851587f
        + t * (-0.82215223f + t * 0.17087277f))))))));
    return t * ge_exp(-b * b + poly);
}
static inline float ge_erf(float x)
{
    const float a = fabsf(x);
    const float z = x * x;
    const float series = x * (1.12837916709551257f + z * (-0.37612638903183752f
        + z * (0.11283791670955126f + z * (-0.02686617064513125f + z * (0.00522397762544218f
        + z * (-0.00085483270234508f + z * 0.00012055332981789f))))));
    const float tail = 1.0f - ge_erfc_tail(a);
    const float big = x < 0.0f ? -tail : tail;
    return x != x ? x : (a < 0.5f ? series : big);
}
static inline float ge_gelu_erf(float x)
{
    /* x/2 (1 + erf(x/sqrt2)) from one erfc, a = |x|/sqrt2: x/2 erfc(a) for x < 0 (1 + erf
       would cancel there), x - x/2 erfc(a) for x >= 0.  Numerical Recipes' erfc holds its
       fractional error over all a >= 0, and neither form cancels, so no series near 0 */
    const float half_tail = 0.5f * x * ge_erfc_tail(fabsf(x) * 0.70710678118654752f);
    return x < 0.0f ? half_tail : x - half_tail;
}
"""


def helpers_for(*expressions: str) -> list:
    """[FAST_MATH] when any expression calls a ge_* helper, else []."""
    return [FAST_MATH] if any("ge_" in e for e in expressions) else []
