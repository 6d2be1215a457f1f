"""ResNet-50, MobileNetV2 and BERT (CI sizes) under every --precision_mode and
--precision_mode_v2 value: the dtype of every float op is what CANN's rules give
(docs/precision.md, "Rules"), the OM runs, and its outputs are within the tolerance of the dtype
they were computed in (docs/runtime.md) against onnxruntime in float32.  The dtype decisions
and the float16/bfloat16 arithmetic do not depend on the engine, so the matrix is built with
every op on AiCpu (no C kernel compile); one build per low dtype runs compiled kernels."""
from __future__ import annotations

import numpy as np
import pytest

from _om import decisions, const_dtypes, ops_of
import ge.runtime
from ge.graph.serialize import from_proto_dtype
from ge.om import read_om
from ge.runtime.compare import compare_model, random_inputs

MODELS = ("resnet50", "mobilenetv2", "bert")
V1 = ("force_fp16", "force_fp32", "cube_fp16in_fp32out", "must_keep_origin_dtype",
      "allow_fp32_to_fp16", "allow_mix_precision", "allow_mix_precision_fp16",
      "allow_mix_precision_bf16", "allow_fp32_to_bf16")
V2 = {"fp16": "force_fp16", "origin": "must_keep_origin_dtype",
      "cube_fp16in_fp32out": "cube_fp16in_fp32out", "mixed_float16": "allow_mix_precision_fp16",
      "mixed_bfloat16": "allow_mix_precision_bf16"}
CUBE = {"Conv2D", "MatMulV2", "BatchMatMulV2", "MatMul", "BatchMatMul", "GEMM"}
F16, BF16, F32 = "float16", "bfloat16", "float32"
LOW = {"allow_mix_precision": F16, "allow_mix_precision_fp16": F16,
       "allow_mix_precision_bf16": BF16}


def expected(mode: str, op_type: str, member: str, upstream_low: bool) -> str:
    """CANN's rule for an op of a float32 graph (docs/precision.md)."""
    if mode == "force_fp16":
        return F16
    if mode in ("force_fp32", "must_keep_origin_dtype"):
        return F32
    if mode in ("cube_fp16in_fp32out", "allow_fp32_to_fp16"):
        return F16 if op_type in CUBE else F32
    if mode == "allow_fp32_to_bf16":
        return BF16 if op_type in CUBE else F32
    low = LOW[mode]
    if member == "white":
        return low
    if member == "black":
        return F32
    return low if upstream_low else F32


@pytest.fixture(scope="module")
def mode_om(ci_onnx, build_om, tmp_path_factory):
    root = tmp_path_factory.mktemp("modes")
    built = {}

    def get(name: str, value: str, v2: bool = False):
        key = (name, value, v2)
        if key not in built:
            option = "ge.exec.precision_mode_v2" if v2 else "ge.exec.precision_mode"
            built[key] = build_om(ci_onnx(name), root / f"{name}_{value}_{int(v2)}.om",
                                  {option: value})
        return built[key]
    return get


def _upstream_low(om_path) -> dict:
    """{op name: does a float input arrive in float16/bfloat16}."""
    gd = read_om(str(om_path)).model_def.graph[0]
    by_name = {op.name: op for op in gd.op}
    out = {}
    for op in gd.op:
        low = False
        for ref in op.input:
            src, _, idx = ref.rpartition(":")
            producer = by_name.get(src)
            if producer is None or not idx.isdigit() or int(idx) >= len(producer.output_desc):
                continue
            dt = from_proto_dtype(int(producer.output_desc[int(idx)].dtype)).name
            low = low or dt in ("DT_FLOAT16", "DT_BF16")
        out[op.name] = low
    return out


@pytest.mark.parametrize("mode", V1)
@pytest.mark.parametrize("name", MODELS)
def test_placement_follows_the_rules_and_outputs_stay_within_tolerance(ci_onnx, mode_om,
                                                                        name, mode):
    om = mode_om(name, mode)
    decided = decisions(om)
    assert len(decided) > 20
    low_in = _upstream_low(om) if mode in LOW else {}
    wrong = {op: (t, dt, expected(mode, t, member, low_in.get(op, False)))
             for op, (t, dt, member, _) in decided.items()
             if dt != expected(mode, t, member, low_in.get(op, False))}
    assert not wrong, wrong
    result = compare_model(ci_onnx(name), om, seed=0)
    worst = {d for _, d, _, _ in decided.values()}
    want = BF16 if BF16 in worst else F16 if F16 in worst else F32
    assert [d.dtype for d in result.outputs] == [want]
    assert result.ok, [(d.name, d.dtype, d.max_abs) for d in result.outputs]


@pytest.mark.parametrize("v2", sorted(V2))
def test_v2_values_decide_like_their_v1_names(mode_om, ci_onnx, v2):
    mine, theirs = mode_om("bert", v2, v2=True), mode_om("bert", V2[v2])
    a, b = decisions(mine), decisions(theirs)
    assert {k: v[:3] for k, v in a.items()} == {k: v[:3] for k, v in b.items()}
    assert {v[3] for v in a.values()} == {v2}
    inputs = random_inputs(ge.runtime.load(mine).inputs, seed=0)
    for x, y in zip(ge.runtime.load(mine).run(inputs), ge.runtime.load(theirs).run(inputs)):
        assert np.array_equal(x, y)


@pytest.mark.parametrize("name", MODELS)
def test_force_fp32_and_origin_are_bit_for_bit_the_float32_build(mode_om, name):
    fp32 = ge.runtime.load(mode_om(name, "must_keep_origin_dtype"))
    forced = ge.runtime.load(mode_om(name, "force_fp32"))
    inputs = random_inputs(fp32.inputs, seed=1)
    for x, y in zip(fp32.run(inputs), forced.run(inputs)):
        assert x.dtype == np.float32 and np.array_equal(x, y)
    assert not ops_of(mode_om(name, "force_fp32"), "Cast") or name == "bert"  # bert's own


def test_weights_are_stored_in_the_low_dtype_and_casts_cancel(mode_om):
    om = mode_om("resnet50", "force_fp16")
    assert "DT_FLOAT" not in const_dtypes(om)          # every weight folded to float16
    casts = ops_of(om, "Cast")                          # one behind the input, one before
    assert len(casts) == 2                              # the output: nothing in between
    bf16 = mode_om("resnet50", "allow_fp32_to_bf16")    # every weight feeds a conv / matmul
    assert const_dtypes(bf16) == {"DT_BF16"}


def test_compiled_kernels_run_the_low_dtypes(ci_onnx, build_om, tmp_path):
    for mode in ("force_fp16", "allow_mix_precision_bf16"):
        om = build_om(ci_onnx("bert"), tmp_path / f"{mode}.om",
                      {"ge.exec.precision_mode": mode}, aicpu=False)
        assert ge.runtime.load(om).engines and \
            any(e == "AiCore" for e in ge.runtime.load(om).engines.values())
        result = compare_model(ci_onnx("bert"), om, seed=0)
        assert result.ok, [(d.name, d.dtype, d.max_abs) for d in result.outputs]
