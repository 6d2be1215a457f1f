"""--keep_dtype, --modify_mixlist, --customize_dtypes, --op_precision_mode and
--op_select_implmode / --optypelist_for_implmode: files in CANN's formats move exactly the ops
they name; a bad file is E10003 naming the file and the line (exit 255, nothing written)."""
from __future__ import annotations

import json

import pytest

from _om import decisions
from _samples import SAMPLE_SOC
from ge.graph.attr_names import ATTR_IMPL_MODE
from ge.om import read_om


@pytest.fixture(scope="module")
def bert(ci_onnx, build_om, tmp_path_factory):
    """(build(name, options) -> decisions, the baseline decisions of each mode)."""
    root = tmp_path_factory.mktemp("files")

    def build(tag: str, options: dict) -> dict:
        return decisions(build_om(ci_onnx("bert"), root / f"{tag}.om", options))
    return build


def _moved(before: dict, after: dict) -> dict:
    return {k: (before[k][1], after[k][1]) for k in before if before[k][1] != after[k][1]}


def test_keep_dtype_pins_exactly_the_named_ops(bert, tmp_path):
    base = bert("fp16", {"ge.exec.precision_mode": "force_fp16"})
    layer_norm = sorted(k for k, v in base.items() if v[0] == "LayerNorm")[0]
    cfg = tmp_path / "keep.cfg"
    cfg.write_text(f"OpType::SoftmaxV2\n\n{layer_norm}\n")
    kept = bert("keep", {"ge.exec.precision_mode": "force_fp16", "keep_dtype": str(cfg)})
    named = {k for k, v in base.items() if v[0] == "SoftmaxV2"} | {layer_norm}
    assert _moved(base, kept) == {k: ("float16", "float32") for k in named}
    assert {kept[k][3] for k in named} == {"keep_dtype"}


def test_keep_dtype_matches_framework_names_too(bert, ci_onnx, tmp_path):
    onnx_name = next(n.name for n in ci_onnx("bert").graph.node if n.op_type == "LayerNormalization")
    cfg = tmp_path / "keep.cfg"
    cfg.write_text(onnx_name + "\n")
    kept = bert("keep_onnx", {"ge.exec.precision_mode": "force_fp16", "keep_dtype": str(cfg)})
    assert [v[0] for v in kept.values() if v[1] == "float32"] == ["LayerNorm"]


def test_modify_mixlist_moves_exactly_the_listed_types(bert, tmp_path):
    mode = {"ge.exec.precision_mode": "allow_mix_precision"}
    base = bert("mix", mode)
    cfg = tmp_path / "mixlist.json"
    cfg.write_text(json.dumps({"black-list": {"to-add": ["LayerNorm", "SoftmaxV2"]},
                               "white-list": {"to-remove": ["Transpose"]}}))
    after = bert("mix_modified", dict(mode, **{"ge.exec.modify_mixlist": str(cfg)}))
    moved = _moved(base, after)
    assert {base[k][0] for k in moved} == {"LayerNorm", "SoftmaxV2"}
    assert set(moved.values()) == {("float16", "float32")}
    assert {after[k][2] for k, v in after.items() if v[0] == "Transpose"} == {"gray"}
    assert {after[k][1] for k, v in after.items() if v[0] == "Transpose"} == {"float16"}


def test_customize_dtypes_sets_the_named_op(bert, tmp_path):
    base = bert("fp16_c", {"ge.exec.precision_mode": "force_fp16"})
    target = sorted(k for k, v in base.items() if v[0] == "LayerNorm")[0]
    cfg = tmp_path / "custom.cfg"
    cfg.write_text(f"{target}::InputDtype:float32,OutputDtype:float32\n"
                   "OpType::SoftmaxV2:InputDtype:float32,OutputDtype:float32\n")
    after = bert("custom", {"ge.exec.precision_mode": "force_fp16",
                            "ge.customizeDtypes": str(cfg)})
    moved = _moved(base, after)
    assert {base[k][0] for k in moved} == {"LayerNorm", "SoftmaxV2"} and target in moved
    assert {after[k][3] for k in moved} == {"customize_dtypes"}


def _impl_modes(om) -> dict:
    out = {}
    for op in read_om(om).model_def.graph[0].op:
        if ATTR_IMPL_MODE in op.attr:
            out.setdefault(op.type, set()).add(op.attr[ATTR_IMPL_MODE].i)
    return out


