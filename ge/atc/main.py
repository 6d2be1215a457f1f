"""The ATC main flow `main_impl(argv) -> int` (spec/atc-cli.md §2).

Start line → parse → help or init (logging) → raw options → global checks → single-op or
common checks → mode checks and dispatch → `...` → result line and report.  Returns 0 or -1
and never raises: user errors are coded reports, Ctrl-C and SIGTERM are the coded failure EP0004
(ge.atc.interrupt), anything else is E19999 with the traceback in the log file only.
"""
from __future__ import annotations

import os
import traceback

from ge import errors as ge_errors
from ge.compiler.progress import listening
from ge.errors import GeError
from ge.fsutil import fault_point

from .checks import (COMPILE_MODES, check_common, check_compile_family, check_global,
                     check_singleop, no_effect_warnings, prepare_check_report,
                     refuse_unsupported)
from .help import help_text, program_name
from .interrupt import signal_name, signals_raise
from .logs import LogSetup, default_log_path, start_logging
from .modes import run_mode
from .options import RunState, apply_raw_options
from .parse import ParseFailure, parse_args
from .report import (DOTS_LINE, START_LINE, SUCCESS_LINE, ErrorLog, err, failure_line, out,
                     progress, render_errors, render_warnings)

__all__ = ["main_impl"]


def _finish(ok: bool, prog: str, log: ErrorLog, state: RunState | None, dots: bool) -> int:
    if dots:
        out(DOTS_LINE)
    if ok:
        out(SUCCESS_LINE)
        warnings = (state.warnings if state else []) + ge_errors.take_warnings()
        for line in render_warnings(warnings):
            out(line)
        return 0
    ge_errors.take_warnings()
    out(failure_line(prog))
    for line in render_errors(log):
        out(line)
    return -1


def _internal_fault(log: ErrorLog, logs: LogSetup | None) -> None:
    text = traceback.format_exc()
    logs = logs or LogSetup(default_log_path(os.environ), "null")
    where = logs.write_fault(text)
    log.add("E19999", {"reason": f"The traceback is in the log file {where}." if where else
                       "The traceback could not be written to the log file."})


def _run_checks_and_mode(state: RunState) -> None:
    """§2 steps 7-10."""
    check_global(state)
    if state.get("singleop"):
        check_singleop(state)
        return
    check_common(state)
    state.check_report = prepare_check_report(state)
    if state.mode in COMPILE_MODES:
        check_compile_family(state)
        refuse_unsupported(state)
        no_effect_warnings(state)
    fault_point("atc.compile_start")            # test-only
    with listening(progress):
        run_mode(state)


def _main(argv: list[str], log: ErrorLog, holder: dict) -> int:
    prog = holder["prog"]
    out(START_LINE)
    ge_errors.take_warnings()
    try:
        parsed = parse_args(argv)
    except ParseFailure as failure:
        for line in failure.notices:
            out(line)
        for line in failure.stderr:
            err(line)
        if failure.error is not None:
            log.add_error(failure.error)
        return _finish(False, prog, log, None, dots=False)
    for line in parsed.notices:
        out(line)
    if parsed.help:
        out(help_text(prog))
        return 0
    logs = start_logging(parsed.values["log"])
    holder["logs"] = logs
    state = RunState(argv=list(argv), prog=prog, values=parsed.values, user_set=parsed.user_set,
                     environ=dict(os.environ))
    try:
        apply_raw_options(state)
    except GeError as error:
        log.add_error(error)
        return _finish(False, prog, log, state, dots=False)
    holder["dots"] = True                       # from here on, a failure prints `...` first
    try:
        _run_checks_and_mode(state)
    except GeError as error:
        log.add_error(error)
        return _finish(False, prog, log, state, dots=True)
    return _finish(True, prog, log, state, dots=True)


def main_impl(argv: list[str]) -> int:
    """The whole ATC run for `argv` (argv[0] = program as invoked); returns 0 or -1."""
    argv = [str(a) for a in (argv or ["atc"])]
    holder: dict = {"prog": program_name(argv[0]), "logs": None, "dots": False}
    log = ErrorLog()
    try:
        with signals_raise():
            return _main(argv, log, holder)
    except KeyboardInterrupt as exc:                      # Ctrl-C, SIGTERM: EP0004
        interrupted = ErrorLog()
        interrupted.add("EP0004", {"signal": signal_name(exc)})
        return _safe_finish(holder["prog"], interrupted, dots=holder["dots"])
    except Exception:                                     # internal fault: E19999, log only
        _internal_fault(log, holder["logs"])
        return _safe_finish(holder["prog"], log, dots=True)
    finally:
        if holder["logs"] is not None:
            holder["logs"].close()


def _safe_finish(prog: str, log: ErrorLog, dots: bool) -> int:
    try:
        return _finish(False, prog, log, None, dots=dots)
    except (Exception, KeyboardInterrupt):              # the screen itself is gone
        return -1
