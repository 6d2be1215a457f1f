"""ConvAddFusionPass: Add(Conv2D, r) -> Conv2D with a residual input (then the Relu after the
Add fuses too).  Structure after, refusals, the switch, and the numbers against onnxruntime on
the reference kernels (AiCpu), on the compiled kernels (float32) and in the default float16
mode."""
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from ge.compiler.api import save_om
from ge.ops.defs._common import FUSED_ACTIVATION
from ge.ops.interpreter import run_graph

from ._fusion_checks import compile_types as _compile, fusion_effects as _effects

REFERENCE = {"ge.socVersion": "Ascend310P3", "ge.exec.exclude_engines": "AiCore|AiVec",
             "ge.op_compiler_cache_mode": "disable",
             "ge.exec.precision_mode": "must_keep_origin_dtype"}
COMPILED = {"ge.socVersion": "Ascend310P3", "ge.exec.precision_mode": "must_keep_origin_dtype"}
PASS = "ConvAddFusionPass"
RNG = np.random.default_rng(5)
X_SHAPE = (1, 8, 9, 9)


def _init(name, shape, scale=0.3):
    return numpy_helper.from_array((RNG.standard_normal(shape) * scale).astype(np.float32), name)


def _conv(name, x, out, cin, cout, k=3, stride=1, groups=1):
    return helper.make_node("Conv", [x, f"{name}_w", f"{name}_b"], [out], name=name,
                            pads=[k // 2] * 4, strides=[stride, stride], group=groups), \
        [_init(f"{name}_w", (cout, cin // groups, k, k)), _init(f"{name}_b", (cout,))]


def block_model(kind="identity", swap=False, relu=True, groups=1):
    """A residual block: conv -> Add(conv, shortcut) [-> Relu].  `kind`: identity (the
    block input), downsample (a strided 1x1 conv on both sides), broadcast (a per-channel
    constant: not a residual), shared (the conv is also a graph output)."""
    stride = 2 if kind == "downsample" else 1
    conv, inits = _conv("conv", "x", "c", 8, 8, stride=stride, groups=groups)
    nodes = [conv]
    if kind == "downsample":
        short, more = _conv("down", "x", "s", 8, 8, k=1, stride=2)
        nodes.append(short)
        inits += more
        other = "s"
    elif kind == "broadcast":
        inits.append(_init("s", (1, 8, 1, 1)))
        other = "s"
    else:
        other = "x"
    nodes.append(helper.make_node("Add", [other, "c"] if swap else ["c", other], ["a"],
                                  name="add"))
    nodes.append(helper.make_node("Relu", ["a"], ["z"], name="relu") if relu
                 else helper.make_node("Identity", ["a"], ["z"], name="out"))
    outputs = [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)]
    if kind == "shared":
        outputs.append(helper.make_tensor_value_info("c", TensorProto.FLOAT, None))
    g = helper.make_graph(nodes, "m", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                     list(X_SHAPE))],
                          outputs, inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def _ort(model, x):
    return ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, {"x": x})


def _x():
    return RNG.standard_normal(X_SHAPE).astype(np.float32)


def _residual_convs(compiled):
    return [n for n in compiled.graph.nodes
            if n.type == "Conv2D" and n.num_inputs > 4 and n.input(4) is not None]


@pytest.mark.parametrize("kind,swap,relu,groups", [
    ("identity", False, True, 1), ("identity", True, True, 1), ("identity", False, False, 1),
    ("downsample", False, True, 1), ("identity", False, True, 8)])
def test_residual_add_and_relu_fused(kind, swap, relu, groups, tmp_path):
    import ge.runtime
    model = block_model(kind, swap, relu, groups)
    compiled, types = _compile(model, REFERENCE)
    assert "Add" not in types and "Relu" not in types
    [conv] = _residual_convs(compiled)
    assert (conv.attr(FUSED_ACTIVATION) or "") == ("Relu" if relu else "")
    assert {"conv", "add"} <= set(conv.origin)
    assert _effects(compiled, PASS) == 1
    x = _x()
    np.testing.assert_allclose(run_graph(compiled.graph, [x])[0], _ort(model, x)[0],
                               rtol=1e-4, atol=1e-5)
    compiled, _ = _compile(model, COMPILED)
    assert _effects(compiled, PASS) == 1
    path = str(tmp_path / "m.om")
    save_om(path, compiled, "test")
    with ge.runtime.load(path, threads=1) as om:
        assert set(om.engines.values()) == {"AiCore"}
        np.testing.assert_allclose(om.run([x])[0], _ort(model, x)[0], rtol=1e-4, atol=1e-5)


def test_default_float16_mode_fuses_and_matches(tmp_path):
    from ge.runtime.compare import compare_model
    model = block_model("downsample")
    compiled, types = _compile(model, {"ge.socVersion": "Ascend310P3"})
    assert "Add" not in types and _effects(compiled, PASS) == 1
    path = str(tmp_path / "m.om")
    save_om(path, compiled, "test")
    result = compare_model(model, path)
    assert result.ok and result.outputs[0].dtype == "float16"


@pytest.mark.parametrize("kind", ["broadcast", "shared"])
def test_add_that_is_not_a_residual_stays(kind):
    model = block_model(kind)
    compiled, types = _compile(model, REFERENCE)
    assert "Add" in types and _effects(compiled, PASS) == 0 and not _residual_convs(compiled)
    x = _x()
    for got, want in zip(run_graph(compiled.graph, [x]), _ort(model, x)):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_switched_off_keeps_the_add_and_the_relu():
    compiled, types = _compile(block_model(), REFERENCE,
                               **{"ge.optimizationSwitch": f"{PASS}:off"})
    assert "Add" in types and "Relu" in types and _effects(compiled, PASS) == 0
    records = compiled.context.report.to_records()
    assert any(r["graph_fusion"].get(PASS, {}).get("switch") == "off" for r in records)
