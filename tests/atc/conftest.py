"""Helpers for the ATC contract tests: run an entry point as a real process.

`ENTRIES` maps an entry name to the argv prefix that starts it; adding an entry (`atc`,
`pyatc`, `python3 -m ge.pyatc`) is one line.  `run_entry` returns what the user sees, with the
program name and the `[PID: n] <time>` stamp normalised so entries compare byte for byte.
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

ENTRIES: dict[str, list[str]] = {
    "module": [sys.executable, "-m", "ge.atc"],
}

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


def run_entry(entry: str, args: list[str], env: dict | None = None,
              cwd: str | os.PathLike | None = None) -> Run:
    environment = {k: v for k, v in os.environ.items()
                   if not k.startswith(("ASCEND_", "NPU_", "GE_ATC_"))}
    environment["PYTHONPATH"] = os.pathsep.join([str(REPO), str(HERE)])
    environment["HOME"] = str(cwd or os.getcwd())
    environment.update(env or {})
    done = subprocess.run(ENTRIES[entry] + list(args), capture_output=True, env=environment,
                          cwd=cwd, timeout=120)
    decode = lambda data: data.decode("utf-8", "surrogateescape")  # noqa: E731
    return Run(done.returncode, normalise(decode(done.stdout)), normalise(decode(done.stderr)))


@pytest.fixture(params=sorted(ENTRIES))
def entry(request) -> str:
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
