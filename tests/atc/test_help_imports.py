"""`--help` loads only what help needs: no compiler, graph, logging or file utilities (what
keeps `pyatc --help` near the interpreter's own start-up; bench/bench_help.py measures it)."""
from __future__ import annotations

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_PROBE = ("import sys\nfrom ge.atc.main import main_impl\nrc = main_impl(['atc', '--help'])\n"
          "print(rc, *sorted(m for m in sys.modules))")
NOT_FOR_HELP = ("ge.compiler", "ge.graph", "ge.ops", "ge.om", "ge.fsutil", "ge.atc.run",
                "ge.atc.checks", "ge.atc.modes", "ge.atc.logs", "logging", "traceback",
                "numpy", "onnx", "google.protobuf")


def test_help_imports_nothing_a_run_needs():
    proc = subprocess.run([sys.executable, "-c", _PROBE], env=dict(os.environ, PYTHONPATH=ROOT),
                          capture_output=True, text=True, check=True)
    lines = proc.stdout.strip().splitlines()
    assert "--framework" in proc.stdout and "--soc_version" in proc.stdout
    rc, *modules = lines[-1].split()
    assert rc == "0"
    loaded = [m for m in modules if any(m == p or m.startswith(p + ".") for p in NOT_FOR_HELP)]
    assert not loaded, loaded