def test_implementation_modes_are_recorded_per_op(ci_onnx, build_om, tmp_path):
    model = ci_onnx("bert")
    plain = build_om(model, tmp_path / "plain.om", {"ge.exec.precision_mode": "force_fp16"})
    assert _impl_modes(plain) == {}                      # high_performance: the default
    listed = build_om(model, tmp_path / "listed.om", {
        "ge.opSelectImplmode": "high_precision", "ge.optypelistForImplmode": "SoftmaxV2,LayerNorm"})
    assert _impl_modes(listed) == {"SoftmaxV2": {0x4}, "LayerNorm": {0x4}}
    ini = tmp_path / "op_precision.ini"
    ini.write_text("[ByOpType]\nLayerNorm=high_precision\nSoftmaxV2=high_performance\n")
    by_file = build_om(model, tmp_path / "ini.om", {
        "ge.exec.op_precision_mode": str(ini), "ge.opSelectImplmode": "high_precision"})
    assert _impl_modes(by_file) == {"LayerNorm": {0x4}, "SoftmaxV2": {0x2}}


BAD_FILES = [
    ("keep_dtype", "keep.cfg", "Erf_1\nOpType::softmax\n", "line 2"),
    ("modify_mixlist", "mix.json", '{\n "black-list": {\n  "to-add": ["Erf",]\n }\n}\n',
     "line 3"),
    ("modify_mixlist", "mix2.json", '{\n "grey-list": {"to-add": ["Erf"]}\n}\n', "line 2"),
    ("customize_dtypes", "c.cfg", "OpType::Erf:InputDtype:float32,OutputDtype:float64\n",
     "line 1"),
    ("op_precision_mode", "p.ini", "[ByOpType]\nErf=high_precision\nLayerNorm=fastest\n",
     "line 3"),
]


@pytest.mark.parametrize("flag,name,text,line", BAD_FILES, ids=[b[1] for b in BAD_FILES])
def test_a_bad_file_is_e10003_naming_its_line(model_path, atc_main, tmp_path, flag, name, text,
                                              line):
    (tmp_path / name).write_text(text)
    mode = "allow_mix_precision" if flag == "modify_mixlist" else "force_fp16"
    run = atc_main("--framework=5", f"--model={model_path('bert_ci')}", "--output=out",
                   f"--soc_version={SAMPLE_SOC}", f"--precision_mode={mode}",
                   f"--{flag}={tmp_path / name}", cwd=tmp_path)
    assert run.rc == 255, run.text
    assert "E10003" in run.text and f"{name}, {line}" in run.text, run.text
    assert "Traceback" not in run.text and not (tmp_path / "out.om").exists()


def test_hif8_values_are_refused(model_path, atc_main, tmp_path):
    run = atc_main("--framework=5", f"--model={model_path('bert_ci')}", "--output=out",
                   f"--soc_version={SAMPLE_SOC}", "--precision_mode_v2=cube_hif8", cwd=tmp_path)
    assert run.rc == 255 and "EP0002" in run.text and "cube_hif8" in run.text
    assert not (tmp_path / "out.om").exists()


def test_unmatched_keep_dtype_lines_warn(bert, tmp_path):
    from ge.errors import take_warnings
    cfg = tmp_path / "keep.cfg"
    cfg.write_text("no_such_op\n")
    take_warnings()
    kept = bert("keep_missing", {"ge.exec.precision_mode": "force_fp16", "keep_dtype": str(cfg)})
    assert all(v[1] == "float16" for v in kept.values())
    codes = [w for w in take_warnings() if w.code == "WP0250"]
    assert len(codes) == 1 and "no_such_op" in str(codes[0]) and str(cfg) in str(codes[0])


def test_both_modes_through_options_is_e10056(ci_onnx, build_om, tmp_path):
    from ge.errors import GeError
    with pytest.raises(GeError) as caught:
        build_om(ci_onnx("bert"), tmp_path / "both.om", {
            "ge.exec.precision_mode": "force_fp16", "ge.exec.precision_mode_v2": "fp16"})
    assert caught.value.code == "E10056" and not (tmp_path / "both.om").exists()


def test_default_is_force_fp16(ci_onnx, build_om, tmp_path):
    from ge.om import read_om
    from ge.graph.attr_names import ATTR_MODEL_PRECISION
    om = build_om(ci_onnx("bert"), tmp_path / "default.om")
    assert read_om(om).model_attr(ATTR_MODEL_PRECISION) == "force_fp16"
    assert {v[1] for v in decisions(om).values()} == {"float16"}


def test_is_weight_clip_saturates_float16_weights(build_om, tmp_path):
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper
    from ge.om import read_om
    w = np.array([[1e5, -2e5], [0.5, 3.0]], np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "clip",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2])],
        [numpy_helper.from_array(w, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])

    def stored(clip: str):
        om = read_om(build_om(model, tmp_path / f"clip{clip}.om",
                              {"ge.exec.precision_mode": "force_fp16",
                               "ge.is_weight_clip": clip}))
        (const,) = [op for op in om.model_def.graph[0].op if op.type == "Const"]
        offset = const.attr["value"].t.desc.data_offset
        return np.frombuffer(om.weights, np.float16, 4, offset).reshape(2, 2)
    assert stored("1").tolist() == [[65504.0, -65504.0], [0.5, 3.0]]
    assert np.isinf(stored("0")[0]).all()
