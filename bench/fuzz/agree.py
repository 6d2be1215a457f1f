"""One flag line through an installed entry (`atc`, `pyatc`) as a real process, judged like any
run and compared with the in-process run of the same line (exit status, first error code)."""
from __future__ import annotations

from pathlib import Path
from typing import Dict, List

from .cases import OUTPUT_FLAGS, case_rng, flag_line
from .verdict import Verdict, atc_case, run_process

__all__ = ["line_as_process"]


def line_as_process(seed: int, index: int, entry: str, argv: List[str], env: Dict[str, str],
                    cwd: Path, expected: Verdict, limit_s: float) -> Verdict:
    """Flag line `index` run as `argv + line` in `cwd` (a fresh copy of the materials) with
    `env` (set_env.sh applied) plus the work and log paths in `cwd`."""
    kind, args = flag_line(case_rng(seed, "flags", index))
    env = dict(env, ASCEND_WORK_PATH=str(cwd), ASCEND_PROCESS_LOG_PATH=str(cwd / "log"))
    verdict = Verdict("flags", index, f"{entry}: {kind}")
    atc_case(verdict, args, cwd, lambda a, c: run_process([*argv, *a], c, env, limit_s),
             OUTPUT_FLAGS)
    if verdict.rc is None:
        verdict.fault("hang", f"still running after {limit_s:.0f}s")
    if (verdict.rc, verdict.code) != (expected.rc, expected.code):
        verdict.fault("disagree", f"{entry} gives {verdict.rc}/{verdict.code or '-'}, "
                                  f"in-process {expected.rc}/{expected.code or '-'}")
    return verdict
