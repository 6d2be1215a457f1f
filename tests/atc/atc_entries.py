"""Helpers for the ATC contract tests: run `ge.atc.main_impl` in this process, or an entry as a
real process (only for the cross-entry comparison).

`atc(*args, env=...)` (fixture) calls `main_impl` — the function the native layer calls — in
the probe directory with its own stdout/stderr, and returns what a user would see from the
process: exit status (`main_impl`'s -1 is 255), stdout and stderr, with the program name and
the `[PID: n] <time>` stamp normalised so runs compare byte for byte.  `fake_api` replaces the
functions of `ge.compiler.api` that ATC hands over to, so tests check what ATC does around the
hand-over.  `ENTRIES` maps an entry name to the argv prefix that starts it, or to the name of
an installed entry of tests/conftest.py (`entry_argv(name)` run in `entry_env`).
"""
from __future__ import annotations

import io
import json
import logging
import os
import re
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from ge import errors as ge_errors

REPO = Path(__file__).resolve().parents[2]

ENTRIES: dict[str, "list[str] | str"] = {
    "module": [sys.executable, "-m", "ge.atc"],
    "atc": "atc", "pyatc": "pyatc", "pymod": "python3 -m ge.pyatc",
}
# Variables of the ATC run's own environment: none leaks in from the test's, except the kernel
# cache location (the output does not depend on it; sharing it saves compiles).
_SCRUBBED = ("ASCEND_", "NPU_")
_KEPT = ("ASCEND_CACHE_PATH",)

# Installed entries resolved through the session fixtures: name -> (argv prefix, environment).
_INSTALLED: dict[str, tuple[list[str], dict]] = {}

_STAMP = re.compile(r"\[PID: \d+\] \d{4}-\d\d-\d\d-\d\d:\d\d:\d\d\.\d{3}\.\d{3}")
_PROGRAMS = re.compile(r"python3 -m ge\.pyatc|\bpyatc\b")


@dataclass(frozen=True)
class Run:
    rc: int
    stdout: str
    stderr: str

    @property
    def lines(self) -> list[str]:
        return self.stdout.split("\n")

    @property
    def headline(self) -> str:
        """First line of the error report: the line after the failure line."""
        lines = self.lines
        for index, line in enumerate(lines):
            if line.startswith("ATC run failed"):
                return lines[index + 1]
        raise AssertionError(f"no failure line in:\n{self.stdout}")


def normalise(text: str) -> str:
    return _PROGRAMS.sub("atc", _STAMP.sub("[PID: n] <time>", text))


def _decode(data: bytes) -> str:
    return normalise(data.decode("utf-8", "surrogateescape"))


# ------------------------------------------------------------------ in process
def _stream() -> io.TextIOWrapper:
    return io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="surrogateescape",
                            write_through=True)


def run_main_impl(argv: list[str]) -> Run:
    """`ge.atc.main_impl(argv)` with stdout/stderr captured as bytes, as a process shows them."""
    from ge.atc import main_impl
    out, err = _stream(), _stream()
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        rc = main_impl(argv)
    finally:
        sys.stdout, sys.stderr = saved
    return Run(rc & 0xFF, _decode(out.buffer.getvalue()), _decode(err.buffer.getvalue()))


_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@pytest.fixture(autouse=True)
def atc_globals():
    """What a run leaves in the process: the `ge` logger's level and handlers, warnings
    collected but not taken.  Restored after each test (cwd and environment go through
    monkeypatch).  The signal handlers a run installs must be back: checked, then restored."""
    logger = logging.getLogger("ge")
    level, handlers = logger.level, list(logger.handlers)
    signals = {signum: signal.getsignal(signum) for signum in _SIGNALS}
    yield
    for handler in [h for h in logger.handlers if h not in handlers]:
        logger.removeHandler(handler)
        handler.close()
    logger.setLevel(level)
    ge_errors.take_warnings()
    left = {signum: signal.getsignal(signum) for signum in _SIGNALS}
    for signum, handler in signals.items():
        signal.signal(signum, handler)
    assert left == signals, "main_impl left its signal handlers installed"


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """A working directory holding the probe files of spec §13."""
    for name in ("m.onnx", "m.prototxt", "w.caffemodel", "a.om", "op.json", "g.txt"):
        (tmp_path / name).write_bytes(b"placeholder\n")
    return tmp_path


@pytest.fixture(scope="session")
def kernel_cache(tmp_path_factory) -> str:
    """ASCEND_CACHE_PATH of every ATC run of the session: the test's own, else one shared
    directory, so a kernel is compiled once per session, not once per test directory."""
    return os.environ.get("ASCEND_CACHE_PATH") or str(tmp_path_factory.mktemp("kernel_cache"))


