"""float16 / bfloat16 kernels against the reference kernels at the same dtype, for EVERY op with
a kernel generator (docs/kernel-abi.md, "Low precision"): random inputs, the node's float
tensors made float16 (then bfloat16), the compiled kernel and ge.ops' reference kernel run
through ge.graph.lowprec (float32 compute, outputs rounded to nearest even) must give the same
bits; the ops of lowprec.REFERENCE_ULP may differ by at most that many units in the last place
of the dtype (their float32 kernel and reference already differ in the last float32 bits).
Plus the Cast kernels, bit-exact on the conversions' edge cases."""
from __future__ import annotations

import hashlib
import json
import os
import zlib
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from ge import ops
from ge.compiler.opcompile.build import build
from ge.compiler.opcompile.generators import render
from ge.compiler.opcompile.hostcall import load_kernel
from ge.compiler.opcompile.lowprec import REFERENCE_ULP
from ge.compiler.opcompile.signature import OpSignature, TensorSig
from ge.graph.lowprec import bf16_to_f32, call_lowprec, f32_to_bf16
from ge.graph.types import DataType, from_numpy_dtype, to_numpy_dtype
from kernel_check import full_attrs

F32, I32, I64, U8, I8 = np.float32, np.int32, np.int64, np.uint8, np.int8
LOW = ("DT_FLOAT16", "DT_BF16")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _n(rng, *shape, scale=2.0):
    return (rng.standard_normal(shape) * scale).astype(F32)


def _pos(rng, *shape):
    return (np.abs(rng.standard_normal(shape)) * 2 + 0.1).astype(F32)


def _binary(rng, positive=False):
    a = _pos(rng, 4, 64) if positive else _n(rng, 4, 64)
    return [a, _n(rng, 64)], {}


def _compare(rng):
    a = _n(rng, 4, 64)
    b = a[1].copy()
    b[::3] += 0.5
    return [a, b], {}


UNARY_POSITIVE = ("Sqrt", "Rsqrt", "Log", "Reciprocal")
UNARY_ATTRS = {"Muls": {"value": 1.5}, "Adds": {"value": -0.25},
               "LeakyRelu": {"negative_slope": 0.1}, "Elu": {"alpha": 0.5},
               "HardSigmoid": {"alpha": 0.2, "beta": 0.5}}
UNARY = ("Sqrt", "Rsqrt", "Reciprocal", "Exp", "Log", "Erf", "Abs", "Neg", "Sign", "Floor",
         "Ceil", "Sin", "Cos", "Tanh", "Muls", "Adds", "Relu", "LeakyRelu", "Sigmoid",
         "HardSwish", "Mish", "Elu", "Selu", "Softplus", "Softsign", "HardSigmoid", "GeluV2")


def _unary(op):
    def case(rng):
        x = _pos(rng, 4, 64) if op in UNARY_POSITIVE else _n(rng, 4, 64)
        return [x], UNARY_ATTRS.get(op, {})
    return case


_LN = {"begin_norm_axis": -1, "begin_params_axis": -1, "epsilon": 1e-5}
_POOL = {"ksize": [1, 1, 3, 3], "strides": [1, 1, 2, 2], "pads": [1, 1, 1, 1],
         "data_format": "NCHW"}
_CONV = {"strides": [1, 1, 1, 1], "pads": [1, 1, 1, 1], "dilations": [1, 1, 1, 1],
         "groups": 1, "data_format": "NCHW"}
_QCONV = {"strides": [1, 1], "pads": [1, 1, 1, 1], "dilations": [1, 1], "groups": 1}
_AIPP = {"aipp_mode": "static", "input_format": "RGB888_U8", "src_image_size_w": 8,
         "src_image_size_h": 6, "mean_chn_0": 100, "mean_chn_1": 110, "mean_chn_2": 120,
         "var_reci_chn_0": 0.0171, "var_reci_chn_1": 0.0175, "var_reci_chn_2": 0.0174}


