"""Pooling and data-movement generators vs the reference kernels."""
import numpy as np
import pytest

from kernel_check import check_op

F32 = np.float32
I64 = np.int64

POOL_CASES = [  # (ksize, strides, padding_mode, pads, ceil_mode, global)
    ((3, 3), (2, 2), "CALCULATED", (1, 1, 1, 1), False, False),
    ((2, 2), (2, 2), "CALCULATED", (0, 0, 0, 0), True, False),
    ((3, 2), (1, 2), "SAME", (0, 0, 0, 0), False, False),
    ((3, 3), (2, 2), "VALID", (0, 0, 0, 0), False, False),
    ((1, 1), (1, 1), "CALCULATED", (0, 0, 0, 0), False, True),
]


@pytest.mark.parametrize("op", ["MaxPoolV3", "AvgPoolV2"])
@pytest.mark.parametrize("ks,st,mode,pads,ceil,glob", POOL_CASES)
def test_pool(op, ks, st, mode, pads, ceil, glob, rng):
    x = rng.standard_normal((2, 3, 7, 8)).astype(F32)
    attrs = {"ksize": [1, 1, *ks], "strides": [1, 1, *st], "padding_mode": mode,
             "pads": list(pads), "ceil_mode": ceil, "global_pooling": glob,
             "data_format": "NCHW"}
    check_op(op, [x], attrs, fmt="NCHW")


@pytest.mark.parametrize("ks,st,pads", [((3, 3), (3, 2), (2, 1, 2, 2)), ((2, 4), (1, 3), (1, 0, 3, 2)),
                                        ((5, 5), (2, 2), (2, 2, 2, 2))])
def test_max_pool_padding_and_nan(ks, st, pads, rng):
    x = rng.standard_normal((1, 2, 6, 7)).astype(F32)
    x[0, 0, 2, 3] = np.nan
    x[0, 1] = -np.inf
    attrs = {"ksize": [1, 1, *ks], "strides": [1, 1, *st], "pads": list(pads),
             "data_format": "NCHW"}
    check_op("MaxPoolV3", [x], attrs, fmt="NCHW")


@pytest.mark.parametrize("exclusive", [True, False])
def test_avg_pool_padding_divisor(exclusive, rng):
    x = rng.standard_normal((1, 2, 5, 5)).astype(F32)
    attrs = {"ksize": [1, 1, 3, 3], "strides": [1, 1, 2, 2], "pads": [1, 1, 1, 1],
             "exclusive": exclusive, "data_format": "NCHW"}
    check_op("AvgPoolV2", [x], attrs, fmt="NCHW")


@pytest.mark.parametrize("perm", [[1, 0, 2], [2, 0, 1], [0, 1, 2], [3, 1, 2, 0]])
def test_transpose(perm, rng):
    x = rng.standard_normal((2, 3, 4, 5)[:len(perm)]).astype(F32)
    check_op("TransposeD", [x], {"perm": perm})
    check_op("Transpose", [x, np.asarray(perm, I64)])


def test_transpose_int32(rng):
    x = rng.integers(-9, 9, (3, 4)).astype(np.int32)
    check_op("TransposeD", [x], {"perm": [1, 0]})


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concat(axis, rng):
    xs = [rng.standard_normal((2, k + 1, 3)).astype(F32) if axis == 1 else
          rng.standard_normal((2, 3, k + 1) if axis == -1 else (k + 1, 3, 2)).astype(F32)
          for k in range(3)]
    check_op("ConcatD", xs, {"concat_dim": axis, "N": 3})
    check_op("ConcatV2", xs + [np.asarray(axis, np.int32)], {"N": 3})


def test_split_and_split_v(rng):
    x = rng.standard_normal((4, 6)).astype(F32)
    check_op("Split", [np.asarray(1, np.int32), x], {"num_split": 3})
    check_op("SplitV", [x, np.asarray([1, 3], I64), np.asarray(0, np.int32)], {"num_split": 2})


def test_slice(rng):
    x = rng.standard_normal((4, 5, 6)).astype(F32)
    check_op("Slice", [x, np.asarray([1, 0, 2], I64), np.asarray([2, -1, 3], I64)])


@pytest.mark.parametrize("begin,end,axes,steps", [
    ([1, 0], [3, 5], [0, 2], [1, 2]),
    ([-1], [-6], [1], [-2]),
    ([0, 1], [100, 4], [1, 2], [1, 1]),
])
def test_strided_slice_v2(begin, end, axes, steps, rng):
    x = rng.standard_normal((3, 5, 6)).astype(F32)
    check_op("StridedSliceV2", [x, np.asarray(begin, I64), np.asarray(end, I64),
                                np.asarray(axes, I64), np.asarray(steps, I64)])
