"""What ge.pyatc says when the ATC flow cannot be reached: one line, exit status 255."""
from __future__ import annotations

import os
import sys

from _install_support import run


def one_line(result) -> str:
    assert result.returncode == 255
    assert result.stdout == b""
    lines = result.stderr.decode().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def test_missing_dependencies_name_the_interpreter_and_the_fix(entry_argv, entry_env,
                                                               bare_venv_python, tmp_path):
    result = run(entry_argv("pyatc") + ["--help"], dict(entry_env, PYTHON=str(bare_venv_python)),
                 tmp_path)
    line = one_line(result)
    assert str(bare_venv_python) in line
    assert "cffi, numpy, onnx, protobuf" in line
    assert f"{bare_venv_python} -m pip install cffi numpy onnx protobuf" in line


def test_library_not_found(entry_env, tmp_path):
    env = dict(entry_env, LD_LIBRARY_PATH=str(tmp_path))
    line = one_line(run([sys.executable, "-m", "ge.pyatc", "--help"], env, tmp_path))
    assert "libpyatc_wrapper.so not found" in line
    assert "set_env.sh" in line and "PYATC_WRAPPER_LIB" in line


def test_library_named_by_variable_missing(entry_env, tmp_path):
    missing = tmp_path / "nowhere" / "libpyatc_wrapper.so"
    env = dict(entry_env, PYATC_WRAPPER_LIB=str(missing))
    line = one_line(run([sys.executable, "-m", "ge.pyatc", "--help"], env, tmp_path))
    assert f"cannot load {missing}" in line and "set_env.sh" in line


def test_library_that_does_not_load(entry_env, tmp_path):
    broken = tmp_path / "libpyatc_wrapper.so"
    broken.write_bytes(b"not an ELF file\n")
    env = dict(entry_env, PYATC_WRAPPER_LIB=str(broken))
    line = one_line(run([sys.executable, "-m", "ge.pyatc", "--help"], env, tmp_path))
    assert f"cannot load {broken}" in line


def test_interpreter_without_ge(installed_prefix, tmp_path):
    """Prefix wrapper is fine, but the chosen interpreter cannot import ge (PYTHONPATH reset by
    -E): the wrapper says so in one line."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LD_LIBRARY_PATH")}
    wrapper = tmp_path / "python-E"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -E "$@"\n')
    wrapper.chmod(0o755)
    line = one_line(run([str(installed_prefix / "bin" / "pyatc"), "--help"],
                        dict(env, PYTHON=str(wrapper)), tmp_path))
    assert "cannot import ge.pyatc" in line


def test_generated_cffi_module_is_current():
    from ge.pyatc import _ffi_build

    with open(_ffi_build.TARGET) as f:
        assert f.read() == _ffi_build.render(), "run: python -m ge.pyatc._ffi_build"