def _recurrent(gates):
    def case(rng):
        h = 4
        return ([_n(rng, 3, 2, 5, scale=1.0), _n(rng, 1, gates * h, 5, scale=0.5),
                 _n(rng, 1, gates * h, h, scale=0.5), _n(rng, 1, 2 * gates * h, scale=0.5)],
                {"hidden_size": h})
    return case


def _u8(rng, *shape):
    return rng.integers(0, 256, shape).astype(U8)


# op -> rng -> (inputs, attrs); float32 inputs become the tested dtype, the rest stay.
CASES = {
    **{op: (lambda rng: _binary(rng)) for op in ("Add", "Sub", "Mul", "RealDiv", "Maximum",
                                                 "Minimum")},
    "Pow": lambda rng: _binary(rng, positive=True),
    **{op: _compare for op in ("Equal", "Less", "Greater", "LessEqual", "GreaterEqual")},
    **{op: _unary(op) for op in UNARY},
    "SelectV2": lambda rng: ([rng.standard_normal((4, 64)) > 0, _n(rng, 4, 64), _n(rng, 64)],
                             {}),
    "AccumulateNV2": lambda rng: ([_n(rng, 4, 64) for _ in range(3)], {"N": 3}),
    "ClipByValue": lambda rng: ([_n(rng, 4, 64), np.asarray(-1.0, F32),
                                 np.asarray(1.5, F32)], {}),
    "BroadcastTo": lambda rng: ([_n(rng, 16), np.asarray([3, 4, 16], I64)], {}),
    "Expand": lambda rng: ([_n(rng, 3, 1), np.asarray([3, 16], I64)], {}),
    "SoftmaxV2": lambda rng: ([_n(rng, 4, 64, scale=4.0)], {"axes": [-1]}),
    "LogSoftmaxV2": lambda rng: ([_n(rng, 4, 64, scale=4.0)], {"axes": [-1]}),
    "LayerNorm": lambda rng: ([_n(rng, 4, 64), _n(rng, 64), _n(rng, 64)], _LN),
    "MaxPoolV3": lambda rng: ([_n(rng, 1, 4, 9, 9)], _POOL),
    "AvgPoolV2": lambda rng: ([_n(rng, 1, 4, 9, 9)], _POOL),
    "GlobalAveragePool": lambda rng: ([_n(rng, 2, 4, 7, 7)], {}),
    **{op: (lambda rng: ([_n(rng, 4, 8, 16), np.asarray([1], I64)], {"keep_dims": False}))
       for op in ("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin")},
    "Transpose": lambda rng: ([_n(rng, 2, 3, 4), np.asarray([2, 0, 1], I64)], {}),
    "TransposeD": lambda rng: ([_n(rng, 2, 3, 4)], {"perm": [1, 2, 0]}),
    "Concat": lambda rng: ([np.asarray(1, I32), _n(rng, 2, 3), _n(rng, 2, 5)], {"N": 2}),
    "ConcatV2": lambda rng: ([_n(rng, 2, 3), _n(rng, 2, 5), np.asarray(1, I32)], {"N": 2}),
    "ConcatD": lambda rng: ([_n(rng, 2, 3), _n(rng, 2, 5)], {"concat_dim": 1, "N": 2}),
    "Split": lambda rng: ([np.asarray(1, I32), _n(rng, 2, 6)], {"num_split": 3}),
    "SplitV": lambda rng: ([_n(rng, 4, 3), np.asarray([1, 3], I64), np.asarray(0, I32)],
                           {"num_split": 2}),
    "Slice": lambda rng: ([_n(rng, 4, 5, 6), np.asarray([1, 0, 2], I64),
                           np.asarray([2, -1, 3], I64)], {}),
    "StridedSliceV2": lambda rng: ([_n(rng, 4, 5, 6), np.asarray([1, 4], I64),
                                    np.asarray([4, 0], I64), np.asarray([0, 2], I64),
                                    np.asarray([1, -1], I64)], {}),
    "MatMul": lambda rng: ([_n(rng, 8, 32), _n(rng, 32, 16)], {}),
    "MatMulV2": lambda rng: ([_n(rng, 8, 32), _n(rng, 16, 32), _n(rng, 16)],
                             {"transpose_x2": True}),
    "BatchMatMul": lambda rng: ([_n(rng, 2, 8, 32), _n(rng, 2, 32, 16)], {}),
    "BatchMatMulV2": lambda rng: ([_n(rng, 2, 8, 32), _n(rng, 32, 16)], {}),
    "GEMM": lambda rng: ([_n(rng, 8, 32), _n(rng, 32, 16), _n(rng, 16),
                          np.asarray([0.5], F32), np.asarray([2.0], F32)], {}),
    "Conv2D": lambda rng: ([_n(rng, 1, 4, 8, 8), _n(rng, 6, 4, 3, 3, scale=0.5), _n(rng, 6)],
                           _CONV),
    "CommonLSTM": _recurrent(4),
    "CommonGRU": _recurrent(3),
    "CommonRNN": _recurrent(1),
    "Quantize": lambda rng: ([_n(rng, 2, 3, 8), np.asarray([0.05, 0.02, 0.04], F32),
                              np.asarray([3, -2, 0], I8)], {"dtype": "torch.qint8", "axis": 1}),
    "DequantizeLinear": lambda rng: ([rng.integers(-128, 128, (2, 3, 8)).astype(I8),
                                      np.asarray([0.05, 0.02, 0.04], F32),
                                      np.asarray([3, -2, 0], I8)], {"axis": 1}),
    "DynamicQuantizeLinear": lambda rng: ([_n(rng, 4, 16)], {}),
    "AscendQuant": lambda rng: ([_n(rng, 2, 64)], {"scale": 20.0, "offset": 3.0}),
    "AscendAntiQuant": lambda rng: ([rng.integers(-128, 128, (2, 64)).astype(I8)],
                                    {"scale": 0.05, "offset": -3.0}),
    "QLinearMatMul": lambda rng: ([_u8(rng, 4, 16), np.asarray(0.02, F32), np.asarray(120, U8),
                                   _u8(rng, 16, 8), np.asarray(0.03, F32), np.asarray(128, U8),
                                   np.asarray(0.5, F32), np.asarray(100, U8)], {}),
    "QLinearConv": lambda rng: ([_u8(rng, 1, 3, 6, 6), np.asarray(0.02, F32),
                                 np.asarray(120, U8), _u8(rng, 4, 3, 3, 3),
                                 np.asarray(0.03, F32), np.asarray(128, U8),
                                 np.asarray(0.5, F32), np.asarray(100, U8)], _QCONV),
    "Aipp": lambda rng: ([_u8(rng, 1, 6, 8, 3)],
                         {"aipp_config_path": json.dumps(_AIPP), "output_shape": [1, 3, 6, 8]}),
}
# Ops whose every tensor is an integer: no float16/bfloat16 signature exists.
NO_FLOAT_TENSORS = {"MatMulInteger": "uint8/int8 in, int32 out",
                    "ConvInteger": "uint8/int8 in, int32 out"}
