"""Precision facts per op type: the mixed-precision list an op belongs to, whether it is a
matrix ("cube") op, and which ops have high-precision / high-performance variants.

The list membership is CANN's `precision_reduce` flag of the op's information library
(`flag: true` = white / allow list, `false` = black / block list, no flag = gray / infer list).
SOURCES names, per entry, the op definition the flag was read from in the public CANN operator
repositories (hicann/ops-nn, hicann/ops-math: `<dir>/op_host/<name>_def.cpp`,
`PrecisionReduceFlag(...)`); entries marked OURS had no public definition and were decided
here (docs/ops-registry.md, "Mixed-precision lists", explains each decision).
"""
from __future__ import annotations

__all__ = ["WHITE", "BLACK", "GRAY", "LISTS", "MIXLIST", "SOURCES", "OURS", "CUBE_OPS",
           "IMPL_MODE_OPS", "precision_list", "is_cube"]

WHITE, BLACK, GRAY = "white", "black", "gray"
LISTS = (WHITE, BLACK, GRAY)
OURS = "ours"

_NN, _MATH = "hicann/ops-nn", "hicann/ops-math"

# op type -> (list, source definition or OURS)
_TABLE = {
    # matrix ops: cube unit
    "MatMul": (WHITE, f"{_NN} matmul/mat_mul_v3"),
    "MatMulV2": (WHITE, f"{_NN} matmul/mat_mul_v3"),
    "BatchMatMul": (WHITE, f"{_NN} matmul/batch_mat_mul_v3"),
    "BatchMatMulV2": (WHITE, f"{_NN} matmul/batch_mat_mul_v3"),
    "GEMM": (WHITE, f"{_NN} matmul/gemm_v2"),
    "Conv2D": (WHITE, f"{_NN} conv/conv2d_v2"),
    "Conv3D": (WHITE, f"{_NN} conv/conv3d_v2"),
    "Conv2DTranspose": (WHITE, OURS),
    "Conv3DTranspose": (WHITE, f"{_NN} conv/conv3d_transpose_v2"),
    "Einsum": (WHITE, OURS),
    # elementwise
    "Add": (WHITE, f"{_MATH} math/add"), "Sub": (WHITE, f"{_MATH} math/sub"),
    "Mul": (WHITE, f"{_MATH} math/mul"), "RealDiv": (WHITE, f"{_MATH} math/real_div"),
    "Pow": (WHITE, f"{_MATH} math/pow"), "Maximum": (WHITE, f"{_MATH} math/maximum"),
    "Minimum": (WHITE, f"{_MATH} math/minimum"), "Equal": (WHITE, f"{_MATH} math/equal"),
    "Less": (WHITE, f"{_MATH} math/less"), "Greater": (WHITE, f"{_MATH} math/greater"),
    "LessEqual": (WHITE, f"{_MATH} math/less_equal"),
    "GreaterEqual": (WHITE, f"{_MATH} math/greater_equal"),
    "Sqrt": (WHITE, f"{_MATH} math/sqrt"), "Rsqrt": (WHITE, f"{_MATH} math/rsqrt"),
    "Reciprocal": (WHITE, f"{_MATH} math/reciprocal"), "Exp": (WHITE, f"{_MATH} math/exp"),
    "Log": (WHITE, f"{_MATH} math/log"), "Erf": (WHITE, f"{_MATH} math/erf"),
    "Abs": (WHITE, f"{_MATH} math/abs"), "Neg": (GRAY, OURS),
    "Sign": (WHITE, f"{_MATH} math/sign"), "Floor": (WHITE, f"{_MATH} math/floor"),
    "Ceil": (WHITE, f"{_MATH} math/ceil"), "Round": (WHITE, f"{_MATH} math/round"),
    "Sin": (WHITE, f"{_MATH} math/sin"), "Cos": (WHITE, f"{_MATH} math/cos"),
    "Tan": (WHITE, f"{_MATH} math/tan"), "Asin": (WHITE, f"{_MATH} math/asin"),
    "Acos": (WHITE, f"{_MATH} math/acos"), "Atan": (WHITE, f"{_MATH} math/atan"),
    "Sinh": (WHITE, f"{_MATH} math/sinh"), "Cosh": (WHITE, f"{_MATH} math/cosh"),
    "Asinh": (BLACK, f"{_MATH} math/asinh"), "Acosh": (BLACK, f"{_MATH} math/acosh"),
    "Atanh": (WHITE, f"{_MATH} math/atanh"), "Tanh": (WHITE, f"{_MATH} math/tanh"),
    "IsNan": (WHITE, f"{_MATH} math/is_nan"),
    "Muls": (WHITE, f"{_MATH} math/muls"), "Adds": (WHITE, f"{_MATH} math/adds"),
    "SelectV2": (WHITE, f"{_MATH} math/select_v2"),
    "AccumulateNV2": (WHITE, f"{_MATH} math/accumulate_nv2"),
    "ClipByValue": (WHITE, f"{_MATH} conversion/clip_by_value"),
    # activations
    "Relu": (WHITE, f"{_NN} activation/relu"),
    "LeakyRelu": (WHITE, f"{_NN} activation/leaky_relu"),
    "Sigmoid": (WHITE, f"{_NN} activation/sigmoid"),
    "HardSwish": (WHITE, f"{_NN} activation/hard_swish"),
    "Mish": (WHITE, f"{_NN} activation/mish"), "Gelu": (WHITE, f"{_NN} activation/gelu"),
    "GeluV2": (WHITE, f"{_NN} activation/gelu_v2"),
    "FastGelu": (WHITE, f"{_NN} activation/fast_gelu_v2"),
    "Elu": (WHITE, f"{_NN} activation/elu"), "Selu": (BLACK, f"{_NN} activation/selu"),
    "Softplus": (WHITE, f"{_NN} activation/softplus"),
    "Softsign": (WHITE, f"{_NN} activation/softsign"),
    "HardSigmoid": (WHITE, f"{_NN} activation/hard_sigmoid"),
    "PRelu": (WHITE, f"{_NN} activation/p_relu"),
    "SoftmaxV2": (WHITE, f"{_NN} activation/softmax_v2"),
    "LogSoftmaxV2": (WHITE, f"{_NN} activation/log_softmax_v2"),
    # normalisation
    "BatchNorm": (WHITE, f"{_NN} norm/batch_norm"),
    "LayerNorm": (WHITE, f"{_NN} norm/layer_norm_v4"),
    "InstanceNorm": (GRAY, OURS), "LRN": (GRAY, OURS),
    # pooling and reductions
    "MaxPoolV3": (WHITE, f"{_NN} pooling/max_pool_v3"),
    "AvgPoolV2": (WHITE, f"{_NN} pooling/avg_pool_v2"),
    "MaxPool": (WHITE, f"{_NN} pooling/max_pool_v2"),
    "MaxPool3D": (WHITE, f"{_NN} pooling/max_pool3_d"),
    "AvgPool3D": (WHITE, f"{_NN} pooling/avg_pool3_d"),
    "GlobalAveragePool": (GRAY, OURS),
    "ReduceMean": (WHITE, f"{_MATH} experimental/math/reduce_mean_v2"),
    "ReduceSum": (WHITE, f"{_MATH} experimental/math/reduce_sum_v2"),
    "ReduceMax": (WHITE, f"{_MATH} experimental/math/reduce_max_v2"),
    "ReduceMin": (WHITE, f"{_MATH} experimental/math/reduce_min_v2"),
    "ReduceProd": (WHITE, f"{_MATH} experimental/math/reduce_prod_v2"),
    "ArgMaxV2": (GRAY, OURS), "ArgMin": (GRAY, OURS), "TopK": (GRAY, OURS), "Cumsum": (GRAY, OURS),
    # data movement: the values are copied, never computed
    "Transpose": (WHITE, f"{_MATH} conversion/transpose_v2"), "TransposeD": (GRAY, OURS),
    "BroadcastTo": (GRAY, OURS), "Expand": (GRAY, OURS), "Tile": (GRAY, OURS),
    "Fill": (WHITE, f"{_MATH} experimental/conversion/fill_v2"),
    "Concat": (WHITE, f"{_MATH} conversion/concat"),
    "ConcatV2": (WHITE, f"{_MATH} conversion/concat_v2"),
    "ConcatD": (WHITE, f"{_MATH} conversion/concat_d"),
    "Split": (GRAY, OURS), "SplitV": (GRAY, OURS),
    "StridedSliceV2": (WHITE, f"{_MATH} experimental/conversion/strided_slice"),
    "Slice": (WHITE, f"{_MATH} experimental/conversion/slice_v3"),
    "GatherV2": (WHITE, f"{_NN} index/gather_v2"),
    "GatherElements": (WHITE, f"{_NN} index/gather_elements"),
    "PadV3": (WHITE, f"{_MATH} conversion/pad_v3"),
    "PadV2": (WHITE, f"{_MATH} experimental/conversion/pad_v2"),
    "MirrorPad": (GRAY, OURS), "Resize": (GRAY, OURS),
    "ResizeNearestNeighborV2": (GRAY, OURS), "DepthToSpace": (GRAY, OURS),
    "TensorScatterUpdate": (GRAY, OURS), "ScatterElements": (GRAY, OURS),
    "ScatterNdUpdate": (WHITE, f"{_NN} index/scatter_nd_update"),
    "ScatterNdAdd": (WHITE, f"{_NN} index/scatter_nd_add"),
    "ScatterNdMax": (WHITE, f"{_NN} index/scatter_nd_max"),
    "ScatterNdMin": (WHITE, f"{_NN} index/scatter_nd_min"),
    # sequence models: gate matmuls plus elementwise state updates
    "CommonLSTM": (GRAY, OURS), "CommonGRU": (GRAY, OURS), "CommonRNN": (GRAY, OURS),
}

