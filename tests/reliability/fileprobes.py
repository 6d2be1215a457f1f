"""Time-limited probes shared by test_special_files.py and test_no_clobber.py: a hang fails the
test that met it instead of blocking the suite."""
import os
import subprocess
import sys
import threading
from pathlib import Path

LIMIT_S = 30.0
REPO_ROOT = Path(__file__).resolve().parents[2]


def within(fn, seconds=LIMIT_S):
    """fn() in a daemon thread; fail if it has not returned after `seconds`."""
    box = {}

    def run():
        try:
            box["value"] = fn()
        except BaseException as exc:   # handed to the test thread
            box["error"] = exc
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still running after {seconds}s (a hang)"
    if "error" in box:
        raise box["error"]
    return box["value"]


def atc_process(*args, cwd, env=None, stdout=subprocess.PIPE):
    """The ATC main flow (what pyatc runs) in a child process, its stdout a pipe unless given;
    killed after 120 s so that a hang fails the test."""
    code = "import sys; from ge.atc import main_impl; sys.exit(main_impl(sys.argv))"
    return subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, stdout=stdout,
                          stderr=subprocess.PIPE, timeout=120,
                          env=dict(os.environ, PYTHONPATH=str(REPO_ROOT),
                                   ASCEND_WORK_PATH=str(cwd), **(env or {})))