# Cast has its own tests below (its dtypes are its attribute, not the inputs').
OWN_TESTS = {"Cast"}
GENERATOR_OPS = sorted(t for t in ops.all_ops() if ops.get(t).kernel_gen
                       and ops.get(t).kernel_gen != "custom")


def test_every_generator_op_has_a_low_precision_case():
    missing = [op for op in GENERATOR_OPS
               if op not in CASES and op not in NO_FLOAT_TENSORS and op not in OWN_TESTS]
    assert not missing, f"add float16/bfloat16 cases for {missing}"


def _low(a, dtype):
    return a.astype(np.float16) if dtype == "DT_FLOAT16" else f32_to_bf16(a)


def _storage(dtype):
    return np.uint16 if dtype == "DT_BF16" else to_numpy_dtype(DataType[dtype])


def _prepare(op, dtype, seed=None):
    """(signature, low-precision inputs, reference outputs, output types) of one op at one
    dtype."""
    rng = np.random.default_rng(zlib.crc32(f"{op}/{dtype}".encode()) if seed is None else seed)
    inputs, attrs = CASES[op](rng)
    attrs = full_attrs(op, attrs)
    if op == "AscendAntiQuant":
        attrs["dtype"] = 1 if dtype == "DT_FLOAT16" else 0
    low = [_low(a, dtype) if isinstance(a, np.ndarray) and a.dtype == F32 else a for a in inputs]
    in_types = [dtype if isinstance(a, np.ndarray) and a.dtype == F32 else
                from_numpy_dtype(np.asarray(a).dtype).name for a in inputs]
    kernel = ops.get(op).kernel
    widened = [bf16_to_f32(x) if t == "DT_BF16" else
               (x.astype(F32) if t == "DT_FLOAT16" else x) for x, t in zip(low, in_types)]
    out32 = [np.asarray(o) for o in kernel(widened, dict(attrs))]
    out_types = [dtype if o.dtype in (F32, np.float16) else from_numpy_dtype(o.dtype).name
                 for o in out32]
    ref = [np.asarray(r) for r in call_lowprec(kernel, low, dict(attrs), in_types, out_types)]
    consts = {}
    for slot in (ops.get(op).kernel_consts or ()):
        slot = slot % len(low) if slot < 0 else slot
        if slot < len(inputs):
            consts[slot] = np.asarray(inputs[slot]).reshape(-1).tolist()
    fmt = "NCHW" if op in ("Conv2D", "MaxPoolV3", "AvgPoolV2", "GlobalAveragePool",
                           "QLinearConv") else "ND"
    sig = OpSignature.make(op, [TensorSig(tuple(np.shape(a)), t, fmt)
                                for a, t in zip(low, in_types)],
                           [TensorSig(tuple(o.shape), t, fmt) for o, t in zip(out32, out_types)],
                           attrs, consts)
    return sig, low, ref, out_types


