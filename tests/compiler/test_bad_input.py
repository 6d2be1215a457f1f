"""Bad models and unwritable outputs through `pyatc`: an ATC error code, exit 255, no
traceback, and nothing left behind (no .om, no temporary file)."""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Dict

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from .conftest import compile_args


def _model(nodes, inputs, outputs, inits=(), opset: int = 13) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _vi(name: str, shape) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def _write(model: onnx.ModelProto) -> bytes:
    return model.SerializeToString()


def _cyclic() -> bytes:
    return _write(_model([helper.make_node("Add", ["x", "b"], ["a"], name="add_a"),
                          helper.make_node("Relu", ["a"], ["b"], name="relu_b")],
                         [_vi("x", [2])], [_vi("b", [2])]))


def _missing_initializer() -> bytes:
    return _write(_model([helper.make_node("Add", ["x", "w"], ["y"], name="add")],
                         [_vi("x", [2, 3])], [_vi("y", [2, 3])]))


def _inconsistent_shapes() -> bytes:
    w = numpy_helper.from_array(np.ones((4, 5), np.float32), "w")
    return _write(_model([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
                         [_vi("x", [2, 3])], [_vi("y", [2, 5])], [w]))


def _external(location: str) -> bytes:
    w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[4])
    w.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", "0"), ("length", "16")):
        entry = w.external_data.add()
        entry.key, entry.value = key, value
    return _write(_model([helper.make_node("Add", ["x", "w"], ["y"], name="add")],
                         [_vi("x", [4])], [_vi("y", [4])], [w]))


def _truncated() -> bytes:
    w = numpy_helper.from_array(np.arange(4096, dtype=np.float32).reshape(64, 64), "w")
    data = _write(_model([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
                         [_vi("x", [1, 64])], [_vi("y", [1, 64])], [w]))
    return data[:len(data) // 2]


# name -> (model bytes, expected code)
CASES: Dict[str, tuple] = {
    "empty": (lambda: b"", "E10041"),
    "truncated": (_truncated, "E10041"),
    "not_onnx_text": (lambda: b"this is not a model\n" * 10, "E10041"),
    "not_onnx_png": (lambda: b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4, "E10041"),
    "cyclic": (_cyclic, "EP0101"),
    "missing_initializer": (_missing_initializer, "EP0101"),
    "inconsistent_shapes": (_inconsistent_shapes, "EZ9999"),
    "external_data_parent_dir": (lambda: _external("../../../../etc/passwd"), "E13026"),
    "external_data_absolute": (lambda: _external("/etc/passwd"), "E13026"),
}
# "Title(E10041): ..." or "EZ9999: ..." on the report's headline
_CODE = re.compile(r"(?:\(|^)([EW][A-Z0-9]\d{4})(?:\)|:)", re.MULTILINE)


def _files(root: Path) -> set:
    """Files (not directories: like CANN, the output-path check creates the output's parent
    directory even when the run later fails, spec/atc-cli.md probe 13)."""
    return {str(p.relative_to(root)) for p in root.rglob("*") if not p.is_dir()}


def assert_failed_cleanly(run, code: str, *roots: Path, before: Dict[Path, set]) -> None:
    assert run.rc == 255, run.text
    assert "ATC run failed" in run.stdout, run.text
    assert code in _CODE.findall(run.stdout), run.text
    assert "Traceback" not in run.text
    for root in roots:
        assert _files(root) == before[root], f"left behind in {root}"
        assert not [p for p in root.rglob("*.om") if not p.is_dir()]


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_model(case, atc_main, tmp_path):
    make, code = CASES[case]
    work = tmp_path / "work"
    work.mkdir()
    (work / "m.onnx").write_bytes(make())
    before = {work: _files(work)}
    run = atc_main(*compile_args(work / "m.onnx", "out/m"), cwd=work)
    assert_failed_cleanly(run, code, work, before=before)


def test_external_data_symlink_escape(atc_main, tmp_path):
    outside = tmp_path / "secret.bin"
    outside.write_bytes(np.ones(4, np.float32).tobytes())
    work = tmp_path / "work"
    work.mkdir()
    os.symlink(outside, work / "w.bin")
    (work / "m.onnx").write_bytes(_external("w.bin"))
    before = {work: _files(work)}
    run = atc_main(*compile_args(work / "m.onnx", "m"), cwd=work)
    assert_failed_cleanly(run, "E13026", work, before=before)


def _small_model(work: Path) -> Path:
    w = numpy_helper.from_array(np.ones((3, 3), np.float32), "w")
    path = work / "m.onnx"
    path.write_bytes(_write(_model([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
                                   [_vi("x", [2, 3])], [_vi("y", [2, 3])], [w])))
    return path


# where -> (--output value, code).  Root ignores permission bits, so a chmod-ed directory
# would not do: the output's parent is a regular file, or on /proc (checked before the
# compile), or `<output>.om` is a directory (found when the OM is written, after the compile).
OUTPUTS: Dict[str, tuple] = {
    "under_a_file": (lambda work: str(work / "plain_file" / "m"), "E10001"),
    "read_only_filesystem": (lambda work: "/proc/pyatc_test_out/m", "E10001"),
    "om_is_a_directory": (lambda work: str(work / "taken"), "E13004"),
}


@pytest.mark.parametrize("where", sorted(OUTPUTS))
def test_unwritable_output(where, atc_main, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    (work / "plain_file").write_text("not a directory\n")
    (work / "taken.om").mkdir()
    (work / "taken.om" / "keep").write_text("")
    model = _small_model(work)
    before = {work: _files(work)}
    output, code = OUTPUTS[where]
    run = atc_main(*compile_args(model, output(work)), cwd=work)
    assert_failed_cleanly(run, code, work, before=before)
