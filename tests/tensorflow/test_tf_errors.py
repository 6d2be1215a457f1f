"""Bad TensorFlow input: CANN's codes (or ours where CANN has none), exit status 255, no
traceback, nothing written."""
from __future__ import annotations

import pytest

from ge.proto.tensorflow import GraphDef


def _compile(atc_main, model, work, *flags):
    run = atc_main("--framework=3", f"--model={model}", "--output=out",
                   "--soc_version=Ascend310", *flags, cwd=work)
    assert run.rc == 255, run.text
    assert "Traceback" not in run.text
    assert not list(work.glob("out*")), "a failed compile must write nothing"
    return run.text


def _compile_bytes(atc_main, data: bytes, work, *flags):
    (work / "model.pb").write_bytes(data)
    return _compile(atc_main, work / "model.pb", work, *flags)


@pytest.fixture(scope="module")
def saved_model(tf, tmp_path_factory):
    root = tmp_path_factory.mktemp("saved")
    module = tf.Module()
    module.v = tf.Variable(2.0)
    module.f = tf.function(lambda x: x * module.v,
                           input_signature=[tf.TensorSpec((2,), tf.float32)])
    tf.saved_model.save(module, str(root / "sm"))
    tf.train.Checkpoint(v=tf.Variable(1.0)).write(str(root / "ckpt" / "model"))
    return root


def test_saved_model_directory(saved_model, atc_main, tmp_path):
    text = _compile(atc_main, saved_model / "sm", tmp_path)
    assert "E10001" in text and "--model" in text


@pytest.mark.parametrize("file", ["sm/saved_model.pb", "ckpt/model.index",
                                  "ckpt/model.data-00000-of-00001"])
def test_saved_model_or_checkpoint_file(file, saved_model, atc_main, tmp_path):
    text = _compile(atc_main, saved_model / file, tmp_path)
    assert "E10041" in text and "convert_variables_to_constants_v2" in text


def test_onnx_file_is_not_a_graph_def(model_path, atc_main, tmp_path):
    text = _compile(atc_main, model_path("light_resnet50"), tmp_path)
    assert "E10041" in text


def test_unfrozen_graph(tf, atc_main, tmp_path):
    graph = tf.Graph()
    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.float32, (2,), name="x")
        v = tf.compat.v1.Variable(tf.ones((2,)), name="weights")
        tf.identity(x * v, name="y")
    text = _compile_bytes(atc_main, graph.as_graph_def().SerializeToString(), tmp_path)
    assert "EP0502" in text and "weights (VarHandleOp)" in text


def test_unknown_ops_reported_at_once(tf, atc_main, tmp_path):
    graph = tf.Graph()
    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.float32, (2,), name="x")
        tf.identity(tf.math.lgamma(x) + tf.math.digamma(x), name="y")
    text = _compile_bytes(atc_main, graph.as_graph_def().SerializeToString(), tmp_path)
    assert "E13010" in text and "Op: Lgamma, optype: Lgamma" in text
    assert "Digamma (Digamma)" in text


def test_missing_input_node(atc_main, tmp_path):
    graph = GraphDef()
    node = graph.node.add(name="y", op="Relu", input=["nowhere:0"])
    node.attr["T"].type = 1
    text = _compile_bytes(atc_main, graph.SerializeToString(), tmp_path)
    assert "E12009" in text and "Input nowhere:0 for Op y is not found in graph_def" in text


def test_out_nodes_names_a_missing_node(frozen, atc_main, tmp_path):
    text = _compile(atc_main, frozen("cond_v1"), tmp_path, "--out_nodes=nothere:0")
    assert "E10016" in text and "nothere" in text


def test_function_missing_from_library(frozen, atc_main, tmp_path):
    graph = GraphDef()
    graph.ParseFromString(frozen("cond_v2").read_bytes())
    del graph.library.function[0]
    text = _compile_bytes(atc_main, graph.SerializeToString(), tmp_path)
    assert "E12013" in text and "Failed to find a subgraph by the name" in text


def test_input_format_contradicting_the_data_format(frozen, atc_main, tmp_path):
    """--input_format NCHW for an input an NHWC convolution reads: refused, naming both."""
    text = _compile(atc_main, frozen("small"), tmp_path, "--input_format=NCHW")
    assert "E11010" in text and "Conv2D" in text
    assert "reads model input in/image as NHWC" in text and "declares that input NCHW" in text