def _ordered(bits: np.ndarray) -> np.ndarray:
    """16-bit float patterns -> integers in value order (adjacent values differ by 1)."""
    b = bits.astype(np.int32)
    return np.where(b & 0x8000, -(b & 0x7FFF), b)


def _ulps(got: np.ndarray, ref: np.ndarray, dtype: str) -> int:
    g, r = got.view(np.uint16), np.asarray(ref).view(np.uint16)
    nan_g = (g & 0x7FFF) > (0x7C00 if dtype == "DT_FLOAT16" else 0x7F80)
    nan_r = (r & 0x7FFF) > (0x7C00 if dtype == "DT_FLOAT16" else 0x7F80)
    assert np.array_equal(nan_g, nan_r), "NaN positions differ"
    if not (~nan_g).any():
        return 0
    return int(np.max(np.abs(_ordered(g[~nan_g]) - _ordered(r[~nan_r]))))


def _compile(key):
    """(signature, inputs, reference outputs, output types, kernel bytes, workspace) or the
    error."""
    try:
        sig, low, ref, out_types = _prepare(*key)
        src = render(sig)
        so = build(src.c_source, src.needs_blas, what=sig.op_type)
    except Exception as exc:        # noqa: BLE001 - reported by the op's own test
        return key, exc
    return key, (sig, low, ref, out_types, so, src.workspace_bytes)


