"""--op_select_implmode / --optypelist_for_implmode / --op_precision_mode through atc choose the
kernels (docs/precision.md, "Kernel variants"): the ops moved to high_precision get other kernel
binaries than the default build, the others keep theirs, --mode=1 shows the attribute, and the
ge.offline_compile / --raw_ge_options spellings give the same OM kernels."""
from __future__ import annotations

import json

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from ge.graph.attr_names import ATTR_IMPL_MODE, ATTR_KERNEL_SHA256
from ge.om import read_om
from _samples import SAMPLE_SOC

FP32 = "--precision_mode=must_keep_origin_dtype"
VARIANT_TYPES = {"LayerNorm", "SoftmaxV2", "Log", "Erf", "ReduceSum", "Sigmoid"}


def _model() -> onnx.ModelProto:
    """x -> LayerNormalization -> Softmax -> Log;  Erf(x);  ReduceSum(x);  Sigmoid(x);  Abs(x)
    (Abs has one variant)."""
    n = 64
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, n])
    outs = [helper.make_tensor_value_info(f"y{k}", TensorProto.FLOAT, None) for k in range(5)]
    inits = [helper.make_tensor("g", TensorProto.FLOAT, [n], np.ones(n, np.float32)),
             helper.make_tensor("b", TensorProto.FLOAT, [n], np.zeros(n, np.float32)),
             helper.make_tensor("axes", TensorProto.INT64, [1], [1])]
    nodes = [helper.make_node("LayerNormalization", ["x", "g", "b"], ["ln"], axis=-1),
             helper.make_node("Softmax", ["ln"], ["sm"], axis=-1),
             helper.make_node("Log", ["sm"], ["y0"]),
             helper.make_node("Erf", ["x"], ["y1"]),
             helper.make_node("ReduceSum", ["x", "axes"], ["y2"], keepdims=0),
             helper.make_node("Sigmoid", ["x"], ["y3"]),
             helper.make_node("Abs", ["x"], ["y4"])]
    graph = helper.make_graph(nodes, "variants", [x], outs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.fixture(scope="module")
def compile_(tmp_path_factory, atc_main):
    work = tmp_path_factory.mktemp("implmode")
    onnx.save(_model(), str(work / "v.onnx"))

    def run(output: str, *flags: str, model: str = "v.onnx"):
        (work / output).mkdir()
        res = atc_main("--framework=5", f"--model={work / model}",
                       f"--output={work / output / 'm'}", f"--soc_version={SAMPLE_SOC}", FP32,
                       *flags, cwd=work)
        assert res.rc == 0, res.text
        return work / output / "m.om"
    return work, run


def _kernels(om) -> dict:
    """{op type: (kernel sha256, impl mode attribute or None)} of the compiled ops."""
    out = {}
    for op in read_om(str(om)).model_def.graph[0].op:
        if ATTR_KERNEL_SHA256 in op.attr:
            mode = op.attr[ATTR_IMPL_MODE].i if ATTR_IMPL_MODE in op.attr else None
            out[op.type] = (op.attr[ATTR_KERNEL_SHA256].s, mode)
    return out


@pytest.fixture(scope="module")
def plain(compile_):
    kernels = _kernels(compile_[1]("plain"))
    assert VARIANT_TYPES | {"Abs"} <= set(kernels)          # every op has a C kernel
    assert {mode for _, mode in kernels.values()} == {None}
    return kernels


def _changed(plain, other) -> set:
    return {t for t in plain if plain[t][0] != other[t][0]}


def test_select_implmode_changes_every_variant_kernel(compile_, plain, atc_main):
    work, run = compile_
    om = run("all", "--op_select_implmode=high_precision")
    kernels = _kernels(om)
    assert _changed(plain, kernels) == VARIANT_TYPES
    assert {t for t, (_, mode) in kernels.items() if mode == 0x4} == VARIANT_TYPES
    assert atc_main("--mode=1", f"--om={om}", "--json=all.json", cwd=work).rc == 0
    ops = json.loads((work / "all.json").read_text())["graph"][0]["op"]
    shown = {op["type"]: {kv["key"]: kv["value"] for kv in op.get("attr", [])}
             for op in ops}
    assert {t for t, a in shown.items() if ATTR_IMPL_MODE in a} == VARIANT_TYPES
    assert {int(a[ATTR_IMPL_MODE]["i"]) for a in shown.values() if ATTR_IMPL_MODE in a} == {4}


def test_type_list_and_ini_choose_per_op(compile_, plain, tmp_path):
    _, run = compile_
    listed = _kernels(run("listed", "--op_select_implmode=high_precision",
                          "--optypelist_for_implmode=SoftmaxV2,Erf"))
    assert _changed(plain, listed) == {"SoftmaxV2", "Erf"}
    ini = tmp_path / "op_precision.ini"
    ini.write_text("[ByOpType]\nLayerNorm=high_precision\nReduceSum=high_performance\n")
    by_file = _kernels(run("ini", f"--op_precision_mode={ini}"))
    assert _changed(plain, by_file) == {"LayerNorm"}      # explicit high_performance = default
    assert by_file["ReduceSum"][1] == 0x2


def test_three_spellings_give_the_same_kernels(compile_, plain):
    from ge.offline_compile import build_model, save_model
    from ge.parser.onnx import parse_onnx
    work, run = compile_
    flag = _kernels(run("flag", "--op_select_implmode=high_precision",
                        "--optypelist_for_implmode=ReduceSum"))
    options = {"ge.opSelectImplmode": "high_precision", "ge.optypelistForImplmode": "ReduceSum"}
    (work / "raw.json").write_text(json.dumps({"compile options": {"global": options}}))
    raw = _kernels(run("raw", f"--raw_ge_options={work / 'raw.json'}"))
    graph = parse_onnx(str(work / "v.onnx"), {"ge.socVersion": SAMPLE_SOC})
    api = build_model(graph, {"ge.socVersion": SAMPLE_SOC,
                              "ge.exec.precision_mode": "must_keep_origin_dtype", **options})
    (work / "api").mkdir()
    save_model(str(work / "api" / "m"), api)
    assert flag == raw == _kernels(work / "api" / "m.om")
    assert _changed(plain, flag) == {"ReduceSum"}


def _matmul_gelu() -> onnx.ModelProto:
    """MatMul -> x * 0.5 * (1 + erf(x / sqrt2)): fused into one MatMul with GeluV2 applied to
    its output (BuiltinFusion)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 32])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    w = np.random.default_rng(0).standard_normal((32, 32)).astype(np.float32)
    inits = [helper.make_tensor("w", TensorProto.FLOAT, [32, 32], w.reshape(-1)),
             helper.make_tensor("r2", TensorProto.FLOAT, [], [np.sqrt(2.0)]),
             helper.make_tensor("one", TensorProto.FLOAT, [], [1.0]),
             helper.make_tensor("half", TensorProto.FLOAT, [], [0.5])]
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]),
             helper.make_node("Div", ["h", "r2"], ["d"]),
             helper.make_node("Erf", ["d"], ["e"]),
             helper.make_node("Add", ["e", "one"], ["a"]),
             helper.make_node("Mul", ["h", "a"], ["m"]),
             helper.make_node("Mul", ["m", "half"], ["y"])]
    graph = helper.make_graph(nodes, "gelu", [x], [y], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_fused_activation_takes_its_mode(compile_):
    work, run = compile_
    onnx.save(_matmul_gelu(), str(work / "gelu.onnx"))

    plain = _kernels(run("gelu_plain", model="gelu.onnx"))
    listed = _kernels(run("gelu_listed", "--op_select_implmode=high_precision",
                          "--optypelist_for_implmode=GeluV2", model="gelu.onnx"))
    (matmul,) = plain                                  # the GELU lives in the MatMul kernel
    assert "MatMul" in matmul
    assert plain[matmul][1] is None and listed[matmul][1] == 0x4
    assert plain[matmul][0] != listed[matmul][0]
