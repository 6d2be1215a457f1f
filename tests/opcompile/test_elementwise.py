"""Elementwise generator vs the ge.ops reference kernels: every op in the table, broadcasting
shapes, attributes, bool outputs, select and N-ary sums."""
import numpy as np
import pytest

from ge.compiler.opcompile.gen_elementwise import ELEMENTWISE
from kernel_check import check_op

F32 = np.float32
UNARY = sorted(op for op, row in ELEMENTWISE.items() if row.arity == 1 and not row.slots)
POSITIVE = {"Sqrt", "Rsqrt", "Log", "Reciprocal"}
UNARY_ATTRS = {"Muls": {"value": 1.5}, "Adds": {"value": -0.25},
               "LeakyRelu": {"negative_slope": 0.1}, "Elu": {"alpha": 0.5},
               "HardSigmoid": {"alpha": 0.2, "beta": 0.5}}


@pytest.mark.parametrize("op", UNARY)
def test_unary(op, rng):
    x = rng.standard_normal((3, 17)).astype(F32) * 3
    if op in POSITIVE:
        x = np.abs(x) + 0.1
    check_op(op, [x], UNARY_ATTRS.get(op, {}), rtol=2e-5, atol=2e-6)


def test_exp_log_with_base_scale_shift(rng):
    x = np.abs(rng.standard_normal((5, 4)).astype(F32)) + 0.5
    check_op("Exp", [x], {"base": 2.0, "scale": 0.5, "shift": 0.25})
    check_op("Log", [x], {"base": 10.0, "scale": 2.0, "shift": 0.0})


BROADCAST_CASES = [((2, 3, 4), (2, 3, 4)), ((2, 3, 4), (3, 1)), ((4,), (2, 3, 4)),
                   ((1,), (5,)), ((2, 1, 4), (1, 3, 1)), ((), (3, 2))]


@pytest.mark.parametrize("a_shape,b_shape", BROADCAST_CASES)
def test_add_broadcasting(a_shape, b_shape, rng):
    a = np.asarray(rng.standard_normal(a_shape), F32)
    b = np.asarray(rng.standard_normal(b_shape), F32)
    check_op("Add", [a, b])


@pytest.mark.parametrize("op", ["BroadcastTo", "Expand"])
@pytest.mark.parametrize("x_shape,shape", [((16,), (2, 5, 16)), ((3, 1), (2, 3, 4)),
                                           ((2, 3), (2, 3)), ((1,), (7,))])
def test_broadcast_copy(op, x_shape, shape, rng):
    x = np.asarray(rng.standard_normal(x_shape), F32)
    check_op(op, [x, np.asarray(shape, np.int64)], rtol=0, atol=0)


def test_expand_is_bidirectional(rng):
    x = rng.standard_normal((3, 1)).astype(F32)
    got = check_op("Expand", [x, np.asarray([1, 4], np.int64)], rtol=0, atol=0)[0]
    assert got.shape == (3, 4)


@pytest.mark.parametrize("op", ["Sub", "Mul", "RealDiv", "Maximum", "Minimum", "Pow",
                                "Equal", "Less", "Greater", "LessEqual", "GreaterEqual"])
def test_binary(op, rng):
    a = rng.standard_normal((2, 3, 4)).astype(F32)
    b = rng.standard_normal((3, 1)).astype(F32)
    if op == "Pow":
        a = np.abs(a) + 0.1
    if op in ("Equal", "LessEqual", "GreaterEqual"):
        b = a[0, :, :1].copy()          # make some elements equal
    check_op(op, [a, b], rtol=1e-5, atol=1e-6)


def test_select_and_clip(rng):
    c = rng.standard_normal((2, 3)) > 0
    a = rng.standard_normal((2, 3)).astype(F32)
    b = rng.standard_normal((3,)).astype(F32)
    check_op("SelectV2", [c, a, b])
    check_op("ClipByValue", [a, np.asarray(-0.5, F32), np.asarray(0.5, F32)])


def test_accumulate_n(rng):
    xs = [rng.standard_normal((4, 5)).astype(F32) for _ in range(3)]
    check_op("AccumulateNV2", xs, {"N": 3})


def test_non_float_arithmetic_is_refused(rng):
    """Integer arithmetic has no kernel (float16/bfloat16 go through the float32 kernel:
    test_lowprec.py)."""
    from ge.compiler.opcompile.generators import check_supported
    from kernel_check import make_sig
    a = np.ones((2, 2), np.int32)
    reason = check_supported(make_sig("Add", [a, a], [a], {}))
    assert reason and "DT_INT32" in reason
    h = np.ones((2, 2), np.float16)
    assert check_supported(make_sig("Add", [h, h], [h], {})) is None
