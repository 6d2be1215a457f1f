"""ONNX LSTM / GRU / RNN through the ATC main flow: small models built with onnx.helper cover every
direction, sequence_lens (a zero length included), initial states, peepholes, clip, all eleven
activation functions with alpha / beta, input_forget, linear_before_reset, layout 1 and every
subset of the optional outputs.  Each model is compiled once with pyatc's main flow
(must_keep_origin_dtype), run on the host runtime (compiled kernels) and by the reference
interpreter on the OM's graph, and compared with onnxruntime.  Two CI-sized networks (a
speech-like conv + 2 BiLSTM + linear + log_softmax, a CRNN-style OCR conv + BiLSTM + linear)
are also opened with --mode=1 and Netron.  Bad layers are refused with a code naming the node,
exit 255 and no OM.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from ge.errors import GeError
from ge.om import read_om
from ge.ops.interpreter import run_graph
from ge.runtime import load

from _netron import needs_netron, netron_view
from _samples import SAMPLE_SOC

ort = pytest.importorskip("onnxruntime")

S, B, I, H = 4, 3, 3, 4            # seq_length, batch, input_size, hidden_size
LENS = np.array([4, 0, 2], np.int32)
RTOL, ATOL = 1e-4, 1e-5
GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}


# -- building models ------------------------------------------------------------------------------

class ModelBuilder:
    """One graph of independent recurrent layers over the shared inputs X [S, B, I],
    XB [B, S, I] (layout 1) and L [B] (sequence_lens)."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.outputs = [], [], []
        self.inputs = [helper.make_tensor_value_info("X", TensorProto.FLOAT, [S, B, I]),
                       helper.make_tensor_value_info("XB", TensorProto.FLOAT, [B, S, I]),
                       helper.make_tensor_value_info("L", TensorProto.INT32, [B])]

    def weight(self, name: str, shape, scale: float = 0.5) -> str:
        value = (self.rng.standard_normal(shape) * scale).astype(np.float32)
        self.inits.append(numpy_helper.from_array(value, name))
        return name

    def layer(self, op: str, tag: str, outputs=("Y", "Y_h", "Y_c"), bias=False, lens=False,
              init=False, peep=False, layout=0, **attrs) -> None:
        d = 2 if attrs.get("direction") == "bidirectional" else 1
        g = GATES[op]
        names = ["XB" if layout else "X", self.weight(f"{tag}_W", (d, g * H, I)),
                 self.weight(f"{tag}_R", (d, g * H, H)),
                 self.weight(f"{tag}_B", (d, 2 * g * H)) if bias else "",
                 "L" if lens else ""]
        state = (B, d, H) if layout else (d, B, H)
        if init:
            names.append(self.weight(f"{tag}_h0", state, 1.0))
            if op == "LSTM":
                names.append(self.weight(f"{tag}_c0", state, 1.0))
        if peep:
            names += [""] * (7 - len(names)) + [self.weight(f"{tag}_P", (d, 3 * H))]
        while names and not names[-1]:
            names.pop()
        outs = [f"{tag}_{o}" if o else "" for o in outputs[:3 if op == "LSTM" else 2]]
        self.nodes.append(helper.make_node(op, names, outs, name=tag, hidden_size=H,
                                           layout=layout, **attrs))
        self.outputs += [helper.make_tensor_value_info(o, TensorProto.FLOAT, None)
                         for o in outs if o]

    def model(self, name: str) -> onnx.ModelProto:
        graph = helper.make_graph(self.nodes, name, self.inputs, self.outputs, self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
        return model


def lstm_matrix() -> onnx.ModelProto:
    m = ModelBuilder(1)
    m.layer("LSTM", "lstm_fwd")
    m.layer("LSTM", "lstm_rev", outputs=("", "Y_h", "Y_c"), bias=True, lens=True, init=True,
            direction="reverse")
    m.layer("LSTM", "lstm_bi", outputs=("Y", "Y_h"), bias=True, lens=True, init=True, peep=True,
            clip=0.8, direction="bidirectional")
    m.layer("LSTM", "lstm_acts", outputs=("Y",), peep=True, input_forget=1,
            activations=["HardSigmoid", "Elu", "Softsign"], activation_alpha=[0.3, 0.7],
            activation_beta=[0.4])
    m.layer("LSTM", "lstm_batch_first", bias=True, init=True, layout=1, direction="bidirectional",
            activations=["Sigmoid", "ScaledTanh", "Affine", "LeakyRelu", "Softplus",
                         "ThresholdedRelu"],
            activation_alpha=[1.2, 0.9, 0.2, 0.1], activation_beta=[0.8, 0.1])
    return m.model("lstm_matrix")


def gru_matrix() -> onnx.ModelProto:
    m = ModelBuilder(2)
    m.layer("GRU", "gru_fwd")
    m.layer("GRU", "gru_rev_lbr", bias=True, lens=True, init=True, direction="reverse",
            linear_before_reset=1)
    m.layer("GRU", "gru_bi", bias=True, lens=True, clip=0.5, direction="bidirectional")
    m.layer("GRU", "gru_acts", outputs=("", "Y_h"), bias=True, linear_before_reset=1,
            activations=["HardSigmoid", "Relu"], activation_alpha=[0.25])
    m.layer("GRU", "gru_batch_first", init=True, layout=1, direction="bidirectional",
            activations=["Sigmoid", "Tanh", "Softsign", "Affine"], activation_alpha=[0.5],
            activation_beta=[0.1])
    return m.model("gru_matrix")


def rnn_matrix() -> onnx.ModelProto:
    m = ModelBuilder(3)
    m.layer("RNN", "rnn_fwd")
    m.layer("RNN", "rnn_rev", bias=True, lens=True, init=True, direction="reverse",
            activations=["Relu"])
    m.layer("RNN", "rnn_bi", outputs=("Y",), bias=True, lens=True, clip=0.6,
            direction="bidirectional", activations=["Tanh", "LeakyRelu"], activation_alpha=[0.2])
    m.layer("RNN", "rnn_batch_first", outputs=("", "Y_h"), init=True, layout=1,
            activations=["Elu"], activation_alpha=[0.5])
    return m.model("rnn_matrix")


def _w(rng, *shape, scale=0.3):
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32))