@pytest.fixture(scope="session")
def low_kernels():
    """Every case compiled once, 2 jobs in parallel: {(op, dtype): tuple or exception}."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(_compile, [(op, dt) for op in CASES for dt in LOW]))


@pytest.mark.parametrize("dtype", LOW)
@pytest.mark.parametrize("op", sorted(CASES))
def test_kernel_equals_reference_at_low_precision(op, dtype, low_kernels):
    built = low_kernels[(op, dtype)]
    if isinstance(built, Exception):
        raise built
    sig, ins, ref, out_types, so, ws = built
    kernel = load_kernel(so, hashlib.sha256(so).hexdigest())
    outs = [np.zeros(t.shape, _storage(t.dtype)) for t in sig.outputs]
    assert kernel(ins, outs, ws) == 0
    bound = REFERENCE_ULP.get(op, 0)
    for got, want, t in zip(outs, ref, out_types):
        assert got.shape == want.shape
        if t in LOW:
            assert _ulps(got, want, t) <= bound, f"{op} {t}: beyond {bound} ulp"
        else:
            np.testing.assert_array_equal(got, want)


def test_exceptions_are_documented():
    with open(os.path.join(ROOT, "docs", "kernel-abi.md"), encoding="utf-8") as f:
        text = f.read()
    for op in REFERENCE_ULP:
        assert f"`{op}`" in text, f"docs/kernel-abi.md does not list {op}"


# -- Cast ---------------------------------------------------------------------------------------
def _edge_floats(rng) -> np.ndarray:
    """float32 values at every kind of conversion edge, plus random bit patterns."""
    bits = np.concatenate([
        rng.integers(0, 2 ** 32, 200_000, dtype=np.uint64).astype(np.uint32),
        np.arange(0x33000000 - 64, 0x38800000 + 64, 97, dtype=np.uint32),    # f16 subnormals
        np.arange(0x477FE000 - 4096, 0x47800000 + 4096, dtype=np.uint32),    # f16 overflow
        np.asarray([0, 0x7F800000, 0x7FC00000, 0x7F800001, 0x7FA00000, 0x7F7FFFFF, 0x00000001,
                    0x33000000, 0x33000001, 0x477FF000, 0x477FEFFF, 0x3F808000, 0x3F818000],
                   np.uint32)])
    return np.concatenate([bits, bits | np.uint32(0x80000000)]).view(F32)


def _cast_kernel(src: str, dst: str, shape):
    sig = OpSignature.make("Cast", [TensorSig(shape, src)], [TensorSig(shape, dst)],
                           {"dst_type": int(DataType[dst])})
    src_c = render(sig)
    so = build(src_c.c_source, src_c.needs_blas, what="Cast")
    return load_kernel(so, hashlib.sha256(so).hexdigest())


def _cast_ref(x, src: str, dst: str):
    kernel = ops.get("Cast").kernel
    return call_lowprec(kernel, [x], {"dst_type": int(DataType[dst])}, [src], [dst])[0]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")     # numpy's overflow to infinity
@pytest.mark.parametrize("dst", LOW)
def test_cast_float32_to_low_precision_is_numpy_bit_for_bit(dst, rng):
    """Round to nearest even, overflow, subnormals, NaN payloads: the C conversion is numpy's
    (float16) and ml_dtypes' (bfloat16, finite values), on ~400k values."""
    import ml_dtypes
    x = _edge_floats(rng)
    got = np.zeros(x.shape, _storage(dst))
    assert _cast_kernel("DT_FLOAT", dst, x.shape)([x], [got]) == 0
    ref = _cast_ref(x, "DT_FLOAT", dst)
    np.testing.assert_array_equal(got.view(np.uint16), ref.view(np.uint16))
    with np.errstate(over="ignore", invalid="ignore"):
        if dst == "DT_FLOAT16":
            independent = x.astype(np.float16).view(np.uint16)
            finite = np.ones(x.shape, bool)
        else:
            independent = x.astype(ml_dtypes.bfloat16).view(np.uint16)
            finite = ~np.isnan(x)
    np.testing.assert_array_equal(got.view(np.uint16)[finite], independent[finite])


CAST_PAIRS = [("DT_FLOAT16", "DT_FLOAT"), ("DT_BF16", "DT_FLOAT"), ("DT_FLOAT16", "DT_BF16"),
              ("DT_BF16", "DT_FLOAT16"), ("DT_FLOAT16", "DT_INT32"), ("DT_BF16", "DT_INT64"),
              ("DT_FLOAT16", "DT_BOOL"), ("DT_INT8", "DT_FLOAT16"), ("DT_UINT8", "DT_BF16"),
              ("DT_BOOL", "DT_FLOAT16"), ("DT_INT16", "DT_BF16"), ("DT_FLOAT16", "DT_DOUBLE")]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")     # numpy's casts of NaN / infinity