MIXLIST = {t: entry[0] for t, entry in _TABLE.items()}
SOURCES = {t: entry[1] for t, entry in _TABLE.items()}

# Matrix ops (the cube unit): cube_fp16in_fp32out / allow_fp32_to_* treat them apart.
CUBE_OPS = frozenset({"MatMul", "MatMulV2", "BatchMatMul", "BatchMatMulV2", "GEMM", "Conv2D",
                      "Conv3D", "Conv2DTranspose", "Conv3DTranspose", "Einsum"})

# Ops with a high-precision and a high-performance implementation that differ numerically
# (--op_select_implmode, --op_precision_mode): the choice is recorded on the node
# (ge.graph.attr_names.ATTR_IMPL_MODE) for the kernel generators.
IMPL_MODE_OPS = frozenset({"SoftmaxV2", "LogSoftmaxV2", "LayerNorm", "Gelu", "GeluV2",
                           "FastGelu", "Exp", "Log", "ReduceMean", "ReduceSum", "ReduceProd",
                           "GlobalAveragePool",
                           "Erf", "Sigmoid", "Tanh", "Rsqrt", "Sqrt", "Pow"})


def precision_list(op_type: str) -> str:
    """The op's mixed-precision list: white, black or gray (gray for every unlisted op)."""
    return MIXLIST.get(op_type, GRAY)


def is_cube(op_type: str) -> bool:
    return op_type in CUBE_OPS
