"""The vectorisable exp/erf of fastmath.py, through the kernels that use them (Erf, SoftmaxV2),
against the ge.ops reference kernels (libm / numpy in double)."""
import math

import numpy as np

from kernel_check import check_op

F32 = np.float32


def test_erf_over_its_whole_range():
    x = np.concatenate([np.linspace(-6, 6, 4001), [0.0, -0.0, 0.4999, 0.5, 0.5001, 3.999, 4.0,
                                                  1e-30, -1e-30, np.inf, -np.inf]]).astype(F32)
    got = check_op("Erf", [x], rtol=2e-7, atol=1e-7)[0]
    assert got[-2] == 1.0 and got[-1] == -1.0
    exact = np.array([math.erf(float(v)) for v in x[:-2]])
    assert np.abs(got[:-2] - exact).max() < 1.5e-7


def test_erf_keeps_nan():
    assert np.isnan(check_op("Erf", [np.array([np.nan, 1.0], F32)], atol=1e-7)[0][0])


def test_softmax_of_long_rows_with_large_range(rng):
    x = (rng.standard_normal((4, 12, 128)) * 30).astype(F32)
    check_op("SoftmaxV2", [x], {"axes": [-1]}, rtol=1e-5, atol=1e-7)


def test_gelu_v2_both_approximations(rng):
    x = (rng.standard_normal((4, 257)) * 3).astype(F32)
    check_op("GeluV2", [x], {"approximate": "none"}, rtol=1e-5, atol=1e-6)
    check_op("GeluV2", [x], {"approximate": "tanh"}, rtol=1e-5, atol=1e-6)
