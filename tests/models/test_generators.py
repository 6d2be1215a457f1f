"""The model generators build valid ONNX that onnxruntime runs to sane, finite outputs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.models import MODELS, bert, light, save  # noqa: E402

ort = pytest.importorskip("onnxruntime")

EXPECTED = {
    # name: (op types that must appear, {output: shape} for batch 2)
    "resnet50": ({"Conv", "BatchNormalization", "Relu", "MaxPool", "Add", "GlobalAveragePool",
                  "Flatten", "Gemm"}, {"output": (2, 1000)}),
    "mobilenetv2": ({"Conv", "BatchNormalization", "Clip", "Add", "GlobalAveragePool",
                     "Reshape", "Gemm"}, {"output": (2, 1000)}),
    "bert": ({"Gather", "LayerNormalization", "MatMul", "Add", "Reshape", "Transpose",
              "Softmax", "Div", "Mul", "Sub", "Unsqueeze", "Cast", "Erf"},
             {"last_hidden_state": (2, 8, 64)}),
}


def _feeds(session: ort.InferenceSession) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    feeds = {}
    for arg in session.get_inputs():
        if arg.name == "input_ids":
            feeds[arg.name] = rng.integers(0, bert.SIZES["ci"]["vocab"], arg.shape, np.int64)
        elif arg.name == "attention_mask":
            mask = np.ones(arg.shape, np.int64)
            mask[:, -3:] = 0  # padded tail
            feeds[arg.name] = mask
        else:
            feeds[arg.name] = rng.standard_normal(arg.shape).astype(np.float32)
    return feeds


def _run(model: onnx.ModelProto) -> dict[str, np.ndarray]:
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    session = ort.InferenceSession(model.SerializeToString(), opts,
                                   providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(None, _feeds(session))))


def _check(model: onnx.ModelProto, ops: set[str], shapes: dict[str, tuple[int, ...]]) -> None:
    onnx.checker.check_model(model, full_check=True)
    used = {n.op_type for n in model.graph.node}
    assert ops <= used, f"missing op types {sorted(ops - used)}"
    outputs = _run(model)
    assert {k: v.shape for k, v in outputs.items()} == shapes
    for value in outputs.values():
        assert np.isfinite(value).all()
        assert 1e-2 < float(value.std()) < 1e2


@pytest.mark.parametrize("name", sorted(MODELS))
def test_ci_model_checks_and_runs(name: str) -> None:
    ops, shapes = EXPECTED[name]
    _check(MODELS[name](size="ci", batch=2), ops, shapes)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_build_is_deterministic(name: str) -> None:
    a = MODELS[name](size="ci").SerializeToString()
    b = MODELS[name](size="ci").SerializeToString()
    assert a == b


@pytest.mark.parametrize("opset,layernorm", [(13, None), (18, "decomposed")])
def test_bert_decomposed_layernorm_matches_fused(opset: int, layernorm: str | None) -> None:
    decomposed = bert.build(size="ci", batch=2, opset=opset, layernorm=layernorm)
    ops = {n.op_type for n in decomposed.graph.node}
    assert "LayerNormalization" not in ops
    assert {"ReduceMean", "Sub", "Pow", "Sqrt", "Div", "Mul", "Add"} <= ops
    onnx.checker.check_model(decomposed, full_check=True)
    got = _run(decomposed)["last_hidden_state"]
    want = _run(bert.build(size="ci", batch=2))["last_hidden_state"]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_bert_mask_hides_padded_tokens() -> None:
    model = bert.build(size="ci", batch=1)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    session = ort.InferenceSession(model.SerializeToString(), opts,
                                   providers=["CPUExecutionProvider"])
    ids = np.arange(8, dtype=np.int64)[None] * 3
    mask = np.array([[1, 1, 1, 1, 1, 0, 0, 0]], np.int64)
    base = session.run(None, {"input_ids": ids, "attention_mask": mask})[0]
    changed = ids.copy()
    changed[0, -1] = 99
    other = session.run(None, {"input_ids": changed, "attention_mask": mask})[0]
    # Unmasked positions do not see the padded token; the padded position itself changes.
    np.testing.assert_allclose(other[0, :5], base[0, :5], rtol=1e-5, atol=1e-5)
    assert not np.allclose(other[0, -1], base[0, -1])


def test_refusals() -> None:
    with pytest.raises(ValueError):
        bert.build(opset=16, layernorm="fused")
    with pytest.raises(ValueError):
        MODELS["mobilenetv2"](opset=10)
    with pytest.raises(ValueError):
        MODELS["resnet50"](size="huge")


def test_save_round_trips(tmp_path: Path) -> None:
    model = bert.build(size="ci")
    path = tmp_path / "sub" / "bert.onnx"
    save(model, path)
    assert onnx.load(str(path)).SerializeToString() == model.SerializeToString()
    assert not (tmp_path / "sub" / "bert.onnx.data").exists()


def test_light_models_listed() -> None:
    models = light.light_models()
    assert [m.name for m in models] == list(light.LIGHT_NAMES)
    for m in models:
        assert len(m.inputs) == 1 and m.inputs[0][1] == (1, 3, 224, 224)


def test_cli_writes_model(tmp_path: Path) -> None:
    script = Path(__file__).resolve().parents[2] / "bench" / "models" / "bert.py"
    out = tmp_path / "bert.onnx"
    subprocess.run([sys.executable, str(script), "--size", "ci", "--out", str(out),
                    "--opset", "13"], check=True)
    model = onnx.load(str(out))
    assert model.opset_import[0].version == 13
    assert "LayerNormalization" not in {n.op_type for n in model.graph.node}
