"""Issue #19 items 6, 9 and 10: parser, writer and pass edges that ended in E19999 or worse.

Before: an input without a shape compiled, non-UTF-8 names, a NUL in an external-data location and dimensions whose byte size
overflows int64 ended in E19999; a negative dimension other than -1 compiled; a 2-million-element
`perm` was echoed into a 17 MB error; a 1500-level `--output` hit RecursionError; a non-UTF-8
`--fusion_switch_file` was E19999; a pass calling os.chdir moved a relative `--output`; a user
pass could take a built-in pass's name; a pass that broke shapes gave EZ9999 naming an op.
Each now ends with its code naming the culprit, exit 255, no OM, or with the right OM.
All runs are the ATC main flow in this process (`atc_main`).
"""
from __future__ import annotations

import os
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from ge.passes.bootstrap import unload_pass_plugins

ARGS = ("--framework=5", "--soc_version=Ascend310P3", "--output=net", "--precision_mode=must_keep_origin_dtype")


def _save(path: Path, nodes, inputs, outputs, initializers=()) -> Path:
    graph = h.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 13)]), str(path))
    return path


def _relu(path: Path, dims=(1, 4)) -> Path:
    return _save(path, [h.make_node("Relu", ["x"], ["y"], name="relu")],
                 [h.make_tensor_value_info("x", T.FLOAT, list(dims))],
                 [h.make_tensor_value_info("y", T.FLOAT, None)])


def _refused(run, work: Path, code: str, *texts: str) -> None:
    assert run.rc == 255, run.text
    assert f"({code})" in run.stdout and "Traceback" not in run.text, run.text
    for text in texts:
        assert text in run.stdout, (text, run.stdout)
    assert not list(work.glob("*.om")) and not list(work.glob(".*tmp*"))


def test_non_utf8_names_are_ep0101_naming_the_field(atc_main, tmp_path):
    data = _relu(tmp_path / "ok.onnx").read_bytes().replace(b"relu", b"r\xffl\xfe", 1)
    (tmp_path / "bad.onnx").write_bytes(data)
    run = atc_main(*ARGS, f"--model={tmp_path / 'bad.onnx'}", cwd=tmp_path)
    _refused(run, tmp_path, "EP0101", "in model.graph.node[0].name is not valid UTF-8")


def test_nul_in_an_external_data_location_is_e13026(atc_main, tmp_path):
    weight = h.make_tensor("w", T.FLOAT, [4], [1.0] * 4)
    weight.ClearField("float_data")
    weight.data_location = T.EXTERNAL
    entry = weight.external_data.add()
    entry.key, entry.value = "location", "w\0.bin"
    _save(tmp_path / "m.onnx", [h.make_node("Add", ["x", "w"], ["y"])],
          [h.make_tensor_value_info("x", T.FLOAT, [4])],
          [h.make_tensor_value_info("y", T.FLOAT, None)], [weight])
    run = atc_main(*ARGS, f"--model={tmp_path / 'm.onnx'}", cwd=tmp_path)
    _refused(run, tmp_path, "E13026", "w\\0.bin", "contains a NUL character")


@pytest.mark.parametrize("dims", [(2 ** 40, 2 ** 40), (2 ** 62, 4, 4)])
def test_sizes_beyond_int64_are_ep0301_naming_the_tensor(atc_main, tmp_path, dims):
    run = atc_main(*ARGS, f"--model={_relu(tmp_path / 'm.onnx', dims)}", cwd=tmp_path)
    _refused(run, tmp_path, "EP0301", f"output 0 of Data x has shape {list(dims)}",
             "more than a 64-bit offset can address")


def test_a_negative_dimension_is_ep0101(atc_main, tmp_path):
    run = atc_main(*ARGS, f"--model={_relu(tmp_path / 'm.onnx', (1, -3))}", cwd=tmp_path)
    _refused(run, tmp_path, "EP0101", "tensor x has the shape [1, -3]")


def test_an_input_without_a_shape_is_e10001_with_the_fix(atc_main, tmp_path):
    model = _save(tmp_path / "m.onnx", [h.make_node("Relu", ["x"], ["y"], name="relu")],
                  [h.make_tensor_value_info("x", T.FLOAT, None)],
                  [h.make_tensor_value_info("y", T.FLOAT, None)])
    run = atc_main(*ARGS, f"--model={model}", cwd=tmp_path)
    _refused(run, tmp_path, "E10001", "Value NULL for parameter --input_shape",
             "Input x has the shape [-2]", '--input_shape="x:')


def test_errors_quote_at_most_a_bounded_text(atc_main, tmp_path):
    model = _save(tmp_path / "m.onnx",
                  [h.make_node("Transpose", ["x"], ["y"], perm=list(range(2_000_000)))],
                  [h.make_tensor_value_info("x", T.FLOAT, [1, 4])],
                  [h.make_tensor_value_info("y", T.FLOAT, None)])
    run = atc_main(*ARGS, f"--model={model}", cwd=tmp_path)
    assert run.rc == 255 and "characters in all)" in run.stdout, run.stdout[-2000:]
    assert len(run.text) < 40_000


