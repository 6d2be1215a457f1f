"""Judging one fuzz run by what the user sees, and the table of docs/reliability.md.

A run is sound when it ends with exit 0 or a coded error (status 255, an ATC-style code that is
not the internal-fault code), within the time limit, with no Python traceback on the screen,
no file it was not asked to write changed, nothing half-written under the final name of the OM
or JSON on failure, and (an OM the runtime accepts) outputs identical to the unmutated model's.
"""
from __future__ import annotations

import _thread
import contextlib
import hashlib
import os
import re
import signal
import subprocess
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional, Tuple

__all__ = ["Verdict", "TRACEBACK", "INTERNAL_CODES", "FAULT_KINDS", "first_code", "snapshot",
           "judge_atc", "atc_case", "PARSER_CODE", "run_process", "time_limit", "table"]

TRACEBACK = "Traceback (most recent call last)"
INTERNAL_CODES = ("E19999",)       # EZ9999 is the coded op-level error (names the op)
_CODE = re.compile(r"\bE[0-9A-Z]\d{4}\b")
# The parser diagnostics of spec/atc-cli.md §3.5: CANN prints these without a code.
_PARSER_DIAGNOSTIC = re.compile(r"^ERROR: (unknown command line flag '|flag '.*' is missing its "
                                r"argument|Non-option parameter: |input argument value is empty)",
                                re.M)
PARSER_CODE = "(parser)"          # how a verdict records such a diagnostic
# What can be wrong with a run, in table order.
FAULT_KINDS = ("internal", "traceback", "hang", "crash", "wrong", "clobbered", "disagree",
               "other")


@dataclass
class Verdict:
    category: str
    index: int
    kind: str = ""
    rc: Optional[int] = None        # exit status (-N: killed by signal N); None: never ended
    code: str = ""                  # the first error code on the screen
    seconds: float = 0.0
    faults: List[str] = field(default_factory=list)     # "<fault kind>: what"
    note: str = ""

    def fault(self, kind: str, what: str) -> None:
        assert kind in FAULT_KINDS, kind
        self.faults.append(f"{kind}: {what}")

    def has(self, kind: str) -> bool:
        return any(f.startswith(kind + ":") for f in self.faults)

    def describe(self, seed: int) -> str:
        return (f"{self.category}:{self.index} [{self.kind}] rc={self.rc} code={self.code or '-'} "
                f"{self.seconds:.1f}s: {'; '.join(self.faults)}\n    reproduce: python3 "
                f"bench/fuzz_probe.py --seed {seed} --only {self.category}:{self.index}")

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> "Verdict":
        return cls(**data)


def first_code(text: str) -> str:
    """The first error code on the screen, or PARSER_CODE for a parser diagnostic."""
    found = _CODE.search(text)
    if found:
        return found.group(0)
    return PARSER_CODE if _PARSER_DIAGNOSTIC.search(text) else ""


def snapshot(directory: Path) -> Dict[str, str]:
    """sha256 of every regular file under `directory`, by relative path (symlinks not followed)."""
    out = {}
    for root, dirs, files in os.walk(directory):
        for name in files:
            path = Path(root, name)
            if path.is_file() and not path.is_symlink():
                out[path.relative_to(directory).as_posix()] = \
                    hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def _values(args: List[str], names: Iterable[str]) -> List[Tuple[str, str]]:
    """(flag, value) of every `--name=value` / `--name value` of `names` before a `--`."""
    out = []
    for i, arg in enumerate(args):
        if arg == "--":
            break
        for name in names:
            if arg.startswith(f"--{name}="):
                out.append((name, arg.split("=", 1)[1]))
            elif arg == f"--{name}" and i + 1 < len(args):
                out.append((name, args[i + 1]))
    return out


def _norm(value: str) -> str:
    return os.path.normpath(value) if value else ""


