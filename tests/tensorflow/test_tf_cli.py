"""ATC's TensorFlow command line: --mode=1 / --mode=3 on a GraphDef, --input_shape and
--out_nodes on scoped names, the float16 NC1HWC0 edges (three ways), --output_type, the two
entries writing one OM, Netron, and `python3 -m ge.runtime.compare --tf`."""
from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys

import numpy as np
import pytest

from _netron import needs_netron, netron_view
from ge.om import read_om
from ge.proto.ge_ir import ModelDef
from ge.runtime import load
from ge.runtime.compare_tf import compare_tf_model, run_tensorflow
from ge.parser.tensorflow import load_graph_def

SOC = "Ascend310"


def test_mode1_json_of_the_graph_def(frozen, atc_main, tmp_path):
    run = atc_main("--mode=1", "--framework=3", f"--om={frozen('bert')}", "--json=bert.json",
                   cwd=tmp_path)
    assert run.rc == 0, run.text
    doc = json.loads((tmp_path / "bert.json").read_text())
    ops = {n["op"] for n in doc["node"]}
    assert {"Placeholder", "Einsum", "BatchMatMulV2", "Erfc"} <= ops
    consts = [n for n in doc["node"] if n["op"] == "Const"]
    assert consts and all("tensor_content" not in n["attr"]["value"]["tensor"] for n in consts)


def test_mode3_precheck_lists_unsupported_nodes(frozen, tf, atc_main, tmp_path):
    graph = tf.Graph()
    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.float32, (2,), name="x")
        tf.identity(tf.math.lgamma(x) * 2.0, name="y")
    (tmp_path / "m.pb").write_bytes(graph.as_graph_def().SerializeToString())
    run = atc_main("--mode=3", "--framework=3", "--model=m.pb", f"--soc_version={SOC}",
                   "--check_report=report.json", cwd=tmp_path)
    report = json.loads((tmp_path / "report.json").read_text())
    by_name = {op["name"]: op for op in report["op"]}
    assert by_name["Lgamma"]["result"] == "failed"
    assert by_name["mul"]["result"] == "success"
    assert report["fail"] == 1, run.text


