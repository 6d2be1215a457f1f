"""Example custom operator package: Swish, y = x * sigmoid(alpha * x) (docs/custom-ops.md).

Found through ASCEND_CUSTOM_OPP_PATH=<this directory> or, once `pip install`ed, through its
`ge.ops.packages` entry point.
"""
import numpy as np

from ge.graph.types import AttrValueType as VT, DataType
from ge.ops import (AttrSpec, CKernel, CustomOp, CustomPackage, FrameworkMapping, OpDef, Port)

FLOATS = (DataType.DT_FLOAT, DataType.DT_FLOAT16, DataType.DT_DOUBLE)


def infer_swish(ctx):
    """One output with the shape and dtype of x."""
    x = ctx.ins[0]
    return [(x.shape, x.dtype)]


def swish_reference(inputs, attrs):
    x = inputs[0]
    alpha = np.asarray(attrs["alpha"], dtype=np.float64)
    y = x.astype(np.float64) / (1.0 + np.exp(-alpha * x.astype(np.float64)))
    return [y.astype(x.dtype)]


SWISH = OpDef(
    type="Swish",
    inputs=(Port("x", dtypes=FLOATS),),
    outputs=(Port("y"),),
    attrs=(AttrSpec("alpha", VT.VT_FLOAT, 1.0),),
    infer=infer_swish,
    kernel=swish_reference,
    doc="y = x * sigmoid(alpha * x)",
)

GE_OP_PACKAGE = CustomPackage(
    name="com.example.swish",
    version="1.0.0",
    ops=(CustomOp(SWISH, c_kernel=CKernel("swish.c", dtypes=("DT_FLOAT",))),),
    mappings=(
        FrameworkMapping("onnx", "com.example::Swish", "Swish", opsets=(1, None),
                         attrs={"alpha": "alpha"}),
        # read by the TensorFlow and Caffe parsers (docs/custom-ops.md)
        FrameworkMapping("tensorflow", "Swish", "Swish", attrs={"alpha": "alpha"}),
        FrameworkMapping("caffe", "Swish", "Swish",
                         attrs=lambda layer: {"alpha": float(layer.get("beta", 1.0))}),
    ),
)
