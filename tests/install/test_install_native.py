"""The native layer: GeApiWrapper_Atc_Main, ge_main_impl in both interpreter modes, SIGINT.

A stand-in `ge.atc` (conftest.stub_flow_*) records what reached the flow, so these tests see
argv bytes, return values and the interpreter exactly as the native layer delivered them.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from _install_support import read_record, run

NON_UTF8 = b"--input_shape=\xff\xfe:1"


def stub_env(base, stub_dir, out, **extra):
    env = dict(base)
    env["PYTHONPATH"] = os.pathsep.join([str(stub_dir)] + [
        p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env["STUB_OUT"] = str(out)
    env.update(extra)
    return env


def test_wrapper_rejects_bad_argv(installed_prefix):
    import cffi

    ffi = cffi.FFI()
    ffi.cdef("int GeApiWrapper_Atc_Main(int argc, const char *const *argv);")
    lib = ffi.dlopen(str(installed_prefix / "lib64" / "libpyatc_wrapper.so"),
                     ffi.RTLD_GLOBAL | ffi.RTLD_NOW)
    arg = ffi.new("char[]", b"atc")
    assert lib.GeApiWrapper_Atc_Main(0, ffi.new("char *[]", [arg])) == 1
    assert lib.GeApiWrapper_Atc_Main(-1, ffi.new("char *[]", [arg])) == 1
    assert lib.GeApiWrapper_Atc_Main(1, ffi.NULL) == 1
    assert lib.GeApiWrapper_Atc_Main(2, ffi.new("char *[]", [arg, ffi.NULL])) == 1


def test_wrapper_library_does_not_link_libpython(installed_prefix):
    needed = subprocess.run(["readelf", "-d", str(installed_prefix / "lib64/libpyatc_wrapper.so")],
                            capture_output=True, text=True, check=True).stdout
    assert "libpython" not in needed
    symbols = subprocess.run(["nm", "-D", "--defined-only",
                              str(installed_prefix / "lib64/libpyatc_wrapper.so")],
                             capture_output=True, text=True, check=True).stdout
    exported = {line.split()[-1] for line in symbols.splitlines() if " T " in line}
    assert exported == {"GeApiWrapper_Atc_Main"}


@pytest.mark.parametrize("rc", ["0", "-1", "7"])
def test_atc_bin_starts_interpreter_and_returns_flow_status(installed_prefix, stub_flow_prefix,
                                                            tmp_path, rc):
    out = tmp_path / "record.json"
    atc_bin = installed_prefix / "bin" / "atc.bin"
    result = subprocess.run([str(atc_bin), "--mode=0", NON_UTF8], cwd=tmp_path,
                            env=stub_env(os.environ, stub_flow_prefix, out, STUB_RC=rc),
                            capture_output=True)
    assert result.returncode == int(rc) & 0xFF
    record = read_record(out)
    assert [bytes.fromhex(a) for a in record["argv"]] == [
        str(atc_bin).encode(), b"--mode=0", NON_UTF8]
    assert record["version"] == list(sys.version_info[:2])


def test_pyatc_runs_flow_in_calling_interpreter(entry_env, stub_flow_prefix, tmp_path):
    out = tmp_path / "record.json"
    result = subprocess.run([sys.executable, "-m", "ge.pyatc", "--mode=0", NON_UTF8],
                            cwd=tmp_path, capture_output=True,
                            env=stub_env(entry_env, stub_flow_prefix, out, STUB_RC="-1"))
    assert result.returncode == 255, result.stderr
    record = read_record(out)
    assert [bytes.fromhex(a) for a in record["argv"]] == [
        f"{sys.executable} -m ge.pyatc".encode(), b"--mode=0", NON_UTF8]
    assert record["executable"] == sys.executable


def test_pyatc_wrapper_passes_its_real_path(installed_venv, stub_flow_venv, tmp_path):
    out = tmp_path / "record.json"
    link = tmp_path / "pyatc"
    link.symlink_to(installed_venv / "bin" / "pyatc")
    result = run([str(link), "--help"],
                 stub_env(os.environ, stub_flow_venv, out, PYTHON=sys.executable), tmp_path)
    assert result.returncode == 0, result.stderr
    argv = [bytes.fromhex(a).decode() for a in read_record(out)["argv"]]
    assert argv == [os.path.realpath(installed_venv / "bin" / "pyatc"), "--help"]


def test_pyatc_flow_runs_in_the_chosen_interpreter(installed_venv, stub_flow_venv,
                                                    marked_venv_python, tmp_path):
    """PYTHON=<venv python> pyatc: the flow sees that interpreter and that venv's packages."""
    out = tmp_path / "record.json"
    env = stub_env(os.environ, stub_flow_venv, out, PYTHON=str(marked_venv_python))
    result = run([str(installed_venv / "bin" / "pyatc"), "--help"], env, tmp_path)
    assert result.returncode == 0, result.stderr
    record = read_record(out)
    assert record["executable"] == str(marked_venv_python)
    assert record["marker"] == "marked-venv"


def other_interpreters():
    found = sorted(Path("/root/.pyenv/versions").glob("3.*/bin/python3"))
    found += [Path("/usr/bin/python3")]
    usable = []
    for python in found:
        probe = subprocess.run([str(python), "-c", "import sys; print(sys.version_info >= (3, 9))"],
                               capture_output=True, text=True)
        if probe.stdout.strip() == "True":
            usable.append(python)
    return usable


def test_one_wrapper_library_serves_every_cpython(installed_prefix, stub_flow_prefix, tmp_path):
    """Stable ABI, no libpython: the same .so runs the flow in each CPython 3.9+ found.
    ctypes stands in for cffi here because these interpreters have no packages installed."""
    library = installed_prefix / "lib64" / "libpyatc_wrapper.so"
    code = ("import ctypes, sys\n"
            f"lib = ctypes.CDLL({str(library)!r}, mode=ctypes.RTLD_GLOBAL | 2)\n"
            "argv = (ctypes.c_char_p * 2)(b'pyatc', b'--help')\n"
            "sys.exit(lib.GeApiWrapper_Atc_Main(2, argv))\n")
    seen = []
    for python in other_interpreters():
        out = tmp_path / f"record-{len(seen)}.json"
        result = run([str(python), "-c", code],
                     stub_env(os.environ, stub_flow_prefix, out, STUB_RC="5"), tmp_path)
        assert result.returncode == 5, (python, result.stderr)
        seen.append(tuple(read_record(out)["version"]))
    assert len(seen) >= 2, f"need two CPython 3.9+ interpreters, found {seen}"


@pytest.mark.parametrize("entry", ["atc.bin", "pyatc"])
def test_ctrl_c_reaches_the_flow_as_keyboard_interrupt(entry, installed_prefix, entry_env,
                                                       stub_flow_prefix, tmp_path):
    out, ready = tmp_path / "record.json", tmp_path / "ready"
    argv = ([str(installed_prefix / "bin" / "atc.bin")] if entry == "atc.bin"
            else [sys.executable, "-m", "ge.pyatc"])
    env = stub_env(entry_env, stub_flow_prefix, out, STUB_READY=str(ready))
    process = subprocess.Popen(argv, cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not ready.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)  # polling for the flow to start, not timing the behaviour
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 255, stderr
    assert read_record(out)["interrupted"] is True
    assert b"Traceback" not in stderr