def _bilstm(rng, nodes, inits, name, x, width) -> str:
    """BiLSTM over x [T, N, width] → [T, N, 2H] (Y [T, 2, N, H] transposed and reshaped)."""
    for part, shape in (("W", (2, 4 * H, width)), ("R", (2, 4 * H, H)), ("B", (2, 8 * H))):
        t = _w(rng, *shape)
        t.name = f"{name}_{part}"
        inits.append(t)
    nodes += [helper.make_node("LSTM", [x, f"{name}_W", f"{name}_R", f"{name}_B"], [f"{name}_Y"],
                               name=name, hidden_size=H, direction="bidirectional"),
              helper.make_node("Transpose", [f"{name}_Y"], [f"{name}_t"], perm=[0, 2, 1, 3]),
              helper.make_node("Reshape", [f"{name}_t", "shape_tn"], [f"{name}_out"])]
    return f"{name}_out"


def _head(rng, nodes, inits, x, classes: int, log_softmax: bool) -> None:
    w = _w(rng, 2 * H, classes)
    w.name = "fc_W"
    bias = _w(rng, classes)
    bias.name = "fc_B"
    inits += [w, bias]
    nodes += [helper.make_node("MatMul", [x, "fc_W"], ["fc_mm"]),
              helper.make_node("Add", ["fc_mm", "fc_B"], ["logits" if not log_softmax else "fc"])]
    if log_softmax:
        nodes.append(helper.make_node("LogSoftmax", ["fc"], ["logits"], axis=-1))