@pytest.mark.parametrize("src,dst", CAST_PAIRS)
def test_cast_pairs_equal_the_reference(src, dst, rng):
    """Every 16-bit pattern of a float16/bfloat16 source (NaN, infinities, subnormals
    included; integer destinations: the values they hold), or the integer range."""
    if src in LOW:
        x = np.arange(65536, dtype=np.uint16)
        x = x.view(np.float16) if src == "DT_FLOAT16" else x
        if dst in ("DT_INT32", "DT_INT64"):
            w = bf16_to_f32(x) if src == "DT_BF16" else x.astype(F32)
            x = x[np.isfinite(w) & (np.abs(w) < 2 ** 31)]
    elif src == "DT_BOOL":
        x = rng.integers(0, 2, 1000).astype(bool)
    else:
        info = np.iinfo(to_numpy_dtype(DataType[src]))
        x = np.arange(info.min, info.max + 1).astype(to_numpy_dtype(DataType[src]))
    got = np.zeros(x.shape, _storage(dst))
    assert _cast_kernel(src, dst, x.shape)([x], [got]) == 0
    ref = np.asarray(_cast_ref(x, src, dst))
    assert ref.dtype == got.dtype
    np.testing.assert_array_equal(got.view(np.uint8), ref.view(np.uint8))


# -- the reference side: interpreter and constant folding --------------------------------------
def _bf16_graph(const_input: bool):
    """x (bfloat16, or a bfloat16 constant) * c (bfloat16 constant) -> Sigmoid -> out."""
    from ge.compiler import prepare
    from ge.graph import Graph
    from ge.graph.tensor import Tensor, TensorDesc
    g = Graph("g")
    desc = TensorDesc([4, 8], data_type=DataType.DT_BF16)

    def const(name, bits):
        t = Tensor.from_numpy(bits)
        t._dtype = DataType.DT_BF16
        n = g.add_node("Const", name, attrs={"value": t}, output_names=["y"])
        n.update_output_desc(0, desc)
        return n
    rng = np.random.default_rng(5)
    xv, cv = (f32_to_bf16(rng.standard_normal((4, 8)).astype(F32) * 3) for _ in range(2))
    if const_input:
        x = const("x", xv)
    else:
        x = g.add_node("Data", "x", attrs={"index": 0}, input_names=["x"], output_names=["y"])
        x.update_input_desc(0, desc)
        x.update_output_desc(0, desc)
    c = const("c", cv)
    mul = g.add_node("Mul", "mul", inputs=[(x, 0), (c, 0)])
    sig = g.add_node("Sigmoid", "sig", inputs=[(mul, 0)])
    g.add_node("NetOutput", "out", inputs=[(sig, 0)])
    prepare.infer_shapes(g)
    product = f32_to_bf16(bf16_to_f32(xv) * bf16_to_f32(cv))
    expected = f32_to_bf16(1 / (1 + np.exp(-bf16_to_f32(product).astype(np.float64))))
    return g, xv, expected


def test_interpreter_computes_bfloat16_in_float32_and_rounds_each_op():
    from ge.ops.interpreter import run_graph
    g, xv, expected = _bf16_graph(const_input=False)
    assert g.node("sig").out_desc(0).data_type == DataType.DT_BF16
    (out,) = run_graph(g, [xv])
    assert out.dtype == np.uint16
    np.testing.assert_array_equal(out, expected)
    (again,) = run_graph(g, [bf16_to_f32(xv)])       # float32 values are rounded first
    np.testing.assert_array_equal(again, expected)


def test_constant_folding_keeps_bfloat16_constants_bfloat16():
    from ge.compiler.prepare import fold_constants
    g, _, expected = _bf16_graph(const_input=True)
    assert fold_constants(g) == 2
    (folded,) = [n for n in g.get_all_nodes() if n.type == "Const"]
    assert folded.out_desc(0).data_type == DataType.DT_BF16
    assert folded.attr("value").data_type == DataType.DT_BF16
    np.testing.assert_array_equal(folded.attr("value").numpy(), expected)
