"""Issue #22 part 1: a compile does not depend on its terminal.

Before: `pyatc ... >&-` ended in a traceback (exit 1, no OM), stdout on a full device in exit
255 and `| head -1` in exit 255 after the OM was written.  Now `atc` and `pyatc` give the OM of
a terminal run (byte for byte) and exit 0 whatever stdout and stderr are, dropping what cannot
be written; where the printed text is the product (--help, --mode=6, the runner's report,
cache statistics) losing it is EP0006 naming the stream, exit 255.  ge/stdio.py says how.
"""
from __future__ import annotations

import os
import stat
import subprocess
import sys

import pexpect
import pytest

from faultprobe import REPO_ROOT

ENTRIES = ("atc", "pyatc")
# how the entry's standard streams are set up: a bash snippet run with the entry's argv as "$@"
WAYS = {
    "closed stdout": 'exec "$@" >&-',
    "closed stderr": 'exec "$@" 2>&-',
    "stdout on a full device": 'exec "$@" >"$FULL"',
    "reader gone": '"$@" 2>&1 | head -1 >/dev/null; exit "${PIPESTATUS[0]}"',
}


@pytest.fixture(scope="module")
def streams(tmp_path_factory, entry_env):
    """The sample model, a full device of our own (mknod, never under /dev) and the environment
    (log records on stdout too: more writes that must be dropped)."""
    if os.geteuid() != 0:
        pytest.skip("mknod needs root")
    base = tmp_path_factory.mktemp("streams")
    subprocess.run([sys.executable, str(REPO_ROOT / "samples" / "make_sample.py"),
                    str(base / "t.onnx")], check=True, capture_output=True)
    full = base / "full"
    os.mknod(full, 0o666 | stat.S_IFCHR, os.makedev(1, 7))
    env = dict(entry_env, FULL=str(full), ASCEND_SLOG_PRINT_TO_STDOUT="1",
               ASCEND_PROCESS_LOG_PATH=str(base / "plog"))
    return base, env


def _args(base) -> list:
    return ["--framework=5", f"--model={base / 't.onnx'}", "--output=m",
            "--soc_version=Ascend310P3", "--log=info", "--precision_mode=must_keep_origin_dtype"]


def _in(base, *parts):
    work = base.joinpath(*parts)
    work.mkdir(parents=True)
    return work


@pytest.fixture(scope="module")
def terminal_om(streams, entry_argv):
    """entry -> the OM of a run on a terminal (pexpect)."""
    base, env = streams
    oms = {}
    for entry in ENTRIES:
        work = _in(base, entry, "terminal")
        argv = entry_argv(entry) + _args(base)
        child = pexpect.spawn(argv[0], argv[1:], cwd=str(work), env=env, timeout=300,
                              encoding="utf-8")
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 0 and "ATC run success" in child.before, child.before
        oms[entry] = (work / "m.om").read_bytes()
    return oms


def _run(script, argv, env, cwd):
    return subprocess.run(["bash", "-c", script, "bash", *argv], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("entry", ENTRIES)
def test_compile_is_the_same_whatever_the_streams(streams, entry_argv, terminal_om, entry, way):
    base, env = streams
    work = _in(base, entry, way.replace(" ", "_"))
    proc = _run(WAYS[way], entry_argv(entry) + _args(base), env, work)
    seen = proc.stdout + proc.stderr
    assert proc.returncode == 0, seen
    assert "Traceback" not in seen and "Exception ignored" not in seen, seen
    assert (work / "m.om").read_bytes() == terminal_om[entry]
    assert not [p for p in work.iterdir() if p.name.startswith(".")], list(work.iterdir())
    if way == "closed stderr":          # stdout is fine: it still shows the whole run
        assert "ATC run success" in proc.stdout, proc.stdout
    # with descriptor 1 closed, the first file the flow opened would get it and receive every
    # later message; the entry puts /dev/null there first
    for path in work.rglob("*"):
        assert not path.is_file() or b"ATC run success" not in path.read_bytes(), path


def _product_runs(base, entry_argv):
    """(what, argv, way): runs whose printed text is the product."""
    om = base / "atc" / "terminal" / "m.om"
    python = [sys.executable]
    return [
        ("atc --help", entry_argv("atc") + ["--help"], "closed stdout"),
        ("pyatc --help", entry_argv("pyatc") + ["--help"], "stdout on a full device"),
        ("atc --mode=6", entry_argv("atc") + ["--mode=6", f"--om={om}"], "closed stdout"),
        ("pyatc --mode=6", entry_argv("pyatc") + ["--mode=6", f"--om={om}"],
         "stdout on a full device"),
        ("runner report", python + ["-m", "ge.runtime", "--model", str(om)], "closed stdout"),
        ("cache stats", python + ["-m", "ge.compiler.cache", "stats"],
         "stdout on a full device"),
    ]


def test_lost_product_text_is_ep0006(streams, entry_argv, terminal_om):
    base, env = streams
    for what, argv, way in _product_runs(base, entry_argv):
        proc = _run(WAYS[way], argv, env, base)
        assert proc.returncode == 255, (what, proc.stdout, proc.stderr)
        assert "EP0006" in proc.stderr and "stdout" in proc.stderr, (what, proc.stderr)
        assert "Traceback" not in proc.stderr, (what, proc.stderr)
