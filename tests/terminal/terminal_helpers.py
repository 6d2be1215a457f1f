"""Running the installed entries in a pseudo-terminal (pexpect) the way a person does, and
reading the screen back: `Session` (one working directory, cache, TMPDIR and log root),
`Run` (what the terminal received, the exit status), `screen_lines` (what stays visible).

A compile is stopped at a test-only fault point (ge/fsutil/faults.py): the child announces
`<point> <pid>` on a FIFO and waits; the test then types Ctrl-C or sends SIGTERM.  No sleeps.
"""
from __future__ import annotations

import os
import re
import select
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional

import onnx
import pexpect
from onnx import TensorProto, helper

SOC = "Ascend310P3"
# four unary ops on one shape: four distinct kernels, two cc jobs (half built at kernels.half)
CHAIN_OPS = ("Relu", "Sigmoid", "Tanh", "Abs")
KERNELS = len(CHAIN_OPS)
START = "ATC start working now, please wait for a moment."
SUCCESS = "ATC run success, welcome to the next use."
FAILED = "ATC run failed, Please check the detail log, Try '{prog} --help' for more information"
SIGNAL_TIMEOUT = 20          # seconds from the signal to the end of the process, at most
_PID_TIME = re.compile(r"\[PID: \d+\] \d{4}-\d\d-\d\d-\d\d:\d\d:\d\d\.\d{3}\.\d{3}")
_LOG_HEAD = re.compile(r"GE\(\d+,atc\):\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}")
_DURATION = re.compile(r"done in \d+\.\d+ s")


def chain_model(path: Path) -> Path:
    nodes, prev = [], "input"
    for i, op in enumerate(CHAIN_OPS):
        nodes.append(helper.make_node(op, [prev], [f"t{i}"], name=f"{op.lower()}{i}"))
        prev = f"t{i}"
    nodes.append(helper.make_node("Identity", [prev], ["output"], name="out"))
    graph = helper.make_graph(
        nodes, "chain", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [4, 16])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [4, 16])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                              producer_name="pyatc-tests")
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


def screen_lines(raw: str) -> List[str]:
    """The lines a terminal shows for `raw`: `\\r` returns to column 0, ESC[K erases to the end
    of the line, the `^C` the terminal echoes for Ctrl-C is dropped."""
    lines = []
    for row in raw.replace("^C", "").replace("\r\n", "\n").split("\n"):
        cells: List[str] = []
        col = 0
        for token in re.split(r"(\r|\x1b\[K)", row):
            if token == "\r":
                col = 0
            elif token == "\x1b[K":
                del cells[col:]
            else:
                for ch in token:
                    if col < len(cells):
                        cells[col] = ch
                    else:
                        cells.append(ch)
                    col += 1
        lines.append("".join(cells).rstrip())
    return lines


def normalise(text: str) -> str:
    """PIDs, times and durations out, so runs of different processes compare equal."""
    text = _LOG_HEAD.sub("GE(<pid>,atc):<time>", _PID_TIME.sub("[PID: <pid>] <time>", text))
    return _DURATION.sub("done in <t> s", text)


@dataclass
class Run:
    raw: str                 # every byte the terminal received, decoded
    status: Optional[int]    # exit status, None when killed by a signal
    signal: Optional[int]
    seconds_after_signal: float = 0.0

    @property
    def lines(self) -> List[str]:
        return screen_lines(self.raw)


class Session:
    """One working directory with its cache, TMPDIR and logs, used by consecutive runs."""

    def __init__(self, argv0: List[str], base_env: Dict[str, str], root: Path, model: Path):
        self.argv0, self.root = list(argv0), Path(root)
        self.cwd, self.cache, self.tmpdir = root / "cwd", root / "cache", root / "tmpdir"
        for d in (self.cwd, self.tmpdir, root / "home", root / "log", root / "work"):
            d.mkdir(parents=True, exist_ok=True)
        (self.cwd / "m.onnx").symlink_to(model)
        env = {k: v for k, v in base_env.items()
               if not k.startswith(("ASCEND_", "GE_TEST_FAULT", "TE_PARALLEL"))}
        env.update(HOME=str(root / "home"), TMPDIR=str(self.tmpdir), TERM="xterm",
                   ASCEND_PROCESS_LOG_PATH=str(root / "log"), ASCEND_WORK_PATH=str(root / "work"),
                   TE_PARALLEL_COMPILER="2")
        self.env = env

    def argv(self, *extra: str) -> List[str]:
        return self.argv0 + ["--framework=5", "--model=m.onnx", "--output=net",
                             f"--soc_version={SOC}", f"--op_compiler_cache_dir={self.cache}",
                             "--precision_mode=must_keep_origin_dtype",
                             *extra]

    def _spawn(self, argv: List[str], env: Dict[str, str]) -> pexpect.spawn:
        return pexpect.spawn(argv[0], argv[1:], cwd=str(self.cwd), env=env, timeout=300,
                             dimensions=(24, 200))

    def run(self, *extra: str, env: Optional[dict] = None) -> Run:
        child = self._spawn(self.argv(*extra), dict(self.env, **(env or {})))
        child.expect(pexpect.EOF)
        child.close()
        return Run(child.before.decode("utf-8", "replace"), child.exitstatus,
                   child.signalstatus)

    def run_piped(self, *extra: str, env: Optional[dict] = None) -> subprocess.CompletedProcess:
        """The same compile with stdout and stderr on pipes (not a terminal)."""
        return subprocess.run(self.argv(*extra), cwd=self.cwd, env=dict(self.env, **(env or {})),
                              capture_output=True, timeout=300)

    def interrupt_at(self, point: str, signum: int, *extra: str) -> Run:
        """Run until the fault point `point`, then Ctrl-C (SIGINT: the terminal's interrupt
        character, to the whole foreground group) or SIGTERM (to the process only)."""
        fifo = self.root / "fault.fifo"
        if not fifo.exists():
            os.mkfifo(fifo)
        reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        try:
            env = dict(self.env, GE_TEST_FAULT=f"{point}:wait", GE_TEST_FAULT_FIFO=str(fifo))
            child = self._spawn(self.argv(*extra), env)
            announced = b""
            while not announced.endswith(b"\n"):
                ready, _, _ = select.select([reader], [], [], 300)
                assert ready, f"{point} was never reached"
                announced += os.read(reader, 100)
        finally:
            os.close(reader)
        assert announced.decode() == f"{point} {child.pid}\n"
        sent = time.monotonic()
        if signum == signal.SIGINT:
            child.sendintr()
        else:
            child.kill(signum)
        child.expect(pexpect.EOF)
        child.close()
        return Run(child.before.decode("utf-8", "replace"), child.exitstatus, child.signalstatus,
                   time.monotonic() - sent)
