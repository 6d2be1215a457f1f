"""float16 and bfloat16 ONNX models end to end (docs/kernel-abi.md, "Low precision"): compiled
by the ATC main flow, run by ge.runtime; the low-precision ops are compiled kernels
(AIcoreEngine in the OM), the outputs are within float16/bfloat16 tolerance of onnxruntime's,
and equal, bit for bit, the same model run with every op on the AiCpu engine (the reference
kernels at the same dtypes).  Plus the runtime's float16/bfloat16 files."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from _build import env_with_repo, onnxruntime_outputs
from ge.graph.lowprec import bf16_to_f32, f32_to_bf16

F16, BF16 = TensorProto.FLOAT16, TensorProto.BFLOAT16
LOW_OPS = ("conv1", "relu", "pool", "conv2", "gap", "gemm", "add", "softmax", "cast_in",
           "cast_out")


def _tensor(name, values, elem):
    if elem == F16:
        return numpy_helper.from_array(values.astype(np.float16), name)
    t = helper.make_tensor(name, BF16, values.shape,
                           f32_to_bf16(values).tobytes(), raw=True)
    return t


def low_model(elem) -> onnx.ModelProto:
    """x (float16/bfloat16) -> Conv -> Relu -> MaxPool -> Conv -> GlobalAveragePool -> Flatten
    -> Gemm -> Add(Cast(y float32)) -> Softmax : prob; and Cast(gemm, float32) : logits."""
    rng = np.random.default_rng(7)
    w1 = rng.standard_normal((8, 3, 3, 3)).astype(np.float32) * 0.3
    b1 = rng.standard_normal(8).astype(np.float32) * 0.1
    w2 = rng.standard_normal((16, 8, 3, 3)).astype(np.float32) * 0.2
    wf = rng.standard_normal((10, 16)).astype(np.float32) * 0.5
    bf = rng.standard_normal(10).astype(np.float32) * 0.1
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("Conv", ["p1", "w2"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
        helper.make_node("GlobalAveragePool", ["c2"], ["g"], name="gap"),
        helper.make_node("Flatten", ["g"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "wf", "bf"], ["logits16"], name="gemm", transB=1),
        helper.make_node("Cast", ["y"], ["y16"], name="cast_in", to=elem),
        helper.make_node("Add", ["logits16", "y16"], ["s"], name="add"),
        helper.make_node("Softmax", ["s"], ["prob"], name="softmax", axis=1),
        helper.make_node("Cast", ["logits16"], ["logits"], name="cast_out", to=TensorProto.FLOAT),
    ]
    graph = helper.make_graph(
        nodes, "lowprec",
        [helper.make_tensor_value_info("x", elem, [1, 3, 16, 16]),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
        [helper.make_tensor_value_info("prob", elem, [1, 10]),
         helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10])],
        [_tensor("w1", w1, elem), _tensor("b1", b1, elem), _tensor("w2", w2, elem),
         _tensor("wf", wf, elem), _tensor("bf", bf, elem)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def fp32_twin(model: onnx.ModelProto) -> onnx.ModelProto:
    """The same model in float32 (weights widened exactly): onnxruntime's CPU has few bfloat16
    kernels, so the bfloat16 model is compared with its float32 twin."""
    twin = onnx.ModelProto()
    twin.CopyFrom(model)
    for init in twin.graph.initializer:
        values = numpy_helper.to_array(init)
        if init.data_type == BF16:
            values = bf16_to_f32(np.frombuffer(init.raw_data, np.uint16)).reshape(init.dims)
        init.CopyFrom(numpy_helper.from_array(np.asarray(values, np.float32), init.name))
    for vi in list(twin.graph.input) + list(twin.graph.output):
        vi.type.tensor_type.elem_type = TensorProto.FLOAT
    for node in twin.graph.node:
        for a in node.attribute:
            if a.name == "to":
                a.i = TensorProto.FLOAT
    return twin


@pytest.fixture(scope="module")
def low_oms(tmp_path_factory, atc_main, shared_kernel_cache):
    """{(dtype, engines): (onnx path, om path)} for float16/bfloat16, compiled kernels and
    AiCpu only."""
    root = tmp_path_factory.mktemp("lowprec_models")
    raw = root / "aicpu_only.json"
    raw.write_text(json.dumps({"compile options": {"graph": {
        "ge.exec.exclude_engines": "AiCore|AiVec"}}}))
    out = {}
    for name, elem in (("fp16", F16), ("bf16", BF16)):
        path = root / f"{name}.onnx"
        onnx.save(low_model(elem), str(path))
        for engines, extra in (("kernels", []), ("aicpu", [f"--raw_ge_options={raw}"])):
            stem = f"{name}_{engines}"
            run = atc_main("--framework=5", f"--model={path}", f"--output={stem}",
                           "--soc_version=Ascend310P3", "--precision_mode=must_keep_origin_dtype",
                           f"--op_compiler_cache_dir={shared_kernel_cache}", *extra, cwd=root)
            assert run.rc == 0, run.text
            out[(name, engines)] = (path, root / f"{stem}.om")
    return out


def _inputs(name):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 3, 16, 16)).astype(np.float32)
    y = rng.standard_normal((1, 10)).astype(np.float32)
    return [x.astype(np.float16) if name == "fp16" else f32_to_bf16(x), y]


def _engine_names(om_path) -> dict:
    """{op name: engine}; an activation fused into its producer (ConvActivationFusionPass)
    counts as running where the producer runs."""
    from ge.om import read_om
    om = read_om(str(om_path))
    out = {}
    for graph in om.model_def.graph:
        for op in graph.op:
            attr = op.attr.get("_lxfusion_engine_name")
            out[op.name] = attr.s.decode() if attr is not None else ""
            fused = op.attr.get("fused_activation")
            if fused is not None and fused.s.decode() == "Relu" and op.name == "conv1":
                out["relu"] = out[op.name]
    return out


@pytest.mark.parametrize("name", ["fp16", "bf16"])
def test_low_precision_model_runs_on_compiled_kernels(name, low_oms):
    from ge.runtime import load
    onnx_path, om = low_oms[(name, "kernels")]
    engines = _engine_names(om)
    for op in LOW_OPS:
        hits = [e for n, e in engines.items() if n == op or f"_{op}_" in n]
        assert hits and all(e == "AIcoreEngine" for e in hits), (op, engines)
    with load(str(om)) as model:
        assert [s.data_type for s in model.inputs] == [
            "DT_FLOAT16" if name == "fp16" else "DT_BF16", "DT_FLOAT"]
        prob, logits = model.run(_inputs(name))
    assert prob.dtype == (np.float16 if name == "fp16" else np.uint16)
    got = prob.astype(np.float32) if name == "fp16" else bf16_to_f32(prob)
    x, y = _inputs(name)
    if name == "fp16":      # onnxruntime runs the float16 model itself
        want = onnxruntime_outputs(onnx.load(str(onnx_path)), {"x": x, "y": y})
        tol = 1e-2
    else:
        want = onnxruntime_outputs(fp32_twin(onnx.load(str(onnx_path))),
                                   {"x": bf16_to_f32(x), "y": y})
        tol = 4e-2
    np.testing.assert_allclose(got, np.asarray(want[0], np.float32), rtol=tol, atol=tol / 10)
    np.testing.assert_allclose(logits, np.asarray(want[1], np.float32), rtol=tol, atol=tol)
    assert abs(float(got.sum()) - 1.0) < 2 * tol


@pytest.mark.parametrize("name", ["fp16", "bf16"])
def test_compiled_kernels_equal_the_reference_kernels_bit_for_bit(name, low_oms):
    from ge.runtime import load
    _, om_k = low_oms[(name, "kernels")]
    _, om_r = low_oms[(name, "aicpu")]
    with load(str(om_k)) as kernels, load(str(om_r)) as reference:
        assert set(reference.engines.values()) == {"AiCpu"}
        got, seen_k = kernels.run(_inputs(name), capture=True)
        want, seen_r = reference.run(_inputs(name), capture=True)
    for g, w in zip(got, want):
        assert g.tobytes() == w.tobytes()
    for op, values in seen_k.items():            # every intermediate tensor too
        if op in seen_r:
            for g, w in zip(values, seen_r[op]):
                assert g.tobytes() == w.tobytes(), op


def test_runtime_command_line_reads_and_writes_low_precision_files(low_oms, tmp_path):
    """bfloat16: a float32 .npy input is rounded to nearest even (a uint16 .npy is taken as bit
    patterns), the .npy output holds float32 values, the .bin output the bit patterns."""
    _, om = low_oms[("bf16", "kernels")]
    x, y = _inputs("bf16")
    np.save(tmp_path / "x.npy", bf16_to_f32(x))            # float32 values
    np.save(tmp_path / "xbits.npy", x)                     # uint16 bit patterns
    np.save(tmp_path / "y.npy", y)
    outs = {}
    for fmt, xfile in (("NPY", "x.npy"), ("BIN", "xbits.npy")):
        run = subprocess.run([sys.executable, "-m", "ge.runtime", "--model", str(om),
                              "--input", f"{tmp_path / xfile},{tmp_path / 'y.npy'}",
                              "--output", str(tmp_path / fmt), "--outfmt", fmt],
                             env=env_with_repo(), capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        outs[fmt] = run.stdout
    prob_npy = np.load(tmp_path / "NPY" / "output_0.npy")
    prob_bin = np.fromfile(tmp_path / "BIN" / "output_0.bin", np.uint16)
    assert prob_npy.dtype == np.float32
    np.testing.assert_array_equal(f32_to_bf16(prob_npy).reshape(-1), prob_bin)
    np.testing.assert_array_equal(prob_npy.reshape(-1), bf16_to_f32(prob_bin))
    assert "bfloat16 [1, 10]" in outs["NPY"]
