"""Kernels vs onnxruntime: one row per case, an ONNX node and the IR node the parser makes of it
(spec/ir-ops.md §2), built by hand.  Inputs marked "c" are Const producers on the IR side."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest

from ge.graph.types import DataType as DT
from ops_harness import run_ir, run_onnx

R = np.random.default_rng(0)


def f32(*shape, lo=-2.0, hi=2.0):
    return R.uniform(lo, hi, shape).astype(np.float32)


def i64(*vals):
    return np.array(vals, dtype=np.int64)


@dataclass
class Case:
    onnx_op: str
    ins: list                      # [(name, array)], ONNX order
    ir_op: str
    ir_ins: list = None            # names from ins ("c:" prefix = Const), None = absent
    attrs: dict = field(default_factory=dict)
    ir_attrs: dict = field(default_factory=dict)
    opset: int = 17
    n_out: int = 1
    ir_n_out: int = None
    compare: tuple = None          # ((onnx out, ir out), ...)
    tol: float = 1e-5
    id: str = ""


def _binary(onnx_op, ir_op, a, b, **kw):
    return Case(onnx_op, [("a", a), ("b", b)], ir_op, id=kw.pop("id", onnx_op), **kw)


def _unary(onnx_op, ir_op, x, **kw):
    return Case(onnx_op, [("x", x)], ir_op, id=kw.pop("id", onnx_op), **kw)


X = f32(2, 3, 4)
POS = f32(2, 3, 4, lo=0.1, hi=3.0)
UNIT = f32(2, 3, 4, lo=-0.9, hi=0.9)
IMG = f32(1, 4, 9, 9)

CASES = [
    _binary("Add", "Add", X, f32(3, 1)),
    _binary("Sub", "Sub", X, f32(4)),
    _binary("Mul", "Mul", X, f32(2, 1, 4)),
    _binary("Div", "RealDiv", X, POS),
    _binary("Div", "RealDiv", np.array([7, -7, 7, -7, 0], np.int32),
            np.array([2, 2, -2, -2, 3], np.int32), id="Div-int-trunc"),
    _binary("Pow", "Pow", POS, f32(4)),
    _binary("Max", "Maximum", X, f32(3, 4)),
    _binary("Min", "Minimum", X, f32(3, 4)),
    _binary("Equal", "Equal", np.array([1, 2, 3], np.int64), np.array([1, 0, 3], np.int64)),
    _binary("Less", "Less", X, f32(4)),
    _binary("Greater", "Greater", X, f32(4)),
    _binary("LessOrEqual", "LessEqual", X, np.round(X)),
    _binary("GreaterOrEqual", "GreaterEqual", X, np.round(X)),
    _binary("And", "LogicalAnd", X > 0, f32(4) > 0),
    _binary("Or", "LogicalOr", X > 0, f32(4) > 0),
    Case("Where", [("c", X > 0), ("a", X), ("b", f32(4))], "SelectV2", id="Where"),
    Case("Sum", [("a", X), ("b", f32(4)), ("c", f32(3, 1))], "AccumulateNV2",
         ir_attrs={"N": 3}, id="Sum"),
    Case("Clip", [("x", X), ("lo", np.array(-0.5, np.float32)),
                  ("hi", np.array(0.7, np.float32))], "ClipByValue", id="Clip"),
    _unary("Sqrt", "Sqrt", POS),
    _unary("Reciprocal", "Reciprocal", POS),
    _unary("Exp", "Exp", X),
    _unary("Log", "Log", POS),
    _unary("Erf", "Erf", X),
    _unary("Abs", "Abs", X),
    _unary("Neg", "Neg", X),
    _unary("Sign", "Sign", np.array([-2.0, 0.0, 3.0], np.float32)),
    _unary("Floor", "Floor", X),
    _unary("Ceil", "Ceil", X),
    _unary("Round", "Round", np.array([0.5, 1.5, 2.5, -0.5, -1.7], np.float32)),
    *[_unary(n, n, UNIT) for n in ("Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh",
                                   "Asinh", "Atanh", "Tanh")],
    _unary("Acosh", "Acosh", POS + 1),
    _unary("Relu", "Relu", X),
    _unary("Sigmoid", "Sigmoid", X),
    _unary("Softplus", "Softplus", X),
    _unary("Softsign", "Softsign", X),
    _unary("IsNaN", "IsNan", np.array([1.0, np.nan, 2.0], np.float32)),
    _unary("Not", "LogicalNot", X > 0),
    _unary("HardSwish", "HardSwish", X * 3),
    _unary("Mish", "Mish", X, opset=18),
    _unary("Selu", "Selu", X),
    _unary("Elu", "Elu", X, attrs={"alpha": 0.7}, ir_attrs={"alpha": 0.7}),
    _unary("LeakyRelu", "LeakyRelu", X, attrs={"alpha": 0.1}, ir_attrs={"negative_slope": 0.1}),
    _unary("HardSigmoid", "HardSigmoid", X, attrs={"alpha": 0.2},
           ir_attrs={"alpha": 0.2, "beta": 0.5}),
    Case("PRelu", [("x", IMG), ("s", f32(4, 1, 1))], "PRelu", id="PRelu"),
    _unary("Softmax", "SoftmaxV2", X, opset=13, id="Softmax13"),
    _unary("Softmax", "SoftmaxV2", X, opset=11, attrs={"axis": 1},
           ir_attrs={"axes": [1], "need_fusion": 1}, id="Softmax11-2d"),
    _unary("LogSoftmax", "LogSoftmaxV2", X, attrs={"axis": -1}),
    _unary("Cast", "Cast", X * 3, attrs={"to": 6}, ir_attrs={"dst_type": int(DT.DT_INT32)}),
    _unary("Cast", "Cast", X, attrs={"to": 10}, ir_attrs={"dst_type": int(DT.DT_FLOAT16)},
           id="Cast-fp16"),
    _unary("Cast", "Cast", X, attrs={"to": 9}, ir_attrs={"dst_type": int(DT.DT_BOOL)},
           id="Cast-bool"),
    # matmul
    _binary("MatMul", "BatchMatMulV2", f32(2, 1, 3, 5), f32(4, 5, 6)),
    _binary("MatMul", "BatchMatMulV2", f32(5), f32(2, 5, 3), id="MatMul-1d"),
    Case("Gemm", [("a", f32(5, 3)), ("b", f32(4, 5)), ("c", f32(4))], "MatMulV2",
         attrs={"transA": 1, "transB": 1},
         ir_attrs={"transpose_x1": True, "transpose_x2": True}, id="Gemm-bias"),
    Case("Gemm", [("a", f32(3, 5)), ("b", f32(5, 4)), ("c", f32(3, 4))], "GEMM",
         ir_ins=["a", "b", "c", "c:alpha", "c:beta"], attrs={"alpha": 0.5, "beta": 2.0},
         id="Gemm-GEMM"),
    # conv
    Case("Conv", [("x", f32(1, 4, 9, 8)), ("w", f32(6, 2, 3, 2)), ("b", f32(6))], "Conv2D",
         attrs={"pads": [1, 0, 2, 1], "strides": [2, 1], "dilations": [1, 2], "group": 2},
         ir_attrs={"pads": [1, 2, 0, 1], "strides": [1, 1, 2, 1], "dilations": [1, 1, 1, 2],
                   "groups": 2, "data_format": "NCHW"}, id="Conv2D"),
    Case("Conv", [("x", f32(1, 3, 7, 7)), ("w", f32(4, 3, 3, 3))], "Conv2D",
         attrs={"auto_pad": "SAME_UPPER", "strides": [2, 2]},
         ir_attrs={"pads": [0, 0, 0, 0], "strides": [1, 1, 2, 2], "data_format": "NCHW",
                   "auto_pad": "SAME_UPPER"}, id="Conv2D-same-upper"),
    Case("Conv", [("x", f32(1, 3, 6, 6)), ("w", f32(4, 3, 2, 2))], "Conv2D",
         attrs={"auto_pad": "SAME_LOWER"},
         ir_attrs={"pads": [0, 0, 0, 0], "strides": [1, 1, 1, 1], "data_format": "NCHW",
                   "auto_pad": "SAME_LOWER"}, id="Conv2D-same-lower"),
    Case("Conv", [("x", f32(1, 2, 5, 6, 5)), ("w", f32(3, 2, 2, 3, 2))], "Conv3D",
         attrs={"pads": [1, 0, 1, 0, 1, 1], "strides": [1, 2, 1]},
         ir_attrs={"pads": [1, 0, 0, 1, 1, 1], "strides": [1, 1, 1, 2, 1],
                   "dilations": [1, 1, 1, 1, 1], "data_format": "NCDHW"}, id="Conv3D"),
    Case("ConvTranspose", [("x", f32(1, 4, 5, 4)), ("w", f32(4, 3, 3, 3)), ("b", f32(6))],
         "Conv2DTranspose", ir_ins=["c:size", "x", "w", "b"],
         attrs={"strides": [2, 2], "pads": [1, 0, 1, 1], "output_padding": [1, 0], "group": 2},
         ir_attrs={"strides": [1, 1, 2, 2], "pads": [1, 1, 0, 1],
                   "output_padding": [0, 0, 1, 0], "groups": 2, "data_format": "NCHW"},
         id="ConvTranspose"),
    Case("ConvTranspose", [("x", f32(1, 2, 4, 4)), ("w", f32(2, 3, 3, 3))], "Conv2DTranspose",
         ir_ins=["c:size", "x", "w"], attrs={"strides": [2, 2], "output_shape": [8, 8]},
         ir_attrs={"strides": [1, 1, 2, 2], "pads": [0, 0, 0, 0], "data_format": "NCHW",
                   "output_shape": [8, 8]}, id="ConvTranspose-output-shape"),
    # norm
    Case("BatchNormalization", [("x", IMG), ("s", f32(4)), ("b", f32(4)), ("m", f32(4)),
                                ("v", f32(4, lo=0.5, hi=2))], "BatchNorm",
         ir_attrs={"epsilon": 1e-5, "data_format": "NCHW", "is_training": False},
         ir_n_out=6, id="BatchNorm"),
    Case("InstanceNormalization", [("x", IMG), ("s", f32(4)), ("b", f32(4))], "InstanceNorm",
         ir_attrs={"epsilon": 1e-5, "data_format": "NCHW"}, ir_n_out=3, id="InstanceNorm"),
    Case("LayerNormalization", [("x", X), ("s", f32(4)), ("b", f32(4))], "LayerNorm",
         attrs={"axis": -1}, ir_attrs={"begin_norm_axis": -1, "begin_params_axis": -1,
                                       "epsilon": 1e-5},
         n_out=2, ir_n_out=3, compare=((0, 0), (1, 1)), id="LayerNorm"),
    Case("LRN", [("x", IMG)], "LRN", attrs={"size": 3, "alpha": 1e-2, "beta": 0.75, "bias": 2.0},
         ir_attrs={"depth_radius": 1, "alpha": 1e-2 / 3, "beta": 0.75, "bias": 2.0}, id="LRN"),
    # pooling
    Case("MaxPool", [("x", IMG)], "MaxPoolV3",
         attrs={"kernel_shape": [3, 2], "strides": [2, 2], "pads": [1, 0, 0, 1],
                "ceil_mode": 1},
         ir_attrs={"ksize": [1, 1, 3, 2], "strides": [1, 1, 2, 2], "pads": [1, 0, 0, 1],
                   "ceil_mode": True}, id="MaxPool-ceil"),
    Case("MaxPool", [("x", IMG)], "MaxPoolV3",
         attrs={"kernel_shape": [3, 3], "strides": [2, 2], "auto_pad": "SAME_UPPER"},
         ir_attrs={"ksize": [1, 1, 3, 3], "strides": [1, 1, 2, 2], "padding_mode": "SAME"},
         id="MaxPool-same"),
    Case("AveragePool", [("x", IMG)], "AvgPoolV2",
         attrs={"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1],
                "ceil_mode": 1},
         ir_attrs={"ksize": [1, 1, 3, 3], "strides": [1, 1, 2, 2], "pads": [1, 1, 1, 1],
                   "ceil_mode": True, "exclusive": True}, id="AvgPool-exclusive"),
    Case("AveragePool", [("x", f32(1, 2, 8, 7))], "AvgPoolV2",
         attrs={"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 0, 1, 1],
                "count_include_pad": 1, "ceil_mode": 1},
         ir_attrs={"ksize": [1, 1, 3, 3], "strides": [1, 1, 2, 2], "pads": [1, 1, 0, 1],
                   "ceil_mode": True, "exclusive": False}, id="AvgPool-include-pad"),
    Case("AveragePool", [("x", f32(1, 2, 5, 6, 5))], "AvgPool3D",
         attrs={"kernel_shape": [2, 3, 2], "strides": [2, 2, 1], "pads": [1, 1, 0, 1, 0, 1]},
         ir_attrs={"ksize": [1, 1, 2, 3, 2], "strides": [1, 1, 2, 2, 1],
                   "pads": [1, 1, 1, 0, 0, 1], "count_include_pad": False,
                   "data_format": "NCDHW"}, id="AvgPool3D"),
    Case("MaxPool", [("x", f32(1, 2, 5, 6, 5))], "MaxPool3D",
         attrs={"kernel_shape": [2, 2, 2], "strides": [2, 2, 2], "pads": [0, 1, 0, 1, 0, 1]},
         ir_attrs={"ksize": [1, 1, 2, 2, 2], "strides": [1, 1, 2, 2, 2], "padding": "CALCULATED",
                   "pads": [0, 1, 1, 0, 0, 1], "data_format": "NCDHW"}, id="MaxPool3D"),
    _unary("GlobalAveragePool", "GlobalAveragePool", IMG),
    Case("GlobalMaxPool", [("x", IMG)], "ReduceMax", ir_ins=["x", "c:axes"],
         ir_attrs={"keep_dims": True}, id="GlobalMaxPool"),
    # reductions and friends
    *[Case(op, [("x", X), ("axes", i64(0, -1))], op, ir_ins=["x", "c:axes"], opset=18,
           attrs={"keepdims": 0}, ir_attrs={"keep_dims": False, "noop_with_empty_axes": False})
      for op in ("ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin")],
    Case("ReduceSum", [("x", X), ("axes", i64())], "ReduceSum", ir_ins=["x", "c:axes"],
         ir_attrs={"keep_dims": True, "noop_with_empty_axes": False}, id="ReduceSum-all"),
    Case("ArgMax", [("x", X)], "ArgMaxV2", ir_ins=["x", "c:dim"],
         attrs={"axis": 1, "keepdims": 0}, id="ArgMax"),
    Case("ArgMin", [("x", X)], "ArgMin", ir_ins=["x", "c:dim"],
         attrs={"axis": 1, "keepdims": 0}, id="ArgMin"),
    Case("ArgMin", [("x", np.round(X * 2))], "ArgMin", ir_ins=["x", "c:dim"],
         attrs={"axis": 1, "keepdims": 0, "select_last_index": 1},
         ir_attrs={"select_last_index": 1}, id="ArgMin-last"),
    Case("TopK", [("x", np.round(X * 2)), ("k", i64(2))], "TopK", ir_ins=["x", "c:k"],
         n_out=2, id="TopK"),
    Case("TopK", [("x", X), ("k", i64(3))], "TopK", ir_ins=["x", "c:k"], n_out=2,
         attrs={"axis": 1, "largest": 0}, ir_attrs={"dim": 1, "largest": False},
         id="TopK-smallest"),
    Case("CumSum", [("x", X), ("axis", np.array(1, np.int64))], "Cumsum", ir_ins=["x", "c:axis"],
         attrs={"exclusive": 1, "reverse": 1}, ir_attrs={"exclusive": True, "reverse": True}),
    Case("Einsum", [("a", f32(2, 3, 4)), ("b", f32(2, 4, 5))], "Einsum",
         attrs={"equation": "bij,bjk->bik"}, ir_attrs={"equation": "bij,bjk->bik", "N": 2}),
    # shape ops
    Case("Reshape", [("x", X), ("s", i64(0, -1, 2))], "Reshape", ir_ins=["x", "c:s"]),
    _unary("Flatten", "Flatten", X, attrs={"axis": 2}, ir_attrs={"axis": 2}),
    Case("Squeeze", [("x", f32(2, 1, 3, 1)), ("a", i64(-1))], "SqueezeV3", ir_ins=["x", "c:a"]),
    Case("Unsqueeze", [("x", X), ("a", i64(0, -1))], "UnsqueezeV3", ir_ins=["x", "c:a"]),
    Case("Transpose", [("x", X)], "Transpose", ir_ins=["x", "c:perm"], attrs={"perm": [2, 0, 1]}),
    _unary("Shape", "Shape", X, ir_attrs={"dtype": int(DT.DT_INT64)}),
    Case("Expand", [("x", f32(3, 1)), ("s", i64(2, 1, 4))], "Expand", ir_ins=["x", "c:s"]),
    Case("Tile", [("x", X), ("r", i64(1, 2, 3))], "Tile", ir_ins=["x", "c:r"]),
    Case("Range", [("a", np.array(1.0, np.float32)), ("b", np.array(4.2, np.float32)),
                   ("d", np.array(0.5, np.float32))], "Range", ir_ins=["c:a", "c:b", "c:d"]),
    Case("Concat", [("a", X), ("b", f32(2, 1, 4))], "ConcatD", attrs={"axis": 1},
         ir_attrs={"concat_dim": 1, "N": 2}),
    Case("Split", [("x", f32(2, 6)), ("s", i64(1, 2, 3))], "SplitV",
         ir_ins=["x", "c:s", "c:axis"], attrs={"axis": 1}, n_out=3, opset=13,
         ir_attrs={"num_split": 3}, id="SplitV"),
    Case("Split", [("x", f32(4, 6))], "Split", ir_ins=["c:axis", "x"], n_out=2, opset=13,
         attrs={"axis": 1},
         ir_attrs={"num_split": 2}, id="Split"),
    Case("Slice", [("x", f32(5, 6, 7)), ("st", i64(-1, 1)), ("en", i64(-100, 1000)),
                   ("ax", i64(0, 2)), ("sp", i64(-2, 3))], "StridedSliceV2",
         ir_ins=["x", "c:st", "c:en", "c:ax", "c:sp"], id="Slice"),
    Case("Gather", [("x", X), ("i", np.array([[0, -1], [2, 1]], np.int64))], "GatherV2",
         ir_ins=["x", "i", "c:axis"], attrs={"axis": 1},
         ir_attrs={"negative_index_support": True}),
    Case("GatherElements", [("x", X), ("i", R.integers(-3, 3, (2, 2, 4)))], "GatherElements",
         attrs={"axis": 1}, ir_attrs={"dim": 1}),
    *[Case("Pad", [("x", f32(2, 3, 4)), ("p", i64(0, 1, -1, 1, 2, 1))], "PadV3",
           ir_ins=["x", "c:p"], attrs={"mode": m},
           ir_attrs={"mode": m, "paddings_contiguous": False}, id=f"Pad-{m}")
      for m in ("constant", "reflect", "edge")],
    Case("Resize", [("x", IMG), ("", None), ("sc", np.array([1, 1, 1.7, 0.6], np.float32))],
         "Resize", ir_ins=["x", None, "c:sc"],
         attrs={"mode": "nearest", "coordinate_transformation_mode": "asymmetric",
                "nearest_mode": "floor"},
         ir_attrs={"mode": "nearest", "coordinate_transformation_mode": "asymmetric",
                   "nearest_mode": "floor"}, id="Resize-nearest"),
    *[Case("Resize", [("x", IMG), ("", None), ("", None), ("sz", i64(1, 4, 13, 6))], "Resize",
           ir_ins=["x", None, None, "c:sz"],
           attrs={"mode": mode, "coordinate_transformation_mode": ctm},
           ir_attrs={"mode": mode, "coordinate_transformation_mode": ctm},
           id=f"Resize-{mode}-{ctm}")
      for mode, ctm in (("linear", "half_pixel"), ("linear", "align_corners"),
                        ("cubic", "half_pixel"), ("linear", "pytorch_half_pixel"),
                        ("nearest", "half_pixel"))],
    *[Case("DepthToSpace", [("x", f32(1, 8, 2, 3))], "DepthToSpace",
           attrs={"blocksize": 2, "mode": m},
           ir_attrs={"block_size": 2, "mode": m, "data_format": "NCHW"}, id=f"DepthToSpace-{m}")
      for m in ("DCR", "CRD")],
    Case("ScatterND", [("x", X), ("i", np.array([[1], [0]], np.int64)), ("u", f32(2, 3, 4))],
         "TensorScatterUpdate", id="ScatterND"),
    Case("ScatterND", [("x", X), ("i", np.array([[1, 2], [0, 0], [1, 2]], np.int64)),
                       ("u", f32(3, 4))], "ScatterNdAdd", attrs={"reduction": "add"},
         opset=16, id="ScatterND-add"),
]

CONST_EXTRA = {  # IR-only constants the parser would create
    "size": np.zeros(4, np.int64), "alpha": np.array([0.5], np.float32),
    "beta": np.array([2.0], np.float32), "axes": np.array([2, 3], np.int32),
    "dim": np.array(1, np.int32), "perm": np.array([2, 0, 1], np.int32),
    "axis": np.array(1, np.int32),
}


def _ir_inputs(case):
    by_name = dict(case.ins)
    names = case.ir_ins if case.ir_ins is not None else [n for n, _ in case.ins]
    out = []
    for n in names:
        if n is None:
            out.append(None)
        elif n.startswith("c:"):
            key = n[2:]
            out.append(("const", by_name[key] if key in by_name else CONST_EXTRA[key]))
        else:
            out.append(("data", by_name[n]))
    return out


@pytest.mark.parametrize("case", CASES, ids=[c.id or c.onnx_op for c in CASES])
def test_kernel_matches_onnxruntime(case):
    expected = run_onnx(case.onnx_op, [(n, a) for n, a in case.ins], case.attrs, case.n_out,
                        case.opset)
    got = run_ir(case.ir_op, _ir_inputs(case), case.ir_attrs, case.ir_n_out or case.n_out)
    pairs = case.compare or [(i, i) for i in range(case.n_out)]
    for oi, ii in pairs:
        e, g = expected[oi], got[ii]
        assert tuple(e.shape) == tuple(g.shape), f"output {ii}: {g.shape} vs onnx {e.shape}"
        if e.dtype == np.bool_ or e.dtype.kind in "iu":
            np.testing.assert_array_equal(g.astype(e.dtype), e)
        else:
            np.testing.assert_allclose(g.astype(np.float64), e.astype(np.float64),
                                       rtol=case.tol, atol=case.tol)
