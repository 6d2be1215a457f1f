"""The promise of pyatc (seed 004 §6): user Python passes run in the interpreter the user chose.

Proven from inside the real ATC flow: a pass file on ASCEND_GE_PY_PASS_PATH imports a package
only the chosen venv has and records sys.executable. Until the ATC flow loads pass plugins
(ge.passes discovery wired into ge.atc), the file is never imported and this test is an
expected failure; strict, so it turns red the day pass loading lands and the mark must go.
test_install_native.py::test_pyatc_flow_runs_in_the_chosen_interpreter proves the same with a
stand-in flow today.
"""
from __future__ import annotations

import json
import textwrap

import pytest

from _install_support import run

PASS_FILE = textwrap.dedent('''
    import json, os, sys
    import pyatc_test_marker

    with open(os.environ["PASS_RECORD"], "w") as f:
        json.dump({"executable": sys.executable, "marker": pyatc_test_marker.NAME}, f)
''')


def tiny_onnx_model(path):
    import onnx
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")], "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.save(model, str(path))


@pytest.mark.xfail(strict=True, reason="the ATC flow does not load ASCEND_GE_PY_PASS_PATH yet")
def test_user_pass_runs_in_the_interpreter_pyatc_was_given(entry_argv, entry_env,
                                                           marked_venv_python, tmp_path):
    model, pass_file, record = tmp_path / "tiny.onnx", tmp_path / "record_pass.py", \
        tmp_path / "record.json"
    tiny_onnx_model(model)
    pass_file.write_text(PASS_FILE)
    env = dict(entry_env, PYTHON=str(marked_venv_python), ASCEND_GE_PY_PASS_PATH=str(pass_file),
               PASS_RECORD=str(record), ASCEND_WORK_PATH=str(tmp_path))
    run(entry_argv("pyatc") + [f"--model={model}", "--framework=5", "--soc_version=Ascend310",
                               f"--output={tmp_path / 'tiny'}"], env, tmp_path, timeout=600)
    assert record.exists(), "the pass file was not imported by the ATC flow"
    assert json.loads(record.read_text()) == {"executable": str(marked_venv_python),
                                              "marker": "marked-venv"}
