"""Op-list files of the single-op tests, in CANN's documented format (what the CANN samples
show: Add, MatMul with transpose attributes, GEMM, Cast, several ops in one file, a dynamic
shape with shape_range), and the numpy result of every op that builds."""
from __future__ import annotations

import json

import numpy as np


def tensor(shape, dtype="float", fmt="ND", **extra) -> dict:
    return dict({"format": fmt, "shape": list(shape), "type": dtype}, **extra)


def attr(name: str, kind: str, value) -> dict:
    return {"name": name, "type": kind, "value": value}


# Several ops in one file: the names ATC gives them (serial number, type, then dtype, format
# and dims of every input and output as enum numbers; or the `name` field when it is a valid
# file name), the op, and its numpy reference over the runtime inputs.
GOOD = [
    ("0_Add_1_2_8_16_1_2_8_16_1_2_8_16.om",
     {"op": "Add", "input_desc": [tensor([8, 16], "float16"), tensor([8, 16], "float16")],
      "output_desc": [tensor([8, 16], "float16")]},
     lambda a, b: a + b),
    ("matmul_t.om",
     {"op": "MatMulV2", "name": "matmul_t", "compile_flag": 0,
      "input_desc": [tensor([4, 3], name="x1"), tensor([5, 4], name="x2")],
      "output_desc": [tensor([3, 5])],
      "attr": [attr("transpose_x1", "bool", True), attr("transpose_x2", "bool", True)]},
     lambda a, b: a.T @ b.T),
    ("gemm_ta.om",      # alpha and beta are constant inputs (is_const / const_value)
     {"op": "GEMM", "name": "gemm_ta",
      "input_desc": [tensor([3, 4]), tensor([3, 5]), tensor([4, 5]),
                     tensor([], is_const=True, const_value=[0.5]),
                     tensor([], is_const=True, const_value=[2.0])],
      "output_desc": [tensor([4, 5])],
      "attr": [attr("transpose_a", "bool", True), attr("transpose_b", "bool", False)]},
     lambda a, b, c: 0.5 * (a.T @ b) + 2.0 * c),
    ("3_Cast_0_2_6_3_2_6.om",
     {"op": "Cast", "input_desc": [tensor([6])], "output_desc": [tensor([6], "int32")],
      "attr": [attr("dst_type", "data_type", "DT_INT32")]},
     lambda x: x.astype(np.int32)),
    ("4_Relu_0_0_1_2_3_4_0_0_1_2_3_4.om",     # a name that is no file name: generated
     {"op": "Relu", "name": "relu 1", "input_desc": [tensor([1, 2, 3, 4], fmt="NCHW")],
      "output_desc": [tensor([1, 2, 3, 4], fmt="NCHW")]},
     lambda x: np.maximum(x, 0)),
    ("concat3.om",      # a dynamic input group: the tensors become x0, x1, x2
     {"op": "ConcatD", "name": "concat3",
      "input_desc": [tensor([2, k], dynamic_input="x") for k in (3, 1, 2)],
      "output_desc": [tensor([2, 6])],
      "attr": [attr("concat_dim", "int", 1), attr("N", "int", 3)]},
     lambda *xs: np.concatenate(xs, axis=1)),
]

# One op that builds beside four that do not: an unknown rank and a device storage format
# (both refused here), shapes that do not broadcast, an output_desc that is not what the op
# gives.  (-1 dims with shape_range build: tests/singleop/test_dynamic.py.)
MIXED = [
    {"op": "Add", "name": "add_rank",
     "input_desc": [tensor([-2]), tensor([-2])], "output_desc": [tensor([-2])]},
    {"op": "Add", "name": "add_mismatch",
     "input_desc": [tensor([2, 3]), tensor([4, 5])], "output_desc": [tensor([2, 3])]},
    {"op": "Relu", "name": "relu_ok", "input_desc": [tensor([2, 3])],
     "output_desc": [tensor([2, 3])]},
    {"op": "Add", "name": "add_wrong_output",
     "input_desc": [tensor([2, 3]), tensor([3])], "output_desc": [tensor([3, 2])]},
    {"op": "Relu", "name": "relu_5hd",
     "input_desc": [tensor([1, 1, 2, 2, 16], "float16", "NC1HWC0", origin_format="NCHW",
                           origin_shape=[1, 16, 2, 2])],
     "output_desc": [tensor([1, 1, 2, 2, 16], "float16", "NC1HWC0")]},
]


def write(path, ops: list) -> str:
    path.write_text(json.dumps(ops, indent=2))
    return str(path)


def random_inputs(op: dict, seed: int = 0) -> list:
    """One array per Data input (constant inputs are in the model)."""
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal(t["shape"]) * 4).astype(
        {"float": np.float32, "float16": np.float16}[t["type"]])
        for t in op["input_desc"] if not t.get("is_const")]