def test_input_shape_and_out_nodes_on_scoped_names(frozen, atc_main, tmp_path):
    """A name with `/` (and the tensor form `name:0`) in --input_shape, node:index outputs in
    the order given, NHWC kept for the input."""
    run = atc_main("--framework=3", f"--model={frozen('small')}", "--output=m",
                   f"--soc_version={SOC}", "--precision_mode=must_keep_origin_dtype",
                   "--input_shape=in/image:0:2,6,5,3", "--out_nodes=z:0;scope/y:0",
                   cwd=tmp_path)
    assert run.rc == 0, run.text
    model = load(str(tmp_path / "m.om"))
    assert [(s.name, s.shape) for s in model.inputs] == [("in/image", (2, 6, 5, 3))]
    assert [s.shape for s in model.outputs] == [(2, 6, 5, 20)] * 2
    x = np.random.default_rng(1).standard_normal((2, 6, 5, 3)).astype(np.float32)
    z, y = model.run([x])
    graph_def = load_graph_def(frozen("small"))
    for i in range(2):           # the TF graph itself takes batch 1
        ref = run_tensorflow(graph_def, {"in/image": x[i:i + 1]}, ["scope/y:0", "z:0"])
        np.testing.assert_allclose(y[i:i + 1], ref["scope/y:0"], rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(z[i:i + 1], ref["z:0"], rtol=1e-4, atol=1e-5)


FIVE_HD = ("--input_fp16_nodes=in/image", "--is_input_adjust_hw_layout=true",
           "--out_nodes=scope/y:0;z:0", "--is_output_adjust_hw_layout=false,true")


def test_float16_nc1hwc0_edges_match_tensorflow(frozen, tf_compiled):
    model = load(str(tf_compiled("small", *FIVE_HD)))
    assert [(s.shape, s.dtype) for s in model.inputs] == [((1, 1, 6, 5, 16), np.float16)]
    assert [(s.shape, s.dtype) for s in model.outputs] == [((1, 6, 5, 20), np.float32),
                                                          ((1, 2, 6, 5, 16), np.float16)]
    x = np.random.default_rng(2).standard_normal((1, 6, 5, 3)).astype(np.float16)
    x5 = np.zeros((1, 1, 6, 5, 16), np.float16)
    x5[0, 0, :, :, :3] = x[0]
    y, z5 = model.run([x5])
    ref = run_tensorflow(load_graph_def(frozen("small")), {"in/image": x.astype(np.float32)},
                         ["scope/y:0", "z:0"])
    np.testing.assert_allclose(y, ref["scope/y:0"], rtol=1e-4, atol=1e-4)
    z = z5.transpose(0, 2, 3, 1, 4).reshape(1, 6, 5, 32)
    assert not z[..., 20:].any(), "channels past C are zero"
    np.testing.assert_allclose(z[..., :20].astype(np.float32), ref["z:0"], rtol=2e-3, atol=2e-2)


def test_nc1hwc0_flags_three_ways(frozen, tf_compiled, atc_main, tmp_path):
    """The flags, --raw_ge_options with the GE keys, and ge.offline_compile: one OM."""
    from ge.offline_compile import build_model, save_model
    from ge.parser.tensorflow import parse_tensorflow
    raw = {"is_input_adjust_hw_layout": "true", "is_output_adjust_hw_layout": "false,true"}
    (tmp_path / "raw.json").write_text(json.dumps({"compile options": {"global": raw}}))
    flags = [f for f in FIVE_HD if "adjust" not in f]
    run = atc_main("--framework=3", f"--model={frozen('small')}", "--output=raw",
                   f"--soc_version={SOC}", "--precision_mode=must_keep_origin_dtype", *flags,
                   "--raw_ge_options=raw.json", cwd=tmp_path)
    assert run.rc == 0, run.text
    options = {"ge.socVersion": SOC, "ge.INPUT_NODES_SET_FP16": "in/image",
               "ge.outputNodeName": "scope/y:0;z:0", "input_format": "NHWC",
               "ge.exec.precision_mode": "must_keep_origin_dtype", **raw}
    graph = parse_tensorflow(frozen("small"), options, graph_name="api")
    save_model(str(tmp_path / "api"), build_model(graph, options))
    specs = []
    for om in (tf_compiled("small", *FIVE_HD), tmp_path / "raw.om", tmp_path / "api.om"):
        model = load(str(om))
        specs.append([(s.shape, s.dtype) for s in model.inputs + model.outputs])
    assert specs[0] == specs[1] == specs[2]


def test_bad_adjust_flag_value(frozen, atc_main, tmp_path):
    run = atc_main("--framework=3", f"--model={frozen('small')}", "--output=m",
                   f"--soc_version={SOC}", "--input_fp16_nodes=in/image",
                   "--is_input_adjust_hw_layout=yes", cwd=tmp_path)
    assert run.rc == 255 and "E10005" in run.text and "yes" in run.text
    assert not list(tmp_path.glob("m*"))


def test_output_type_fp16(frozen, tf_compiled):
    model = load(str(tf_compiled("small", "--output_type=FP16")))
    assert [s.dtype for s in model.outputs] == [np.float16]


def test_atc_and_pyatc_write_the_same_om(frozen, entry_argv, entry_env, tmp_path):
    from _om_compare import same_om_but_model_def
    for entry in ("atc", "pyatc"):           # same --output name: the header records it
        (tmp_path / entry).mkdir()
        run = subprocess.run([*entry_argv(entry), "--framework=3", f"--model={frozen('cond_v2')}",
                              "--output=model", f"--soc_version={SOC}"], cwd=tmp_path / entry,
                             env=entry_env, capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, run.stdout + run.stderr
    payloads = same_om_but_model_def(tmp_path / "atc" / "model.om",
                                     tmp_path / "pyatc" / "model.om")
    model_defs = [ModelDef.FromString(p) for p in payloads]
    for model_def in model_defs:
        del model_def.attr["atc_cmdline"]
    assert model_defs[0] == model_defs[1]


@needs_netron
@pytest.mark.parametrize("name", ["cond_v2", "bert"])
def test_netron_opens_the_om(name, tf_compiled):
    om = tf_compiled(name)
    view = netron_view(om)
    assert view["format"] == "DaVinci OM"
    ours = read_om(str(om)).model_def_with_weights()
    assert [g["name"] for g in view["graphs"]] == [g.name for g in ours.graph]


def test_compare_command_line_with_dump(frozen, tf_compiled):
    from ge.runtime.compare import main
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = main(["--tf", str(frozen("bert")), "--om", str(tf_compiled("bert")), "--dump"])
    assert rc == 0, out.getvalue()
    text = out.getvalue()
    assert "|ours - tensorflow|" in text and "no divergence" in text
    assert "result: PASS" in text


def test_compare_without_tensorflow(frozen, tf_compiled):
    """A process in which tensorflow cannot be imported gets EP0504, exit 255."""
    code = ("import sys; sys.modules['tensorflow'] = None; "
            "from ge.runtime._cli import guarded; from ge.runtime.compare import main; "
            f"sys.exit(guarded(main, ['--tf', {str(frozen('small'))!r}, "
            f"'--om', {str(tf_compiled('small'))!r}]))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 255
    assert "EP0504" in run.stdout + run.stderr and "tensorflow" in run.stdout + run.stderr


def test_compare_dump_names_the_first_diverging_node(frozen, tf_compiled, tmp_path):
    """A reference whose convolution filter differs from the compiled one: the report names
    our op standing for that TF node as the first divergence, and the run fails."""
    from ge.proto.tensorflow import GraphDef
    from ge.runtime.compare import main
    graph = GraphDef()
    graph.ParseFromString(frozen("small").read_bytes())
    conv = next(n for n in graph.node if n.op == "Conv2D")
    filt = next(n for n in graph.node if n.name == conv.input[1].split(":")[0])
    tensor = filt.attr["value"].tensor
    values = np.frombuffer(tensor.tensor_content, np.float32) + 0.5
    tensor.tensor_content = values.astype(np.float32).tobytes()
    (tmp_path / "changed.pb").write_bytes(graph.SerializeToString())
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = main(["--tf", str(tmp_path / "changed.pb"), "--om", str(tf_compiled("small")),
                   "--dump"])
    assert rc == 255
    assert f"first divergence: op {conv.name} (Conv2D)" in out.getvalue(), out.getvalue()
    assert "result: FAIL" in out.getvalue()


@pytest.mark.parametrize("name", ["small", "cond_v2"])
def test_text_form_pbtxt(name, tf, frozen, atc_main, tmp_path):
    """The text form TensorFlow writes (tf.io.write_graph, as_text=True) compiles to the same
    numbers; newer fields our schema lacks are skipped."""
    graph_def = tf.compat.v1.GraphDef()
    graph_def.ParseFromString(frozen(name).read_bytes())
    tf.io.write_graph(graph_def, str(tmp_path), "model.pbtxt", as_text=True)
    run = atc_main("--framework=3", "--model=model.pbtxt", "--output=m", f"--soc_version={SOC}",
                   "--precision_mode=must_keep_origin_dtype", cwd=tmp_path)
    assert run.rc == 0, run.text
    result = compare_tf_model(tmp_path / "model.pbtxt", tmp_path / "m.om")
    assert result.outputs and all(d.ok for d in result.outputs)


def test_nc1hwc0_edges_of_an_onnx_model(atc_main, tmp_path):
    """The two flags are not TensorFlow's only: an NCHW ONNX model gets the same edges."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    from ge.runtime.compare import run_onnxruntime
    w = np.random.default_rng(3).standard_normal((20, 3, 3, 3)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["y"], name="conv", pads=[1, 1, 1, 1])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 6, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 20, 6, 5])],
        [numpy_helper.from_array(w, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.save(model, str(tmp_path / "m.onnx"))
    run = atc_main("--framework=5", "--model=m.onnx", "--output=m", f"--soc_version={SOC}",
                   "--input_fp16_nodes=x", "--is_input_adjust_hw_layout=true",
                   "--out_nodes=conv:0", "--is_output_adjust_hw_layout=true", cwd=tmp_path)
    assert run.rc == 0, run.text
    om = load(str(tmp_path / "m.om"))
    assert [(s.shape, s.dtype) for s in om.inputs + om.outputs] == \
        [((1, 1, 6, 5, 16), np.float16), ((1, 2, 6, 5, 16), np.float16)]
    x = np.random.default_rng(4).standard_normal((1, 3, 6, 5)).astype(np.float16)
    x5 = np.zeros((1, 1, 6, 5, 16), np.float16)
    x5[0, 0] = np.moveaxis(np.pad(x[0], [(0, 13), (0, 0), (0, 0)]), 0, -1)
    (y5,) = om.run([x5])
    y = np.moveaxis(y5, -1, 2).reshape(1, 32, 6, 5)[:, :20]
    ref = run_onnxruntime(model, {"x": x.astype(np.float32)})["y"]
    np.testing.assert_allclose(y.astype(np.float32), ref, rtol=2e-3, atol=2e-2)


def test_out_nodes_index_of_a_multi_output_node(tf, atc_main, tmp_path):
    graph = tf.Graph()
    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.float32, (3, 4), name="x")
        tf.unstack(tf.nn.relu(x) * 3.0, num=3, name="parts")
    (tmp_path / "m.pb").write_bytes(graph.as_graph_def().SerializeToString())
    run = atc_main("--framework=3", "--model=m.pb", "--output=m", f"--soc_version={SOC}",
                   "--precision_mode=must_keep_origin_dtype", "--out_nodes=parts:2;parts:0",
                   cwd=tmp_path)
    assert run.rc == 0, run.text
    x = np.random.default_rng(5).standard_normal((3, 4)).astype(np.float32)
    ours = load(str(tmp_path / "m.om")).run([x])
    ref = run_tensorflow(load_graph_def(tmp_path / "m.pb"), {"x": x}, ["parts:2", "parts:0"])
    np.testing.assert_allclose(ours[0], ref["parts:2"], rtol=1e-6)
    np.testing.assert_allclose(ours[1], ref["parts:0"], rtol=1e-6)
    bad = atc_main("--framework=3", "--model=m.pb", "--output=bad", f"--soc_version={SOC}",
                   "--out_nodes=parts:3", cwd=tmp_path)
    assert bad.rc == 255 and "E10003" in bad.text and not list(tmp_path.glob("bad*"))