def speech_model() -> onnx.ModelProto:
    """features [1, 8, T] → Conv1d + Relu → [T, 1, 8] → BiLSTM → BiLSTM → linear → log_softmax."""
    rng = np.random.default_rng(4)
    t = 10
    conv_w = _w(rng, 8, 8, 3)
    conv_w.name = "conv_W"
    shape = numpy_helper.from_array(np.array([t, 1, 2 * H], np.int64), "shape_tn")
    nodes = [helper.make_node("Conv", ["features", "conv_W"], ["conv"], pads=[1, 1]),
             helper.make_node("Relu", ["conv"], ["relu"]),
             helper.make_node("Transpose", ["relu"], ["frames"], perm=[2, 0, 1])]
    inits = [conv_w, shape]
    x = _bilstm(rng, nodes, inits, "blstm1", "frames", 8)
    x = _bilstm(rng, nodes, inits, "blstm2", x, 2 * H)
    _head(rng, nodes, inits, x, 6, log_softmax=True)
    graph = helper.make_graph(
        nodes, "speech", [helper.make_tensor_value_info("features", TensorProto.FLOAT, [1, 8, t])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def crnn_model() -> onnx.ModelProto:
    """image [1, 1, 8, 16] → Conv + Relu + MaxPool → [1, 4·4, 8] columns → BiLSTM → linear."""
    rng = np.random.default_rng(5)
    conv_w = _w(rng, 4, 1, 3, 3)
    conv_w.name = "conv_W"
    cols = numpy_helper.from_array(np.array([1, 16, 8], np.int64), "shape_cols")
    shape = numpy_helper.from_array(np.array([8, 1, 2 * H], np.int64), "shape_tn")
    nodes = [helper.make_node("Conv", ["image", "conv_W"], ["conv"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["conv"], ["relu"]),
             helper.make_node("MaxPool", ["relu"], ["pool"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Reshape", ["pool", "shape_cols"], ["cols"]),
             helper.make_node("Transpose", ["cols"], ["seq"], perm=[2, 0, 1])]
    inits = [conv_w, cols, shape]
    x = _bilstm(rng, nodes, inits, "blstm", "seq", 16)
    _head(rng, nodes, inits, x, 5, log_softmax=False)
    graph = helper.make_graph(
        nodes, "crnn", [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 1, 8, 16])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


MODELS = {"lstm_matrix": lstm_matrix, "gru_matrix": gru_matrix, "rnn_matrix": rnn_matrix,
          "speech": speech_model, "crnn": crnn_model}


# -- compiling and comparing ----------------------------------------------------------------------

def _atc_args(model: Path, output: str, cache) -> tuple:
    return ("--framework=5", f"--model={model}", f"--output={output}",
            f"--soc_version={SAMPLE_SOC}", "--precision_mode=must_keep_origin_dtype",
            f"--op_compiler_cache_dir={cache}")


@pytest.fixture(scope="module")
def compiled(atc_main, shared_kernel_cache, tmp_path_factory):
    """name -> (ModelProto, OM path), compiled once per module."""
    root = tmp_path_factory.mktemp("recurrent")
    done = {}

    def get(name: str):
        if name not in done:
            model = MODELS[name]()
            source = root / f"{name}.onnx"
            onnx.save(model, str(source))
            run = atc_main(*_atc_args(source, name, shared_kernel_cache), cwd=root)
            assert run.rc == 0, run.text
            done[name] = (model, root / f"{name}.om")
        return done[name]
    return get


def _feeds(model: onnx.ModelProto, seed: int = 7) -> dict:
    rng = np.random.default_rng(seed)
    feeds = {}
    for value in model.graph.input:
        shape = [d.dim_value for d in value.type.tensor_type.shape.dim]
        feeds[value.name] = (LENS.copy() if value.name == "L"
                             else rng.standard_normal(shape).astype(np.float32))
    return feeds


def layout0_equivalent(model: onnx.ModelProto) -> onnx.ModelProto:
    """The model with every layout-1 layer written as layout 0 between Transposes (onnxruntime
    refuses layout 1; the ONNX node tests check layout 1 against ONNX's own outputs)."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    nodes = []
    for node in model.graph.node:
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        if attrs.get("layout", 0) != 1:
            nodes.append(node)
            continue
        ins, outs = list(node.input), list(node.output)
        for k in (0, 5, 6):
            if k < len(ins) and ins[k]:
                nodes.append(helper.make_node("Transpose", [ins[k]], [f"{ins[k]}_t0"],
                                              perm=[1, 0, 2]))
                ins[k] = f"{ins[k]}_t0"
        for k, perm in ((0, [2, 0, 1, 3]), (1, [1, 0, 2]), (2, [1, 0, 2])):
            if k < len(outs) and outs[k]:
                nodes.append(helper.make_node("Transpose", [f"{outs[k]}_t0"], [outs[k]],
                                              perm=perm))
                outs[k] = f"{outs[k]}_t0"
        attrs["layout"] = 0
        nodes.append(helper.make_node(node.op_type, ins, outs, name=node.name, **attrs))
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    return model


def _onnxruntime(model: onnx.ModelProto, feeds: dict) -> list:
    model = layout0_equivalent(model)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(model.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def _assert_outputs(got: list, want: list, model: onnx.ModelProto) -> None:
    names = [o.name for o in model.graph.output]
    assert len(got) == len(want) == len(names)
    for name, g, w in zip(names, got, want):
        g = np.asarray(g)
        assert g.shape == w.shape and g.dtype == w.dtype, name
        np.testing.assert_allclose(g, w, rtol=RTOL, atol=ATOL, err_msg=name)


@pytest.mark.parametrize("name", list(MODELS))
def test_host_runtime_and_reference_match_onnxruntime(name, compiled):
    model, om_path = compiled(name)
    feeds = _feeds(model)
    want = _onnxruntime(model, feeds)
    om = load(str(om_path))
    try:
        recurrent = {n: e for n, e in om.engines.items() if "LSTM" in n or "GRU" in n
                     or "RNN" in n or n.startswith(("lstm", "gru", "rnn", "blstm"))}
        assert recurrent and set(recurrent.values()) == {"AiCore"}, om.engines
        _assert_outputs(om.run([feeds[i.name] for i in model.graph.input]), want, model)
    finally:
        om.close()
    graph = read_om(str(om_path)).to_graph()
    _assert_outputs(run_graph(graph, feeds), want, model)


def test_layer_types_in_the_om(compiled):
    """CANN's IR for LSTM/GRU, ours for RNN; layout-1 layers are wrapped in TransposeD."""
    types = {}
    for name in ("lstm_matrix", "gru_matrix", "rnn_matrix"):
        graph = read_om(str(compiled(name)[1])).to_graph()
        for node in graph.nodes:
            types.setdefault(node.type, []).append(node.name)
    assert len(types["CommonLSTM"]) == 5 and len(types["CommonGRU"]) == 5
    assert len(types["CommonRNN"]) == 4
    assert "lstm_fwd" in types["CommonLSTM"] and "rnn_rev" in types["CommonRNN"]
    assert any("lstm_batch_first" in n for n in types["TransposeD"])


@needs_netron
@pytest.mark.parametrize("name", ["speech", "crnn"])
def test_mode1_json_and_netron_show_the_layers(name, compiled, atc_main, tmp_path):
    _, om_path = compiled(name)
    out = tmp_path / f"{name}.json"
    run = atc_main("--mode=1", f"--om={om_path}", f"--json={out}", cwd=tmp_path)
    assert run.rc == 0, run.text
    ops = [op for g in json.loads(out.read_text())["graph"] for op in g.get("op", [])]
    lstm = [op for op in ops if op["type"] == "CommonLSTM"]
    assert len(lstm) == (2 if name == "speech" else 1)
    attrs = {a["key"]: a["value"] for a in lstm[0]["attr"]}
    assert attrs["direction"] == {"s": "bidirectional"} and attrs["hidden_size"] == {"i": H}
    (seen,) = netron_view(om_path, sizes=True)["graphs"]
    assert [(n["name"], n["type"]) for n in seen["nodes"]] == \
        [(op["name"], op["type"]) for op in ops if op["type"] != "Const"]


def test_out_of_range_sequence_lens_at_run_time_names_the_node(compiled):
    model, om_path = compiled("rnn_matrix")
    feeds = _feeds(model)
    feeds["L"] = np.array([4, 5, 1], np.int32)
    om = load(str(om_path))
    try:
        with pytest.raises(GeError) as err:
            om.run([feeds[i.name] for i in model.graph.input])
    finally:
        om.close()
    assert err.value.code == "EP0405" and "rnn_" in err.value.message
    assert "CommonRNN" in err.value.message


# -- bad layers -----------------------------------------------------------------------------------

def _one_layer(op="LSTM", w_rows=None, x_shape=(S, B, I), lens=None, **attrs) -> onnx.ModelProto:
    attrs.setdefault("hidden_size", H)
    g = GATES[op]
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((1, w_rows or g * H, I)).astype(np.float32),
                                "W")
    r = numpy_helper.from_array(rng.standard_normal((1, g * H, H)).astype(np.float32), "R")
    inits, names = [w, r], ["X", "W", "R"]
    if lens is not None:
        inits.append(numpy_helper.from_array(np.array(lens, np.int32), "L"))
        names += ["", "L"]
    node = helper.make_node(op, names, ["Y"], name="layer0", **attrs)
    graph = helper.make_graph(
        [node], "bad", [helper.make_tensor_value_info("X", TensorProto.FLOAT, list(x_shape))],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])


BAD = [
    ("hidden_size_missing", _one_layer, {"hidden_size": None}, "E11010", "hidden_size"),
    ("hidden_size_vs_W", _one_layer, {"w_rows": 4 * H + 4}, "EP0130", "input w has shape"),
    ("bad_direction", _one_layer, {"op": "GRU", "direction": "sideways"}, "E11010",
     "direction"),
    ("activation_count", _one_layer, {"op": "GRU", "activations": ["Sigmoid"]}, "E11010",
     "activations has 1 entries"),
    ("unknown_activation", _one_layer, {"op": "RNN", "activations": ["Swish"]}, "E11010",
     "activation 'Swish'"),
    ("bad_clip", _one_layer, {"clip": -2.0}, "E11010", "clip must be positive"),
    ("bad_layout", _one_layer, {"op": "RNN", "layout": 2}, "E11010", "layout"),
    ("zero_length_sequence", _one_layer, {"x_shape": (0, B, I)}, "EP0130", "seq_length 0"),
    ("sequence_lens_out_of_range", _one_layer, {"op": "GRU", "lens": [4, 9, 1]}, "EP0130",
     "sequence_lens[1] = 9"),
    ("sequence_lens_shape", _one_layer, {"op": "RNN", "lens": [4, 4]}, "EP0130",
     "input sequence_lens has shape [2]"),
]


@pytest.mark.parametrize("case, build, kwargs, code, says", BAD, ids=[b[0] for b in BAD])
def test_bad_layer_is_refused_naming_the_node(case, build, kwargs, code, says, atc_main,
                                              tmp_path):
    kwargs = dict(kwargs)
    model = build(**{k: v for k, v in kwargs.items() if v is not None})
    if kwargs.get("hidden_size", 0) is None:
        node = model.graph.node[0]
        kept = [a for a in node.attribute if a.name != "hidden_size"]
        del node.attribute[:]
        node.attribute.extend(kept)
    source = tmp_path / "bad.onnx"
    onnx.save(model, str(source))
    run = atc_main("--framework=5", f"--model={source}", "--output=bad",
                   f"--soc_version={SAMPLE_SOC}", cwd=tmp_path)
    assert run.rc == 255, run.text
    assert code in run.text and "layer0" in run.text and says in run.text, run.text
    assert "Traceback" not in run.text
    assert not [p.name for p in tmp_path.iterdir() if p.suffix == ".om"]
