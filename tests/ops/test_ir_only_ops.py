"""IR ops with no one-node ONNX equivalent: kernel vs a numpy statement of the semantics, and
inferred shape/dtype vs the kernel's output (checked inside run_ir)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from ops_harness import run_ir

R = np.random.default_rng(1)
X = R.uniform(-2, 2, (2, 3, 4)).astype(np.float32)
POS = R.uniform(0.5, 2, (2, 3, 4)).astype(np.float32)
A, B = R.uniform(-1, 1, (3, 5)).astype(np.float32), R.uniform(-1, 1, (5, 4)).astype(np.float32)


def d(x):
    return ("data", np.asarray(x))


def c(x):
    return ("const", np.asarray(x))


_erf = np.vectorize(math.erf)

CASES = [
    ("Muls", [d(X)], {"value": 2.5}, lambda: X * 2.5),
    ("Adds", [d(X)], {"value": -1.0}, lambda: X - 1.0),
    ("Rsqrt", [d(POS)], {}, lambda: 1 / np.sqrt(POS)),
    ("Exp", [d(X)], {"base": 2.0, "scale": 0.5, "shift": 1.0}, lambda: 2.0 ** (0.5 * X + 1)),
    ("Log", [d(POS)], {"base": 10.0, "scale": 2.0, "shift": 0.5},
     lambda: np.log10(2 * POS + 0.5)),
    ("Gelu", [d(X)], {}, lambda: 0.5 * X * (1 + np.tanh(math.sqrt(2 / math.pi)
                                                        * (X + 0.044715 * X ** 3)))),
    ("GeluV2", [d(X)], {"approximate": "none"}, lambda: 0.5 * X * (1 + _erf(X / math.sqrt(2)))),
    ("FastGelu", [d(X)], {}, lambda: X / (1 + np.exp(-1.702 * X))),
    ("Dropout", [d(X)], {}, lambda: X),
    ("TensorMove", [d(X)], {}, lambda: X),
    ("MatMul", [d(A), d(B.T.copy())], {"transpose_x2": True}, lambda: A @ B),
    ("BatchMatMul", [d(np.stack([A, A])), d(np.stack([B, B]))], {}, lambda: np.stack([A @ B] * 2)),
    ("Squeeze", [d(X[:, :1])], {"axis": [1]}, lambda: X[:, 0]),
    ("Unsqueeze", [d(X)], {"axes": [1, -1]}, lambda: X[:, None, :, :, None]),
    ("ExpandDims", [d(X), c(np.array(-1, np.int32))], {}, lambda: X[..., None]),
    ("TransposeD", [d(X)], {"perm": [1, 2, 0]}, lambda: X.transpose(1, 2, 0)),
    ("BroadcastTo", [d(X[:1]), c(np.array([3, 3, 4]))], {}, lambda: np.repeat(X[:1], 3, 0)),
    ("Fill", [c(np.array([2, 3])), d(np.array(7, np.int32))], {},
     lambda: np.full((2, 3), 7, np.int32)),
    ("Concat", [c(np.array(1)), d(X), d(X)], {"N": 2}, lambda: np.concatenate([X, X], 1)),
    ("ConcatV2", [d(X), d(X), c(np.array(-1))], {"N": 2}, lambda: np.concatenate([X, X], -1)),
    ("Slice", [d(X), c(np.array([0, 1, 1])), c(np.array([-1, 2, 2]))], {}, lambda: X[:, 1:3, 1:3]),
    ("PadV2", [d(X), c(np.array([[0, 0], [1, 0], [0, 2]])), d(np.array(9.0, np.float32))], {},
     lambda: np.pad(X, [(0, 0), (1, 0), (0, 2)], constant_values=9.0)),
    ("MirrorPad", [d(X), c(np.array([[0, 0], [1, 1], [2, 0]]))], {"mode": "SYMMETRIC"},
     lambda: np.pad(X, [(0, 0), (1, 1), (2, 0)], mode="symmetric")),
    ("ScatterNdMax", [d(X), d(np.array([[0, 1], [0, 1]])), d(np.full((2, 4), 1.5, np.float32))],
     {}, lambda: np.where(np.arange(2)[:, None, None] * 10 + np.arange(3)[None, :, None] == 1,
                          np.maximum(X, 1.5), X)),
    ("MaxPool", [d(R.uniform(-1, 1, (1, 5, 5, 2)).astype(np.float32))],
     {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1], "padding": "VALID"}, None),
    ("ResizeNearestNeighborV2", [d(X[None]), c(np.array([6, 8], np.int32))], {},
     lambda: X[None][:, :, [0, 0, 1, 1, 2, 2]][:, :, :, [0, 0, 1, 1, 2, 2, 3, 3]]),
    ("Conv3DTranspose", [c(np.zeros(5, np.int64)), d(R.uniform(-1, 1, (1, 2, 3, 3, 3))
                                                   .astype(np.float32)),
                         d(R.uniform(-1, 1, (2, 1, 2, 2, 2)).astype(np.float32))],
     {"strides": [1, 1, 2, 2, 2], "pads": [0] * 6, "data_format": "NCDHW"}, None),
    # ONNX Pow: the result has the base's dtype whatever the exponent's
    ("Pow", [d(np.array([1, 2, 3], np.int64)), d(np.array([2.0, 0.5, 2.0], np.float32))], {},
     lambda: np.array([1, 1, 9], np.int64)),
    # reductions over an empty set give the identity (ONNX)
    ("ReduceMax", [d(np.zeros((2, 0, 4), np.float32)), c(np.array([1]))], {"keep_dims": True},
     lambda: np.full((2, 1, 4), -np.inf, np.float32)),
    ("ReduceMin", [d(np.zeros((2, 0, 4), np.int32)), c(np.array([1]))], {},
     lambda: np.full((2, 4), np.iinfo(np.int32).max, np.int32)),
]


@pytest.mark.parametrize("op, inputs, attrs, reference", CASES, ids=[c[0] for c in CASES])
def test_ir_op(op, inputs, attrs, reference):
    out = run_ir(op, inputs, attrs)[0]
    if reference is not None:
        np.testing.assert_allclose(out, reference(), rtol=1e-5, atol=1e-6)


def test_conv_nhwc_matches_nchw():
    x = R.uniform(-1, 1, (1, 3, 6, 5)).astype(np.float32)
    w = R.uniform(-1, 1, (4, 3, 3, 2)).astype(np.float32)
    common = {"strides": [1, 1, 2, 1], "pads": [1, 1, 0, 1]}
    ref = run_ir("Conv2D", [d(x), d(w)], dict(common, data_format="NCHW"))[0]
    got = run_ir("Conv2D", [d(x.transpose(0, 2, 3, 1)), d(w.transpose(2, 3, 1, 0))],
                 {"strides": [1, 2, 1, 1], "pads": [1, 1, 0, 1], "data_format": "NHWC"})[0]
    np.testing.assert_allclose(got.transpose(0, 3, 1, 2), ref, rtol=1e-5, atol=1e-6)


def test_training_batch_norm_running_stats_use_the_avg_factor():
    from ge import ops
    opdef = ops.get("BatchNorm")
    attrs = {a.name: a.default for a in opdef.attrs}
    attrs.update(is_training=True, exponential_avg_factor=0.25, data_format="NCHW")
    x = X[None]
    four = np.full(2, 4.0, np.float32)
    outs = opdef.kernel([x, np.ones(2, np.float32), np.zeros(2, np.float32), four, four], attrs)
    batch_mean, batch_var = x.mean(axis=(0, 2, 3)), x.var(axis=(0, 2, 3))
    np.testing.assert_allclose(outs[1], 0.25 * batch_mean + 3.0, rtol=1e-5)
    np.testing.assert_allclose(outs[2], 0.25 * batch_var + 3.0, rtol=1e-5)
    np.testing.assert_allclose(outs[3], batch_mean, rtol=1e-5)