def judge_atc(verdict: Verdict, rc: int, text: str, before: Dict[str, str],
              after: Dict[str, str], args: List[str], output_flags: Iterable[str]) -> Verdict:
    """Fill `verdict` from one ATC run in a directory whose files were `before` and `after`."""
    verdict.rc, verdict.code = rc, first_code(text)
    if TRACEBACK in text:
        verdict.fault("traceback", text[text.index(TRACEBACK):][:300])
    if verdict.code in INTERNAL_CODES:
        verdict.fault("internal", next(line for line in text.splitlines()
                                       if verdict.code in line)[:300])
    if rc < 0:
        verdict.fault("crash", f"signal {-rc}")
    elif rc not in (0, 255):
        verdict.fault("other", f"exit status {rc}")
    elif rc == 255 and not verdict.code:
        verdict.fault("other", "failed without an error code: " + text[-300:])
    named = _values(args, output_flags)
    allowed = {_norm(v) for _, v in named} | {_norm(v) + ".om" for f, v in named
                                              if f == "output"}
    allowed.discard("")

    def asked(path: str) -> bool:
        return any(path == a or path.startswith(a + "/") for a in allowed)
    for path, digest in before.items():
        if after.get(path) != digest and not asked(path):
            verdict.fault("clobbered", f"{path} {'changed' if path in after else 'removed'}")
    if rc != 0:
        finals = {_norm(v) + ".om" if f == "output" else _norm(v) for f, v in named
                  if f in ("output", "json") and v}
        for path in sorted(finals):
            if after.get(path) != before.get(path):
                verdict.fault("clobbered", f"{path} written by a failed run")
    return verdict


def atc_case(verdict: Verdict, args: List[str], cwd: Path,
             run: Callable[[List[str], Path], Tuple[int, str]],
             output_flags: Iterable[str]) -> Verdict:
    """Run `args` in `cwd` through `run` (in-process or a process) and judge the result."""
    before = snapshot(cwd)
    rc, text = run(args, cwd)
    return judge_atc(verdict, rc, text, before, snapshot(cwd), args, output_flags)


def run_process(argv: List[str], cwd: Path, env: Dict[str, str],
                limit_s: float) -> Tuple[Optional[int], str]:
    """(exit status, screen) of a process; (None, screen so far) when it outlived `limit_s`."""
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=limit_s)
        return proc.returncode, out.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        return None, out.decode("utf-8", "replace")


@contextlib.contextmanager
def time_limit(seconds: float):
    """Interrupt the main thread (KeyboardInterrupt, which the ATC main flow ends as EP0004)
    once `seconds` have passed inside the block; the yielded dict's "expired" says whether it
    did.  A watchdog thread, not SIGALRM: the pass time limit owns SIGALRM during a compile."""
    state = {"expired": False}
    done = threading.Event()
    lock = threading.Lock()

    def watch():
        if not done.wait(seconds):
            with lock:
                if not done.is_set():
                    state["expired"] = True
                    _thread.interrupt_main()
    threading.Thread(target=watch, daemon=True).start()
    try:
        yield state
    finally:
        with lock:
            done.set()


_COLUMNS = ("inputs tried", "exit 0", "coded errors", "internal errors (E19999)", "tracebacks",
            "hangs", "crashes", "silent wrong results", "files clobbered", "disagreements",
            "other faults")


def _row(verdicts: List[Verdict]) -> List[int]:
    coded = [v for v in verdicts if v.rc == 255 and v.code and v.code not in INTERNAL_CODES]
    return [len(verdicts), sum(v.rc == 0 for v in verdicts), len(coded),
            *(sum(v.has(kind) for v in verdicts) for kind in FAULT_KINDS)]


def table(rows: Dict[str, List[Verdict]]) -> str:
    """A Markdown table: one row per category, one column per outcome."""
    lines = ["| category | " + " | ".join(_COLUMNS) + " |",
             "|---|" + "---:|" * len(_COLUMNS)]
    for name, verdicts in rows.items():
        lines.append(f"| {name} | " + " | ".join(str(n) for n in _row(verdicts)) + " |")
    return "\n".join(lines)
