"""Helpers for the ATC contract tests: run an entry point as a real process.

`ENTRIES` maps an entry name to the argv prefix that starts it, or to the name of an installed
entry of tests/conftest.py (`entry_argv(name)` run in `entry_env`); adding an entry is one line,
e.g. `"atc": "atc"`.  `run_entry` returns what the user sees, with the program name and the
`[PID: n] <time>` stamp normalised so entries compare byte for byte.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent

ENTRIES: dict[str, "list[str] | str"] = {
    "module": [sys.executable, "-m", "ge.atc"],
    "atc": "atc", "pyatc": "pyatc", "pymod": "python3 -m ge.pyatc",
}

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


def _argv_and_base_env(entry: str) -> tuple[list[str], dict, list[str]]:
    spec = ENTRIES[entry]
    if isinstance(spec, str):
        argv, base = _INSTALLED[entry]
        return argv, base, []
    return list(spec), dict(os.environ), [str(REPO)]


def run_entry(entry: str, args: list[str], env: dict | None = None,
              cwd: str | os.PathLike | None = None) -> Run:
    prefix, base, paths = _argv_and_base_env(entry)
    environment = {k: v for k, v in base.items()
                   if not k.startswith(("ASCEND_", "NPU_", "GE_ATC_"))}
    inherited = [p for p in base.get("PYTHONPATH", "").split(os.pathsep) if p]
    environment["PYTHONPATH"] = os.pathsep.join(paths + [str(HERE)] + inherited)
    environment["HOME"] = str(cwd or os.getcwd())
    environment.update(env or {})
    done = subprocess.run(prefix + list(args), capture_output=True, env=environment,
                          cwd=cwd, timeout=120)
    decode = lambda data: data.decode("utf-8", "surrogateescape")  # noqa: E731
    return Run(done.returncode, normalise(decode(done.stdout)), normalise(decode(done.stderr)))


@pytest.fixture(params=sorted(ENTRIES))
def entry(request) -> str:
    spec = ENTRIES[request.param]
    if isinstance(spec, str) and request.param not in _INSTALLED:
        argv = request.getfixturevalue("entry_argv")(spec)
        _INSTALLED[request.param] = (list(argv), dict(request.getfixturevalue("entry_env")))
    return request.param


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """A working directory holding the probe files of spec §13."""
    for name in ("m.onnx", "m.prototxt", "w.caffemodel", "a.om", "op.json", "g.txt"):
        (tmp_path / name).write_bytes(b"placeholder\n")
    return tmp_path


@pytest.fixture
def atc(entry: str, work: Path):
    """`atc(*args, env=...)` runs the entry in the probe directory."""
    def call(*args: str, env: dict | None = None) -> Run:
        return run_entry(entry, list(args), env=env, cwd=work)
    return call
