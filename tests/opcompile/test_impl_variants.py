"""High-precision vs high-performance kernel variants (docs/precision.md, "Kernel variants"):
for every op type with two variants (generators.VARIANT_OPS), the compiled kernels of both
variants run on inputs chosen where they part; they must give different bits, the
high-precision one must be at least as close to the float64 reference as the high-performance
one (max abs error), and both must be within the tolerance documented for their variant.
Plus: the variant is part of the signature (and so of the cache key), float16 keeps working
for both, and explicit high_performance renders the default kernel."""
from __future__ import annotations

import math

import numpy as np
import pytest

from ge.compiler.opcompile.generators import VARIANT_OPS, render
from ge.compiler.opcompile.lowprec import promote_signature
from ge.graph.attr_names import ATTR_IMPL_MODE
from ge.ops import registry
from kernel_check import full_attrs, make_sig, run_compiled

F32 = np.float32
HIGH_PERFORMANCE, HIGH_PRECISION = 0x2, 0x4
TINY = np.finfo(F32).tiny
ULP = 2.0 ** -23                       # float32 unit in the last place, relative


def _rng(op):
    return np.random.default_rng(sum(op.encode()))


def _cancelling(rng, rows, n):
    """Rows of large values that cancel exactly plus small ones: where a plain double sum
    loses bits that a compensated one keeps."""
    big = (rng.standard_normal((rows, n // 4)) * 1e12).astype(F32)
    small = rng.standard_normal((rows, n // 2)).astype(F32)
    x = np.concatenate([big, small, -big], axis=1)
    return np.stack([rng.permutation(r) for r in x])


def _fsum_rows(x, mean):
    s = np.array([math.fsum(r) for r in x.reshape(x.shape[0], -1)])
    return s / x[0].size if mean else s


def _unary(lo, hi, n=4096):
    return lambda rng: [rng.uniform(lo, hi, n).astype(F32)]


BIG = 1 << 16    # libm's expf / logf / powf are within ~0.5-0.8 ulp: they part from the
                 # double-evaluated ones on a few inputs in ten thousand


# op -> (inputs(rng), attributes): inputs where the variants part
CASES = {
    "Exp": (_unary(-20, 20, BIG), {}),
    "Log": (lambda rng: [np.exp(rng.uniform(-20, 20, BIG)).astype(F32)], {}),
    "Erf": (_unary(-4, 4), {}),
    "GeluV2": (_unary(-8, 8), {"approximate": "none"}),
    "Sigmoid": (_unary(-15, 15), {}),
    "Tanh": (_unary(-5, 5), {}),
    "Rsqrt": (lambda rng: [np.exp(rng.uniform(-20, 20, 4096)).astype(F32)], {}),
    "Pow": (lambda rng: [rng.uniform(0.1, 8, BIG).astype(F32),
                         rng.uniform(-6, 6, BIG).astype(F32)], {}),
    "SoftmaxV2": (lambda rng: [(rng.standard_normal((16, 256)) * 6).astype(F32)],
                  {"axes": [-1]}),
    "ReduceSum": (lambda rng: [_cancelling(rng, 8, 512), np.array([1], np.int32)],
                  {"keep_dims": False}),
    "ReduceMean": (lambda rng: [_cancelling(rng, 8, 512), np.array([1], np.int32)],
                   {"keep_dims": False}),
    "GlobalAveragePool": (lambda rng: [_cancelling(rng, 8, 512).reshape(2, 4, 16, 32)], {}),
    "LayerNorm": (lambda rng: [(3e6 + rng.standard_normal((8, 256)) * 4).astype(F32),
                               np.ones(256, F32), np.zeros(256, F32)],
                  {"begin_norm_axis": 1, "begin_params_axis": 1}),
}

# Documented tolerances (docs/precision.md): max |error| / max |reference| per variant.
# Elementwise high precision: rounded once from double, within one float ulp.  High
# performance: libm's float functions and the fastmath polynomials, a few ulp.  Sums: the
# compensated sum is exact to double rounding; the plain double sum is within n * 2^-53 of the
# sum of magnitudes (here 1e12 against a result of ~10: a bound relative to the inputs).
# LayerNorm: y is within float rounding (two passes); one pass loses the variance's relative
# accuracy as n * 2^-53 * mean^2 / variance (n = row length).
ELEMENTWISE_TOL = {HIGH_PRECISION: 1.01 * ULP, HIGH_PERFORMANCE: 8 * ULP}
TOLERANCE = {
    "SoftmaxV2": {HIGH_PRECISION: 2 * ULP, HIGH_PERFORMANCE: 8 * ULP},
    "LayerNorm": {HIGH_PRECISION: 2 * ULP},
}
SUM_OPS = {"ReduceSum": False, "ReduceMean": True, "GlobalAveragePool": True}


def _reference(op, inputs, attrs):
    if op in SUM_OPS:            # exact sums (numpy's pairwise double sum is not)
        x = inputs[0].astype(np.float64)
        rows = x.reshape(-1, x.shape[-2] * x.shape[-1]) if op == "GlobalAveragePool" else x
        return _fsum_rows(rows, SUM_OPS[op]).reshape(-1)
    ref = registry.get(op).kernel([np.asarray(a, np.float64) if a.dtype == F32 else a
                                   for a in inputs], dict(attrs))
    return np.asarray(ref[0], np.float64).reshape(-1)


def _run(op, inputs, attrs, mode):
    attrs = dict(attrs)
    if mode is not None:
        attrs[ATTR_IMPL_MODE] = mode
    outs = registry.get(op).kernel(list(inputs), full_attrs(op, dict(attrs)))
    outs = [np.asarray(o).astype(F32) for o in outs]
    sig = make_sig(op, inputs, outs, full_attrs(op, attrs))
    return sig, run_compiled(sig, inputs)[0].astype(np.float64).reshape(-1)


def _tolerance(op, mode, inputs, ref):
    if op in SUM_OPS:
        x = np.abs(inputs[0].astype(np.float64))
        n = x[0].size
        if mode == HIGH_PRECISION:
            return 2 * ULP * np.max(np.abs(ref)) + TINY
        return n * 2.0 ** -53 * np.max(x.reshape(len(x), -1).sum(axis=1)) + ULP * np.max(
            np.abs(ref))
    if op == "LayerNorm" and mode == HIGH_PERFORMANCE:
        x = inputs[0].astype(np.float64)
        cond = np.max(x.mean(axis=1) ** 2 / x.var(axis=1))
        return (x.shape[1] * 2.0 ** -53 * cond + 2 * ULP) * np.max(np.abs(ref))
    return TOLERANCE.get(op, ELEMENTWISE_TOL)[mode] * np.max(np.abs(ref))


def test_every_variant_op_has_a_case():
    assert set(CASES) == set(VARIANT_OPS)


@pytest.mark.parametrize("op", sorted(CASES))
def test_variants_differ_and_high_precision_is_closer(op):
    make, attrs = CASES[op]
    inputs = make(_rng(op))
    ref = _reference(op, inputs, full_attrs(op, attrs))
    sig_perf, perf = _run(op, inputs, attrs, None)
    sig_prec, prec = _run(op, inputs, attrs, HIGH_PRECISION)
    assert sig_perf.canonical() != sig_prec.canonical()
    assert render(sig_perf).c_source != render(sig_prec).c_source
    assert not np.array_equal(perf.view(np.int64), prec.view(np.int64)), op
    err_perf = np.max(np.abs(perf - ref))
    err_prec = np.max(np.abs(prec - ref))
    assert err_prec <= err_perf, (op, err_prec, err_perf)
    assert err_prec <= _tolerance(op, HIGH_PRECISION, inputs, ref), (op, err_prec)
    assert err_perf <= _tolerance(op, HIGH_PERFORMANCE, inputs, ref), (op, err_perf)


@pytest.mark.parametrize("op", ["Exp", "SoftmaxV2", "LayerNorm", "ReduceSum"])
def test_explicit_high_performance_is_the_default_kernel(op):
    make, attrs = CASES[op]
    inputs = make(_rng(op))
    sig_default, default = _run(op, inputs, attrs, None)
    sig_explicit, explicit = _run(op, inputs, attrs, HIGH_PERFORMANCE)
    np.testing.assert_array_equal(default, explicit)
    body = render(sig_default).c_source.split("ge_kernel_signature")[-1]
    assert body.split("\n", 1)[1] == render(sig_explicit).c_source.split(
        "ge_kernel_signature")[-1].split("\n", 1)[1]


@pytest.mark.parametrize("op", ["Erf", "SoftmaxV2", "LayerNorm"])
def test_float16_serves_both_variants(op):
    """The float16 wrapper wraps the float32 kernel of the node's variant."""
    make, attrs = CASES[op]
    inputs = make(_rng(op))
    if op == "LayerNorm":
        inputs[0] = (inputs[0] - 3e6).astype(F32)
    low = [a.astype(np.float16) if a.dtype == F32 else a for a in inputs]
    sources = []
    for mode in (None, HIGH_PRECISION):
        attrs_m = dict(attrs, **({ATTR_IMPL_MODE: mode} if mode else {}))
        outs = registry.get(op).kernel([a.astype(np.float64) for a in low],
                                       full_attrs(op, dict(attrs_m)))
        outs = [np.asarray(o).astype(np.float16) for o in outs]
        sig = make_sig(op, low, outs, full_attrs(op, attrs_m))
        assert promote_signature(sig).attr(ATTR_IMPL_MODE) == mode
        sources.append(render(sig).c_source)
        got = run_compiled(sig, low)[0].astype(np.float64)
        np.testing.assert_allclose(got, outs[0].astype(np.float64), rtol=2e-3, atol=2e-3)
    assert sources[0] != sources[1]
