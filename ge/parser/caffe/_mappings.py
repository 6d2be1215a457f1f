"""THE Caffe layer type → GE IR mapping table, one row per layer type (after --op_name_map).

A row says: the Caffe `type` string, the IR op types the conversion may emit, the converter
`(LayerCtx) -> [Edge per top]`, whether the layer reads weight blobs, and `ours=True` where the
IR differs from the op CANN's Caffe plugin creates (docs/parser-caffe.md lists them).  Input
layers (`Input`, `Data`, ...) are not rows: the builder turns them into Data nodes.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from . import _convert_array as A
from . import _convert_nn as N
from ._context import LayerCtx

__all__ = ["CaffeLayer", "MAPPINGS", "BY_TYPE", "INPUT_TYPES", "UNSUPPORTED_DETECTION"]


@dataclass(frozen=True)
class CaffeLayer:
    type: str
    ir_types: tuple
    convert: Callable[[LayerCtx], list]
    weights: bool = False            # reads blobs from the caffemodel
    ours: bool = False               # the IR differs from CANN's plugin op (documented)


def one_to_one(ir_type: str) -> Callable[[LayerCtx], list]:
    def convert(ctx: LayerCtx) -> list:
        return ctx.one(ir_type, [ctx.ins[0]])
    convert.__name__ = f"one_to_one_{ir_type}"
    return convert


def _row(layer_type, ir_types, convert=None, **kw) -> CaffeLayer:
    ir_types = (ir_types,) if isinstance(ir_types, str) else tuple(ir_types)
    return CaffeLayer(layer_type, ir_types, convert or one_to_one(ir_types[0]), **kw)


C = "Const"
MAPPINGS: tuple[CaffeLayer, ...] = (
    # ---- weights and windows -----------------------------------------------------------
    _row("Convolution", (C, "Conv2D"), N.convolution, weights=True),
    _row("Deconvolution", (C, "Conv2DTranspose"), N.deconvolution, weights=True, ours=True),
    _row("Pooling", ("MaxPoolV3", "AvgPoolV2"), N.pooling, ours=True),
    _row("InnerProduct", (C, "Reshape", "MatMulV2"), N.inner_product, weights=True, ours=True),
    _row("BatchNorm", (C, "BatchNorm"), N.batch_norm, weights=True),
    _row("Scale", (C, "BatchNorm", "Reshape", "Mul", "Add"), N.scale, weights=True, ours=True),
    _row("Bias", (C, "Reshape", "Add"), N.bias, weights=True, ours=True),
    _row("PReLU", (C, "PRelu"), N.prelu, weights=True),
    _row("LRN", "LRN", N.lrn),
    _row("Normalize", (C, "Mul", "ReduceSum", "Adds", "Sqrt", "RealDiv"), N.normalize,
         weights=True, ours=True),
    _row("PriorBox", "PriorBox", N.prior_box),
    _row("SSDDetectionOutput", "SSDDetectionOutput", N.detection_output, ours=True),
    # ---- activations and element-wise math ------------------------------------------------
    _row("ReLU", ("Relu", "LeakyRelu"), A.relu),
    _row("Sigmoid", "Sigmoid"),
    _row("TanH", "Tanh"),
    _row("AbsVal", "Abs"),
    _row("BNLL", "Softplus", ours=True),
    _row("ELU", "Elu", A.elu),
    _row("Power", (C, "Muls", "Adds", "Pow"), A.power, ours=True),
    _row("Exp", "Exp", A.exp_log("Exp", "exp_param")),
    _row("Log", "Log", A.exp_log("Log", "log_param")),
    _row("Eltwise", ("Mul", "Maximum", "Muls", "Add", "AccumulateNV2"), A.eltwise, ours=True),
    # ---- structure -------------------------------------------------------------------------
    _row("Concat", "ConcatD", A.concat),
    _row("Slice", (C, "SplitV"), A.slice_),
    _row("Split", (), A.split),
    _row("Softmax", "SoftmaxV2", A.softmax),
    _row("Dropout", "Dropout", A.dropout),
    _row("Flatten", (C, "Reshape"), A.flatten, ours=True),
    _row("Reshape", (C, "Reshape"), A.reshape),
    _row("Permute", "TransposeD", A.permute, ours=True),
    _row("Crop", (C, "Slice"), A.crop, ours=True),
    _row("Reduction", (C, "Abs", "Mul", "ReduceSum", "ReduceMean", "Muls"), A.reduction,
         ours=True),
    _row("ArgMax", (C, "Reshape", "ArgMaxV2", "Cast"), A.arg_max, ours=True),
    _row("Interp", (C, "Resize"), A.interp, ours=True),
    _row("Upsample", (C, "Resize", "Muls"), A.upsample, ours=True),
)

BY_TYPE = {row.type: row for row in MAPPINGS}

# Layers that become graph inputs (Data nodes): Input/DummyData give their shapes, the data
# readers need --input_shape (E11005).
INPUT_TYPES = ("Input", "DummyData", "Data", "ImageData", "MemoryData", "HDF5Data",
               "WindowData", "AnnotatedData")
# The ambiguous SSD/FSR type CANN refuses with E11008 unless --op_name_map renames it.
UNSUPPORTED_DETECTION = "DetectionOutput"
