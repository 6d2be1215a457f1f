"""Models compiled with gears (CI sizes): the OM structure, every gear run against onnxruntime
at the same shapes, the runtime's gear selection (shapes, msame options, refusals), weights
shared between gears, kernels reused from a static compile, and the same OM from every entry.

  resnet50     --dynamic_batch_size=2,1 (unsorted: the order is kept, gear 0 is batch 2)
  mobilenetv2  --dynamic_image_size=32,32;48,40
  bert         --dynamic_dims over batch and sequence length of both inputs
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ge.runtime
from ge.errors import GeError
from ge.om import read_om
from _gear_models import feeds, gear_model
from _netron import needs_netron, netron_view
from _samples import SAMPLE_SOC

ort = pytest.importorskip("onnxruntime")

KEEP = "--precision_mode=must_keep_origin_dtype"
CASES = {
    "resnet50": (["--input_shape=input:-1,3,32,32", "--dynamic_batch_size=2,1"],
                 [{"input": (2, 3, 32, 32)}, {"input": (1, 3, 32, 32)}]),
    "mobilenetv2": (["--input_shape=input:1,3,-1,-1", "--dynamic_image_size=32,32;48,40"],
                    [{"input": (1, 3, 32, 32)}, {"input": (1, 3, 48, 40)}]),
    "bert": (["--input_shape=input_ids:-1,-1;attention_mask:-1,-1", "--input_format=ND",
              "--dynamic_dims=1,8,1,8;2,16,2,16"],
             [{"input_ids": (1, 8), "attention_mask": (1, 8)},
              {"input_ids": (2, 16), "attention_mask": (2, 16)}]),
}


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("gear_models")
    for name in CASES:
        gear_model(name, directory / f"{name}.onnx")
    return directory


def _compile(atc_main, work: Path, name: str, output: str, *args: str, directory: str = ""):
    out = work / (directory or output)
    out.mkdir(exist_ok=True)
    run = atc_main("--framework=5", f"--model={work / name}.onnx", f"--output={output}",
                   f"--soc_version={SAMPLE_SOC}", KEEP, *args, cwd=out)
    assert run.rc == 0, run.text
    return out / f"{output}.om"


@pytest.fixture(scope="module")
def static_resnet(atc_main, work) -> Path:
    """ResNet at batch 1, compiled before the gear model (its kernels are then in the cache)."""
    return _compile(atc_main, work, "resnet50", "static", "--input_shape=input:1,3,32,32")


@pytest.fixture(scope="module")
def gear_om(atc_main, work, static_resnet):
    done = {}

    def get(name: str) -> Path:
        if name not in done:
            done[name] = _compile(atc_main, work, name, f"{name}_gears", *CASES[name][0])
        return done[name]
    return get


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_gear_matches_onnxruntime(name, gear_om, work):
    model = ge.runtime.load(gear_om(name))
    session = ort.InferenceSession(str(work / f"{name}.onnx"),
                                   providers=["CPUExecutionProvider"])
    for gear, shapes in enumerate(CASES[name][1]):
        inputs = feeds(name, shapes, seed=gear)
        got = model.run(inputs)
        want = session.run(None, inputs)
        for g, w in zip(got, want):
            assert g.shape == w.shape
            scale = max(1.0, float(np.abs(w).max()))
            np.testing.assert_allclose(g, w, rtol=0, atol=2e-4 * scale)


# the other gear kinds of each model (BERT has no image dims: its third kind is batch gears)
OTHER_KINDS = {
    "resnet50/image": (["--input_shape=input:1,3,-1,-1", "--dynamic_image_size=32,32;40,48"],
                       [{"input": (1, 3, 32, 32)}, {"input": (1, 3, 40, 48)}]),
    "resnet50/dims": (["--input_shape=input:-1,3,-1,32", "--input_format=ND",
                       "--dynamic_dims=1,32;2,40"],
                      [{"input": (1, 3, 32, 32)}, {"input": (2, 3, 40, 32)}]),
    "mobilenetv2/batch": (["--input_shape=input:-1,3,32,32", "--dynamic_batch_size=1,2"],
                          [{"input": (1, 3, 32, 32)}, {"input": (2, 3, 32, 32)}]),
    "mobilenetv2/dims": (["--input_shape=input:-1,3,-1,-1", "--input_format=ND",
                          "--dynamic_dims=1,32,32;2,40,48"],
                         [{"input": (1, 3, 32, 32)}, {"input": (2, 3, 40, 48)}]),
    "bert/batch": (["--input_shape=input_ids:-1,8;attention_mask:-1,8",
                    "--dynamic_batch_size=1,2"],
                   [{"input_ids": (1, 8), "attention_mask": (1, 8)},
                    {"input_ids": (2, 8), "attention_mask": (2, 8)}]),
}


@pytest.mark.parametrize("case", sorted(OTHER_KINDS))
def test_other_gear_kinds_match_onnxruntime(case, atc_main, work):
    name, kind = case.split("/")
    args, gears = OTHER_KINDS[case]
    om = _compile(atc_main, work, name, f"{name}_{kind}", *args)
    model = ge.runtime.load(om)
    session = ort.InferenceSession(str(work / f"{name}.onnx"),
                                   providers=["CPUExecutionProvider"])
    for gear, shapes in enumerate(gears):
        inputs = feeds(name, shapes, seed=gear)
        for g, w in zip(model.run(inputs), session.run(None, inputs)):
            assert g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=0, atol=2e-4 * max(1.0, float(np.abs(w).max())))


def test_unsorted_gears_keep_their_order_and_a_shape_outside_is_refused(gear_om):
    model = ge.runtime.load(gear_om("resnet50"))
    assert model.gears.gears == ((2,), (1,))
    assert [list(s.shape) for s in model.inputs] == [[-1, 3, 32, 32]]
    with pytest.raises(GeError) as err:
        model.run([np.ones((3, 3, 32, 32), np.float32)])
    assert err.value.code == "EP0200" and "[2; 1]" in err.value.message
    x = feeds("resnet50", {"input": (1, 3, 32, 32)})["input"]
    outs, seen = model.run([x], gear=1, capture=True)
    assert np.array_equal(model.run([x])[0], outs[0])
    branch = [name for name in seen if name.endswith("_ascend_mbatch_batch_1")]
    assert branch and "ascend_mbatch_shape_case" in seen      # the ops of the gear run


def test_om_holds_the_multi_batch_structure(gear_om, atc_main, work):
    om = read_om(str(gear_om("bert")))
    graphs = [g.name for g in om.model_def.graph]
    assert graphs[1:] == ["Batch_0", "Batch_1"]
    root = {op.name: op for op in om.model_def.graph[0].op}
    case = root["ascend_mbatch_shape_case"]
    assert case.type == "Case" and root["ascend_mbatch_shape_mapindex"].type == "MapIndex"
    assert root["ascend_mbatch_shape_data"].type == "Data"
    assert case.attr["_batch_num"].i == 2 and case.attr["mbatch_dynamic_type"].i == 3
    assert list(case.attr["_pred_value_1"].list.i) == [2, 16, 2, 16]
    assert list(case.subgraph_name) == ["Batch_0", "Batch_1"]
    assert all(op.name.endswith("_ascend_mbatch_batch_1") for op in om.model_def.graph[2].op)
    assert set(om.inout["other"]) == {4, 6}          # MODEL_DYNAMIC_DIMS, shape order
    out = work / "bert.json"
    run = atc_main("--mode=1", f"--om={gear_om('bert')}", f"--json={out}", cwd=work)
    assert run.rc == 0, run.text
    mode1 = json.loads(out.read_text())
    assert [g["name"] for g in mode1["graph"]][1:] == ["Batch_0", "Batch_1"]
    run = atc_main("--mode=6", f"--om={gear_om('resnet50')}", cwd=work)
    assert "dynamic  info: dynamic_batch_size[2;1], inputs[input]." in run.stdout, run.text


@needs_netron
def test_netron_shows_every_gear(gear_om):
    view = netron_view(gear_om("mobilenetv2"))
    names = [g["name"] for g in view["graphs"]]
    assert {"Batch_0", "Batch_1"} <= set(names), names


def test_weights_are_shared_and_static_kernels_reused(gear_om, static_resnet):
    static, gears = read_om(str(static_resnet)), read_om(str(gear_om("resnet50")))
    weights = lambda om: len(om.payload(1))     # noqa: E731  WEIGHTS_DATA
    assert weights(gears) <= 1.1 * weights(static)
    names = [n for n, _ in gears.kernels]
    assert len(names) == len(set(names))
    assert {n for n, _ in static.kernels} <= set(names)   # batch 1: the static kernels
    found = sorted((static_resnet.parent.parent / "resnet50_gears").glob(
        "**/compile_report.json"))
    report = json.loads(found[-1].read_text())["kernel_cache"]
    assert report["hits"] >= len(static.kernels), report


def _runtime(*args: str):
    return subprocess.run([sys.executable, "-m", "ge.runtime", *args], capture_output=True,
                          text=True, timeout=300)


def test_runtime_command_line_picks_the_gear(gear_om, tmp_path):
    om = str(gear_om("bert"))
    inputs = feeds("bert", CASES["bert"][1][1], seed=3)
    files = []
    for key, value in inputs.items():
        value.tofile(tmp_path / f"{key}.bin")
        np.save(tmp_path / f"{key}.npy", value)
        files.append(key)
    bins = ",".join(str(tmp_path / f"{k}.bin") for k in files)
    npys = ",".join(str(tmp_path / f"{k}.npy") for k in files)
    dims = "input_ids:2,16;attention_mask:2,16"
    run = _runtime("--model", om, "--input", bins, "--dymDims", dims, "--output",
                   str(tmp_path / "bin"))
    assert run.returncode == 0, run.stderr
    run = _runtime("--model", om, "--input", npys, "--output", str(tmp_path / "npy"))
    assert run.returncode == 0, run.stderr
    a, b = (np.load(tmp_path / d / "output_0.npy") for d in ("bin", "npy"))
    assert a.shape == (2, 16, 64) and np.array_equal(a, b)
    for args, code in ((["--input", bins], "EP0201"),
                       (["--input", bins, "--dymDims", "input_ids:3,16;attention_mask:3,16"],
                        "EP0200"),
                       (["--dymBatch", "2"], "EP0201")):
        run = _runtime("--model", om, *args)
        assert run.returncode == 255 and code in run.stdout + run.stderr, run.stderr
    run = _runtime("--model", str(gear_om("mobilenetv2")), "--dymHW", "48,40")
    assert run.returncode == 0 and "[1, 1000]" in run.stdout, run.stderr


def test_infer_session_gear_modes(gear_om):
    session = ge.runtime.InferSession(0, str(gear_om("mobilenetv2")))
    x = feeds("mobilenetv2", {"input": (1, 3, 48, 40)})["input"]
    assert session.infer([x], mode="dymhw")[0].shape == (1, 1000)
    with pytest.raises(GeError) as err:
        session.infer([x], mode="dymbatch")
    assert err.value.code == "EP0201"


def test_raw_ge_options_give_the_same_om(gear_om, atc_main, work):
    from _om_compare import assert_same_om_except_cmdline
    raw = work / "raw.json"
    raw.write_text(json.dumps({"compile options": {"global": {
        "ge.dynamicDims": "1,8,1,8;2,16,2,16"}}}))
    args = [a for a in CASES["bert"][0] if not a.startswith("--dynamic_dims")]
    om = _compile(atc_main, work, "bert", "bert_gears", *args, f"--raw_ge_options={raw}",
                  directory="raw")
    assert_same_om_except_cmdline(om, gear_om("bert"))


@pytest.mark.parametrize("entry,name", [("atc", "resnet50"), ("atc", "mobilenetv2"),
                                        ("atc", "bert"), ("pyatc", "bert")])
def test_atc_and_pyatc_write_the_same_om(entry, name, entry_argv, entry_env, gear_om, work,
                                         shared_kernel_cache):
    """The installed entries as processes give the OM of the in-process pyatc flow."""
    from _om_compare import assert_same_om_except_cmdline
    out = work / f"{entry}_{name}"
    out.mkdir(exist_ok=True)
    env = dict(entry_env, ASCEND_WORK_PATH=str(out), ASCEND_PROCESS_LOG_PATH=str(out / "log"))
    args = ["--framework=5", f"--model={work / name}.onnx", f"--output={name}_gears",
            f"--soc_version={SAMPLE_SOC}", KEEP, *CASES[name][0],
            f"--op_compiler_cache_dir={shared_kernel_cache}"]
    run = subprocess.run(entry_argv(entry) + args, cwd=out, env=env, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    assert_same_om_except_cmdline(out / f"{name}_gears.om", gear_om(name))


def test_static_aipp_with_batch_gears(atc_main, work):
    """Every gear gets its AIPP op: the root input is the NHWC uint8 image with -1 as N."""
    config = work / "aipp_rgb.cfg"
    config.write_text("aipp_op {\n  aipp_mode: static\n  input_format: RGB888_U8\n"
                      "  src_image_size_w: 32\n  src_image_size_h: 32\n}\n")
    om = _compile(atc_main, work, "resnet50", "resnet50_aipp", *CASES["resnet50"][0],
                  f"--insert_op_conf={config}")
    model = ge.runtime.load(om)
    assert [list(s.shape) for s in model.inputs] == [[-1, 32, 32, 3]]
    images = np.random.default_rng(5).integers(0, 256, (2, 32, 32, 3)).astype(np.uint8)
    both, first = model.run([images])[0], model.run([images[:1]])[0]
    assert both.shape == (2, 1000) and first.shape == (1, 1000)
    # to fp32 rounding, as the other gear tests: one image's classifier row is an sgemv,
    # two images' an sgemm, which sum in another order
    np.testing.assert_allclose(both[:1], first, rtol=0,
                               atol=2e-4 * max(1.0, float(np.abs(first).max())))


def test_offline_compile_builds_the_same_gears(gear_om, work, tmp_path):
    """ge.offline_compile with GE keys: the graph the ONNX parser gives at the largest gear,
    then the gear options; the same kernels and weights as the ATC compile."""
    import ge.offline_compile as oc
    from ge.parser.onnx import parse_onnx
    shape = "input_ids:-1,-1;attention_mask:-1,-1"
    graph = parse_onnx(str(work / "bert.onnx"), {"input_shape": "input_ids:2,16;"
                                                 "attention_mask:2,16"},
                       graph_name="bert_gears")
    model = oc.build_model(graph, {"ge.socVersion": SAMPLE_SOC, "ge.inputShape": shape,
                                   "ge.dynamicDims": "1,8,1,8;2,16,2,16", "input_format": "ND",
                                   "ge.exec.precision_mode": "must_keep_origin_dtype"})
    oc.save_model(str(tmp_path / "offline"), model)
    ours, theirs = read_om(str(tmp_path / "offline.om")), read_om(str(gear_om("bert")))
    assert ours.kernels == theirs.kernels
    assert ours.payload(1) == theirs.payload(1)                      # WEIGHTS_DATA
    assert [g.name for g in ours.model_def.graph] == [g.name for g in theirs.model_def.graph]
    runtime = ge.runtime.load(tmp_path / "offline.om")
    inputs = feeds("bert", CASES["bert"][1][0])
    assert np.array_equal(runtime.run(inputs)[0], ge.runtime.load(gear_om("bert")).run(inputs)[0])


def test_each_input_is_sized_for_its_own_largest_gear(atc_main, work):
    """dims gears (10,1) and (1,10) of two inputs: neither gear is the largest for both."""
    import onnx
    from onnx import TensorProto as T, helper
    ios = [helper.make_tensor_value_info(n, T.FLOAT, [d]) for n, d in
           (("x", "a"), ("y", "b"), ("ox", "a"), ("oy", "b"))]
    graph = helper.make_graph([helper.make_node("Mul", ["x", "two"], ["ox"]),
                               helper.make_node("Add", ["y", "two"], ["oy"])], "two",
                              ios[:2], ios[2:], [helper.make_tensor("two", T.FLOAT, [1], [2.0])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
              str(work / "two.onnx"))
    model = ge.runtime.load(_compile(atc_main, work, "two", "two", "--input_shape=x:-1;y:-1",
                                     "--input_format=ND", "--dynamic_dims=10,1;1,10"))
    for a, b in ((10, 1), (1, 10)):
        x, y = np.arange(a, dtype=np.float32), np.arange(b, dtype=np.float32)
        ox, oy = model.run({"x": x, "y": y})
        assert np.array_equal(ox, x * 2) and np.array_equal(oy, y + 2)


def test_compare_runs_a_gear_model(gear_om, work):
    """ge.runtime.compare: seeded inputs at the first gear, per-node dump inside the branch."""
    from ge.runtime.compare import compare_model
    result = compare_model(str(work / "resnet50.onnx"), str(gear_om("resnet50")), dump=True)
    assert result.ok and result.outputs[0].shape == (2, 1000)
    assert result.nodes and result.first_divergence is None
