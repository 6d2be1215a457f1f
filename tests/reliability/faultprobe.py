"""Runs of the ATC main flow on a faulty file system, shared by test_cache_faults.py,
test_log_faults.py and test_cache_verify.py (issue #19 items 4, 5, 11).

Each run is a child process (what pyatc runs: `ge.atc.main_impl`) with HOME, the work path and
the log directory private to the test, killed after LIMIT_S so that a hang fails the test.
Faults are real: a full disk is a small tmpfs, a read-only directory a read-only bind mount,
both made inside `unshare --mount` so nothing outlives the run; an unreadable file is what root
meets without CAP_DAC_OVERRIDE / CAP_DAC_READ_SEARCH (`setpriv --bounding-set`), since the
interpreter of the tests may not be runnable by another user.
"""
from __future__ import annotations

import os
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Optional

import pytest

from _atc_run import AtcRun

REPO_ROOT = Path(__file__).resolve().parents[2]
SOC = "Ascend310P3"
LIMIT_S = 120
NO_DAC = ("setpriv", "--bounding-set=-dac_override,-dac_read_search")
SCREEN_FAULTS = ("Traceback", "E19999", "--- Logging error ---", "Exception ignored")


def _works(argv) -> bool:
    try:
        return subprocess.run(argv, capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def needs_mounts() -> None:
    """Skip unless this process may mount in a private mount namespace (root, unshare)."""
    if os.geteuid() != 0:
        pytest.skip("tmpfs and read-only bind mounts need root")
    if not _works(["unshare", "--mount", "mount", "-t", "tmpfs", "-o", "size=4k", "tmpfs",
                   "/tmp"]):
        pytest.skip("unshare --mount with a tmpfs is not allowed here")


def needs_no_dac() -> None:
    """Skip unless root can drop its permission-override capabilities (setpriv)."""
    if os.geteuid() != 0:
        pytest.skip("the unreadable-file probes drop root's capabilities")
    if not _works([*NO_DAC, "true"]):
        pytest.skip("setpriv --bounding-set is not available")


def tiny_model(path: Path) -> Path:
    """Relu, Add and Sigmoid on [2,8]: three elementwise kernels, compiled in about a second."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    bias = numpy_helper.from_array(np.linspace(-1, 1, 16, dtype=np.float32).reshape(2, 8), "b")
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"], name="relu"),
         helper.make_node("Add", ["r", "b"], ["a"], name="add"),
         helper.make_node("Sigmoid", ["a"], ["y"], name="sigmoid")],
        "tiny", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8])], [bias])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.save(model, str(path))
    return path


@dataclass(frozen=True)
class Run(AtcRun):
    cwd: Path

    def lines(self, code: str) -> list:
        return [line for line in self.text.splitlines() if f"({code})" in line]

    def assert_clean_screen(self) -> "Run":
        for bad in SCREEN_FAULTS:
            assert bad not in self.text, self.text[-4000:]
        return self


class Atc:
    """`atc(*flags, setup=..., env=..., wrap=...)`: one compile of the tiny model in a fresh
    directory of `tmp`.  `setup` is shell run first inside `unshare --mount` (mounts), with $T
    the test's directory; `wrap` an argv prefix (setpriv)."""

    def __init__(self, tmp: Path, model: Path):
        self.tmp = Path(tmp)
        self.model = model
        self._runs = 0

    def __call__(self, *flags: str, setup: str = "", env: Optional[Dict[str, str]] = None,
                 wrap: tuple = (), output: str = "net") -> Run:
        self._runs += 1
        cwd = self.tmp / f"run{self._runs}"
        for name in ("home", "work", "log"):
            (cwd / name).mkdir(parents=True)
        run_env = dict(os.environ, PYTHONPATH=str(REPO_ROOT), HOME=str(cwd / "home"),
                       ASCEND_WORK_PATH=str(cwd / "work"),
                       ASCEND_PROCESS_LOG_PATH=str(cwd / "log"), TMPDIR=str(cwd / "home"),
                       TE_PARALLEL_COMPILER="2", T=str(self.tmp))
        for name in ("ASCEND_CACHE_PATH", "ASCEND_SLOG_PRINT_TO_STDOUT", "GE_TEST_FAULT"):
            run_env.pop(name, None)
        run_env.update(env or {})
        code = "import sys; from ge.atc import main_impl; sys.exit(main_impl(sys.argv) & 0xFF)"
        argv = [*wrap, sys.executable, "-c", code, "--framework=5", f"--model={self.model}",
                f"--output={output}", f"--soc_version={SOC}",
                "--precision_mode=must_keep_origin_dtype", *flags]
        if setup:
            argv = ["unshare", "--mount", "sh", "-ec", f'{setup}\nexec "$@"', "probe", *argv]
        proc = subprocess.run(argv, cwd=cwd, env=run_env, capture_output=True, text=True,
                              timeout=LIMIT_S)
        return Run(proc.returncode, proc.stdout, proc.stderr, cwd)


def tmpfs(directory: str, size: str = "64k", fill: bool = False) -> str:
    """Shell: a tmpfs of `size` at `directory` (mode 0750, as a private cache must be); `fill`
    leaves it with no free byte."""
    d = shlex.quote(directory)
    text = f"mkdir -p {d} && mount -t tmpfs -o size={size},mode=0750 tmpfs {d}"
    if fill:
        text += f" && (head -c 100000000 /dev/zero > {d}/.fill 2>/dev/null || true)"
    return text


def read_only(directory: str) -> str:
    """Shell: `directory` (made if missing) bound read-only onto itself."""
    d = shlex.quote(directory)
    return f"mkdir -p {d} && mount --bind {d} {d} && mount -o remount,bind,ro {d}"


def soc_dir(root: Path) -> Path:
    return Path(root) / "kernel_cache" / SOC


def entries(root: Path) -> list:
    """The kernels' entries (not the support object's or the templates', te_ge_*)."""
    d = soc_dir(root)
    return sorted(p.name for p in d.iterdir() if p.name.startswith("te_")
                  and not p.name.startswith("te_ge_")) if d.is_dir() else []


def report(run: Run) -> dict:
    import json
    found = sorted((run.cwd / "work").glob("FE/*/compile_report.json"))
    assert len(found) == 1, (found, run.text[-2000:])
    return json.loads(found[0].read_text())
