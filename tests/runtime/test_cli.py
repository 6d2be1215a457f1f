"""The command lines: python3 -m ge.runtime (msame style) and python3 -m ge.runtime.compare."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from _build import env_with_repo, tiny_inputs, tiny_model

import ge.runtime
from ge.runtime.__main__ import main as run_main
from ge.runtime._cli import guarded
from ge.runtime.compare import main as compare_main


@pytest.fixture(scope="module")
def files(tmp_path_factory, tiny_om):
    tmp = tmp_path_factory.mktemp("cli")
    onnx_path = tmp / "tiny.onnx"
    onnx_path.write_bytes(tiny_model().SerializeToString())
    om = tiny_om
    x, y = tiny_inputs()
    np.save(tmp / "x.npy", x)
    np.save(tmp / "y.npy", y)
    x.tofile(tmp / "x.bin")
    y.tofile(tmp / "y.bin")
    return tmp, str(onnx_path), om


def _run(main, argv, capsys):
    rc = guarded(main, argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return rc, out, err


def test_npy_inputs_write_npy_outputs(files, capsys):
    tmp, _, om = files
    rc, out, _ = _run(run_main, ["--model", om, "--input", f"{tmp}/x.npy,{tmp}/y.npy",
                                 "--output", str(tmp / "out")], capsys)
    assert rc == 0
    assert "output 0" in out and "Inference average time" in out
    assert np.load(tmp / "out" / "output_0.npy").shape == (1, 4, 8, 8)


def test_bin_inputs_take_shape_from_model(files, capsys):
    tmp, _, om = files
    rc, _, _ = _run(run_main, [f"--model={om}", f"--input={tmp}/x.bin,{tmp}/y.bin",
                               f"--output={tmp}/outbin", "--outfmt", "BIN"], capsys)
    assert rc == 0
    raw = np.fromfile(tmp / "outbin" / "output_0.bin", dtype=np.float32)
    model = ge.runtime.load(om)
    try:
        expected = model.run(tiny_inputs())[0]
    finally:
        model.close()
    np.testing.assert_array_equal(raw.reshape(expected.shape), expected)


@pytest.mark.parametrize("argv, code", [
    (lambda t, om: ["--model", om, "--input", f"{t}/x.npy"], "EP0403"),
    (lambda t, om: ["--model", om, "--input", f"{t}/y.npy,{t}/x.npy"], "EP0403"),
    (lambda t, om: ["--model", om, "--input", f"{t}/x.bin,{t}/x.bin"], "EP0403"),
    (lambda t, om: ["--model", om, "--input", f"{t}/nope.npy,{t}/y.npy"], "E13001"),
    (lambda t, om: ["--model", f"{t}/nope.om"], "E13001"),
    (lambda t, om: ["--model", f"{t}/x.npy"], "E10041"),
    (lambda t, om: ["--modle", om], "E10001"),
    (lambda t, om: ["--model"], "E10004"),
    (lambda t, om: [], "E10004"),
    (lambda t, om: ["--model", om, "--loop", "x"], "E10001"),
    (lambda t, om: ["--model", om, "--outfmt", "XML"], "E10001"),
])
def test_bad_command_lines_exit_255_with_a_code(files, capsys, argv, code):
    tmp, _, om = files
    rc, _, err = _run(run_main, argv(tmp, om), capsys)
    assert rc == 255
    assert err.startswith(f"[ERROR] {code}:"), err


@pytest.mark.parametrize("old, new", [(b"}", b"("), (b"False", b"Fal e")])
def test_a_damaged_npy_header_is_coded(files, capsys, old, new):
    """Found by the fuzzing of issue #19: numpy's header parser meets some damaged headers with
    tokenize.TokenError, SyntaxError or TypeError (they ended in E19999); all are EP0403."""
    tmp, _, om = files
    bad = tmp / f"damaged_{len(new)}.npy"
    bad.write_bytes((tmp / "x.npy").read_bytes().replace(old, new, 1))
    rc, _, err = _run(run_main, ["--model", om, "--input", f"{bad},{tmp}/y.npy"], capsys)
    assert rc == 255
    assert err.startswith("[ERROR] EP0403:") and str(bad) in err and "not a valid .npy" in err


def test_help(capsys):
    rc, out, _ = _run(run_main, ["--help"], capsys)
    assert rc == 0 and "--model" in out and "--outfmt" in out


def test_process_exit_status(files):
    tmp, _, om = files
    ok = subprocess.run([sys.executable, "-m", "ge.runtime", "--model", om], env=env_with_repo(),
                        capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stderr
    bad = subprocess.run([sys.executable, "-m", "ge.runtime", "--model", f"{tmp}/x.npy"],
                         env=env_with_repo(), capture_output=True, text=True, timeout=120)
    assert bad.returncode == 255
    assert "Traceback" not in bad.stderr and "E10041" in bad.stderr


def test_compare_passes_and_reports(files, capsys):
    _, onnx_path, om = files
    rc, out, _ = _run(compare_main, ["--onnx", onnx_path, "--om", om, "--dump"], capsys)
    assert rc == 0, out
    assert "result: PASS" in out and "no divergence" in out


def test_compare_fails_outside_tolerance(files, capsys):
    """The OM against an ONNX model whose bias differs: MISMATCH and exit 255."""
    from onnx import numpy_helper
    tmp, _, om = files
    other = tiny_model()
    bias = next(t for t in other.graph.initializer if t.name == "b")
    bias.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(bias) + 1.0, "b"))
    path = tmp / "other.onnx"
    path.write_bytes(other.SerializeToString())
    rc, out, _ = _run(compare_main, ["--onnx", str(path), "--om", om, "--dump"], capsys)
    assert rc == 255
    assert "MISMATCH" in out and "result: FAIL" in out
    assert "first divergence: op conv (Conv2D)" in out


def test_compare_bad_input_is_coded(files, capsys):
    _, onnx_path, om = files
    rc, _, err = _run(compare_main, ["--onnx", onnx_path + ".missing", "--om", om], capsys)
    assert rc == 255 and err.startswith("[ERROR] E10041")
