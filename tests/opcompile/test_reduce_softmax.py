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


@pytest.mark.parametrize("op", ["SoftmaxV2", "LogSoftmaxV2"])
@pytest.mark.parametrize("shape,axis", [((2, 3, 4, 5), -1), ((2, 3, 4, 5), 2), ((1, 12, 9, 33), 3)])
def test_softmax_rows_and_strided(op, shape, axis, rng):
    x = rng.standard_normal(shape).astype(F32) * 8
    check_op(op, [x], {"axes": [axis]}, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op", ["SoftmaxV2", "LogSoftmaxV2"])
def test_softmax_need_fusion_normalises_the_trailing_dims(op, rng):
    x = rng.standard_normal((2, 3, 4)).astype(F32)
    check_op(op, [x], {"axes": [1], "need_fusion": 1}, rtol=1e-5, atol=1e-6)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")    # the reference's log(0), inf - inf
def test_softmax_infinite_and_nan_rows_follow_the_reference():
    x = np.array([[0.0, -np.inf, 1.0], [-np.inf, -np.inf, -np.inf], [np.inf, 0.0, 1.0],
                  [np.nan, 0.0, 1.0]], F32)
    got = check_op("SoftmaxV2", [x], {"axes": [-1]}, rtol=1e-6, atol=0)[0]
    assert np.isnan(got[1]).all() and np.isnan(got[3]).all()


@pytest.mark.parametrize("shape,axis,pshape", [
    ((2, 5, 16), -1, (16,)),                 # BERT: gamma over the last dim
    ((2, 5, 16), -1, (2, 5, 16)),            # gamma already broadcast to x (parser expansion)
    ((2, 3, 4, 6), 2, (4, 6)),
    ((3, 7), 0, (3, 7)),
    ((2, 4, 8), 1, (1,)),                    # scalar gamma/beta
    ((2, 4, 8), 2, (4, 1)),                  # per-row gamma/beta (stride 0 inside the row)
])
def test_layer_norm(shape, axis, pshape, rng):
    x = (rng.standard_normal(shape) * 3 + 1).astype(F32)
    g = rng.standard_normal(pshape).astype(F32)
    b = rng.standard_normal(pshape).astype(F32)
    check_op("LayerNorm", [x, g, b], {"begin_norm_axis": axis, "epsilon": 1e-5},
             rtol=1e-5, atol=1e-5)