@pytest.fixture
def atc(work: Path, monkeypatch, kernel_cache: str):
    """`atc(*args, env=...)` runs `main_impl` in the probe directory, HOME there too, with no
    ASCEND_*/NPU_* variable but the shared kernel cache and those in `env`."""
    monkeypatch.chdir(work)
    for name in list(os.environ):
        if name.startswith(_SCRUBBED):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(work))
    monkeypatch.setenv("ASCEND_CACHE_PATH", kernel_cache)

    def call(*args: str, env: dict | None = None) -> Run:
        with monkeypatch.context() as scoped:
            for name, value in (env or {}).items():
                scoped.setenv(name, value)
            return run_main_impl(["atc", *args])
    return call


# ------------------------------------------------------------------ stand-in compiler
@dataclass
class FakeModel:
    model_path: str
    framework: int
    options: dict
    weight_path: str | None
    host_platform_dependent: bool = False


class FakeApi:
    """Stand-ins for the `ge.compiler.api` functions ATC calls.  The OM it "saves" is a JSON
    document of the arguments, so tests read the option map and the command line from it."""

    om_info_result = {
        "atc_cmdline": "atc --recorded", "atc_version": "0.1.0", "soc_version": "Ascend310",
        "framework_type": 5, "memory_size": 1024, "weight_size": 64, "stream_num": 1,
        "event_num": 0, "modeldef_size": 10, "weight_data_size": 64, "tbe_kernels_size": 0,
        "cust_aicpu_kernel_store_size": 0, "task_info_size": 3, "so_store_size": 0,
        "om_info_list": [64, 0, 0, 3, 0]}

    def __init__(self) -> None:
        self.host_platform_dependent = False
        self.precheck_result = "success"

    def compile_model_file(self, model_path, framework, options, weight_path=None,
                           graph_name=None):
        logging.getLogger("ge.compiler").info("fake compile of %s", model_path)
        return FakeModel(model_path, framework, dict(options), weight_path,
                         self.host_platform_dependent)

    def save_om(self, path, compiled, atc_cmdline):
        with open(path, "w", encoding="utf-8", errors="surrogateescape") as handle:
            json.dump({"model": compiled.model_path, "framework": compiled.framework,
                       "options": compiled.options, "atc_cmdline": atc_cmdline}, handle)

    def write_fusion_result(self, compiled):
        return None

    def om_to_json(self, om_path):
        return json.dumps({"om": os.path.basename(om_path)})

    def model_to_json(self, model_path, framework):
        return json.dumps({"model": os.path.basename(model_path), "framework": framework})

    def pbtxt_to_json(self, path):
        return json.dumps({"pbtxt": os.path.basename(path)})

    def precheck(self, model_path, framework, options):
        failed = self.precheck_result == "failed"
        return {"name": "m", "result": self.precheck_result, "total": 1,
                "pass": 0 if failed else 1, "fail": 1 if failed else 0, "op": []}

    def om_info(self, om_path):
        return dict(self.om_info_result)


_HANDED_OVER = ("compile_model_file", "save_om", "write_fusion_result", "om_to_json",
                "model_to_json", "pbtxt_to_json", "precheck", "om_info")


@pytest.fixture
def fake_api(monkeypatch) -> FakeApi:
    """`ge.compiler.api`'s hand-over functions replaced by a FakeApi for this test; a test
    changes one further with `monkeypatch.setattr(ge.compiler.api, name, ...)`."""
    from ge.compiler import api
    fake = FakeApi()
    for name in _HANDED_OVER:
        assert hasattr(api, name), name            # the real API offers what ATC calls
        monkeypatch.setattr(api, name, getattr(fake, name))
    return fake


# ------------------------------------------------------------------ real processes
def _argv_and_base_env(entry: str) -> tuple[list[str], dict, list[str]]:
    spec = ENTRIES[entry]
    if isinstance(spec, str):
        argv, base = _INSTALLED[entry]
        return argv, base, []
    return list(spec), dict(os.environ), [str(REPO)]


def run_entry(entry: str, args: list[str], env: dict | None = None,
              cwd: str | os.PathLike | None = None) -> Run:
    prefix, base, paths = _argv_and_base_env(entry)
    environment = {k: v for k, v in base.items() if not k.startswith(_SCRUBBED)}
    environment.update({k: os.environ[k] for k in _KEPT if k in os.environ})
    inherited = [p for p in base.get("PYTHONPATH", "").split(os.pathsep) if p]
    environment["PYTHONPATH"] = os.pathsep.join(paths + inherited)
    environment["HOME"] = str(cwd or os.getcwd())
    environment.update(env or {})
    done = subprocess.run(prefix + list(args), capture_output=True, env=environment,
                          cwd=cwd, timeout=120)
    return Run(done.returncode, _decode(done.stdout), _decode(done.stderr))


@pytest.fixture(params=sorted(ENTRIES))
def entry(request) -> str:
    spec = ENTRIES[request.param]
    if isinstance(spec, str) and request.param not in _INSTALLED:
        argv = request.getfixturevalue("entry_argv")(spec)
        _INSTALLED[request.param] = (list(argv), dict(request.getfixturevalue("entry_env")))
    return request.param
