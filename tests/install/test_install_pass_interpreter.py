"""The promise of pyatc (seed 004 §6): user Python passes run in the interpreter the user chose.

Proven from inside the real ATC flow: a pass file on ASCEND_GE_PY_PASS_PATH imports a package
only the chosen venv has and records sys.executable.  `atc`, given the same environment, runs
the file in its own embedded interpreter, where the marker package is absent.
"""
from __future__ import annotations

import json
import textwrap


from _install_support import run

PASS_FILE = textwrap.dedent('''
    import json, os, sys
    try:
        import pyatc_test_marker
        marker = pyatc_test_marker.NAME
    except ImportError:
        marker = None

    with open(os.environ["PASS_RECORD"], "w") as f:
        json.dump({"executable": sys.executable, "marker": marker}, f)
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


def _record_pass_run(entry, entry_argv, entry_env, marked_venv_python, tmp_path) -> dict:
    model, pass_file, record = tmp_path / "tiny.onnx", tmp_path / "record_pass.py", \
        tmp_path / "record.json"
    tiny_onnx_model(model)
    pass_file.write_text(PASS_FILE)
    env = dict(entry_env, PYTHON=str(marked_venv_python), ASCEND_GE_PY_PASS_PATH=str(pass_file),
               PASS_RECORD=str(record), ASCEND_WORK_PATH=str(tmp_path),
               ASCEND_CACHE_PATH=str(tmp_path / "cache"))
    run(entry_argv(entry) + [f"--model={model}", "--framework=5", "--soc_version=Ascend310",
                             "--precision_mode=must_keep_origin_dtype",
                             f"--output={tmp_path / 'tiny'}"], env, tmp_path, timeout=600)
    assert (tmp_path / "tiny.om").exists()
    assert record.exists(), "the pass file was not imported by the ATC flow"
    return json.loads(record.read_text())


def test_user_pass_runs_in_the_interpreter_pyatc_was_given(entry_argv, entry_env,
                                                           marked_venv_python, tmp_path):
    seen = _record_pass_run("pyatc", entry_argv, entry_env, marked_venv_python, tmp_path)
    assert seen == {"executable": str(marked_venv_python), "marker": "marked-venv"}


def test_atc_runs_passes_in_its_own_interpreter(entry_argv, entry_env, marked_venv_python,
                                                tmp_path):
    seen = _record_pass_run("atc", entry_argv, entry_env, marked_venv_python, tmp_path)
    assert seen["executable"] != str(marked_venv_python) and seen["marker"] is None