def test_a_deep_output_path_is_made(atc_main, tmp_path):
    deep = "/".join(["d"] * 1500)               # 2999 characters: within PATH_MAX
    run = atc_main(*ARGS[:2], f"--model={_relu(tmp_path / 'm.onnx')}", f"--output={deep}/net",
                   cwd=tmp_path)
    try:
        assert run.rc == 0, run.text
        assert (tmp_path / deep / "net.om").is_file()
    finally:            # bottom up: shutil.rmtree (pytest's cleanup) recurses once per level
        for name in os.listdir(tmp_path / deep):
            os.unlink(tmp_path / deep / name)
        level = tmp_path / deep
        while level != tmp_path:
            os.rmdir(level)
            level = level.parent


def test_a_non_utf8_fusion_switch_file_is_e10001(atc_main, tmp_path):
    (tmp_path / "switch.cfg").write_bytes(b"\xff\xfe{}")
    run = atc_main(*ARGS, f"--model={_relu(tmp_path / 'm.onnx')}",
                   f"--fusion_switch_file={tmp_path / 'switch.cfg'}", cwd=tmp_path)
    _refused(run, tmp_path, "E10001", "--fusion_switch_file", "it is not UTF-8 text (byte 0xff "
             "at offset 0)")


# -- passes ---------------------------------------------------------------------------------------
PASSES = {
    "chdir": '''
import os
from ge.passes import FusionBasePass, PassStage, register_fusion_pass

@register_fusion_pass(name="EdgeChdirPass", stage=PassStage.BEFORE_INFER_SHAPE)
class EdgeChdirPass(FusionBasePass):
    def run(self, graph, context):
        os.chdir(os.environ["EDGE_ELSEWHERE"])
''',
    "builtin_name": '''
from ge.passes import FusionBasePass, PassStage, register_fusion_pass

@register_fusion_pass(name="ConvBatchNormFusionPass", stage=PassStage.BEFORE_INFER_SHAPE)
class Impostor(FusionBasePass):
    def run(self, graph, context):
        pass
''',
    "breaks_shapes": '''
from ge.es.all import BatchMatMulV2
from ge.passes import PassStage, PatternFusionPass, pattern, register_fusion_pass

@register_fusion_pass(name="EdgeBreaksShapesPass", stage=PassStage.BEFORE_INFER_SHAPE)
class EdgeBreaksShapesPass(PatternFusionPass):
    @pattern
    def add(self, inputs):
        return inputs[0] + inputs[1]

    def replacement(self, inputs):
        return BatchMatMulV2(inputs[1], inputs[0])     # [2,1] x [2,2]: inner dims differ
''',
}


@pytest.fixture
def with_pass(tmp_path, monkeypatch):
    """Load one of PASSES (through ASCEND_GE_PY_PASS_PATH) for this test only."""
    def use(name: str) -> None:
        directory = tmp_path / "passes"
        directory.mkdir()
        (directory / f"{name}.py").write_text(PASSES[name])
        monkeypatch.setenv("ASCEND_GE_PY_PASS_PATH", str(directory))
        unload_pass_plugins()
    yield use
    unload_pass_plugins()


def _matmul_add(path: Path) -> Path:
    return _save(path, [h.make_node("MatMul", ["x", "w"], ["mm"], name="matmul"),
                        h.make_node("Add", ["mm", "z"], ["y"], name="add")],
                 [h.make_tensor_value_info("x", T.FLOAT, [2, 3]),
                  h.make_tensor_value_info("w", T.FLOAT, [3, 2]),
                  h.make_tensor_value_info("z", T.FLOAT, [2, 1])],
                 [h.make_tensor_value_info("y", T.FLOAT, None)])


def test_a_pass_that_changes_directory_does_not_move_the_output(atc_main, tmp_path, with_pass,
                                                                monkeypatch):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.setenv("EDGE_ELSEWHERE", str(elsewhere))
    with_pass("chdir")
    work = tmp_path / "work"
    work.mkdir()
    run = atc_main(*ARGS, f"--model={_matmul_add(tmp_path / 'm.onnx')}", cwd=work)
    assert run.rc == 0, run.text
    assert (work / "net.om").is_file() and not list(elsewhere.iterdir())
    assert os.getcwd() != str(elsewhere)


def test_a_user_pass_may_not_take_a_builtin_name(atc_main, tmp_path, with_pass):
    with_pass("builtin_name")
    run = atc_main(*ARGS, f"--model={_matmul_add(tmp_path / 'm.onnx')}", cwd=tmp_path)
    _refused(run, tmp_path, "E13029", str(tmp_path / "passes" / "builtin_name.py"),
             "pass name ConvBatchNormFusionPass is the name of a built-in pass")


def test_a_pass_that_breaks_shapes_is_e13028_naming_it(atc_main, tmp_path, with_pass):
    with_pass("breaks_shapes")
    run = atc_main(*ARGS, f"--model={_matmul_add(tmp_path / 'm.onnx')}", cwd=tmp_path)
    _refused(run, tmp_path, "E13028", "Failed to run custom fusion pass EdgeBreaksShapesPass",
             "shape inference failed", str(tmp_path / "passes" / "breaks_shapes.py") + ":")
