"""Reduction and softmax generators vs the ge.ops reference kernels."""
import numpy as np
import pytest

from kernel_check import check_op

F32 = np.float32
I64 = np.int64


@pytest.mark.parametrize("op", ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin"])
@pytest.mark.parametrize("axes,keep", [([1], False), ([0, 2], True), ([-1], True), ([], False)])
def test_reduce(op, axes, keep, rng):
    x = rng.standard_normal((3, 4, 5)).astype(F32)
    check_op(op, [x, np.asarray(axes, I64)], {"keep_dims": keep}, rtol=1e-5, atol=1e-5)


def test_reduce_all_when_empty_axes_not_noop(rng):
    x = rng.standard_normal((3, 4)).astype(F32)
    check_op("ReduceSum", [x, np.asarray([], I64)], {"noop_with_empty_axes": False})


def test_global_average_pool(rng):
    x = rng.standard_normal((2, 3, 7, 7)).astype(F32)
    check_op("GlobalAveragePool", [x], fmt="NCHW")


@pytest.mark.parametrize("op", ["SoftmaxV2", "LogSoftmaxV2"])
@pytest.mark.parametrize("axis", [-1, 1, 0])
def test_softmax(op, axis, rng):
    x = rng.standard_normal((2, 5, 3)).astype(F32) * 4
    check_op(op, [x], {"axes": [axis]}, rtol=1e-5, atol=1e-6)
