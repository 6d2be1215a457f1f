"""The ATC main flow `main_impl(argv) -> int` (spec/atc-cli.md §2).

Start line → parse → help or init (logging) → raw options → global checks → single-op or
common checks → mode checks and dispatch → `...` → result line and report.  Returns 0 or -1
and never raises: user errors are coded reports, Ctrl-C and SIGTERM are the coded failure EP0004
(ge.atc.interrupt), anything else is E19999 with the traceback in the log file only.
"""
from __future__ import annotations

import gc
import os

from ge import collector, errors as ge_errors

from .help import help_text, program_name
from .parse import ParseFailure, parse_args
from .report import (DOTS_LINE, START_LINE, SUCCESS_LINE, ErrorLog, err, failure_line, out,
                     product, render_errors, render_warnings, report_line)

__all__ = ["main_impl", "leave_if_threads_linger"]


def _finish(ok: bool, prog: str, log: ErrorLog, state, dots: bool) -> int:
    if dots:
        out(DOTS_LINE)
    if ok:
        out(SUCCESS_LINE)
        warnings = (state.warnings if state else []) + ge_errors.take_warnings()
        for line in render_warnings(warnings):
            out(line)
        return 0
    warnings = ge_errors.take_warnings()   # what a lower layer found before it refused
    report_line(failure_line(prog))
    for line in render_errors(log):
        report_line(line)
    if warnings:
        for line in render_warnings(warnings):
            report_line(line)
    return -1


def _internal_fault(log: ErrorLog, logs) -> None:
    import traceback
    from .logs import LogSetup, default_log_path
    text = traceback.format_exc()
    logs = logs or LogSetup(default_log_path(os.environ), "null")
    where = logs.write_fault(text)
    log.add("E19999", {"reason": f"The traceback is in the log file {where}." if where else
                       "The traceback could not be written to the log file."})


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
        try:
            product(help_text(prog))
        except ge_errors.GeError as lost:           # the help is what was asked for
            log.add_error(lost)
            return _finish(False, prog, log, None, dots=False)
        return 0
    from .interrupt import signals_raise      # a real run: everything --help does not need
    from .run import run_parsed
    with signals_raise():
        ok, state, dots = run_parsed(argv, parsed, log, holder)
        return _finish(ok, prog, log, state, dots)


def main_impl(argv: list[str]) -> int:
    """The whole ATC run for `argv` (argv[0] = program as invoked); returns 0 or -1."""
    argv = [str(a) for a in (argv or ["atc"])]
    holder: dict = {"prog": program_name(argv[0]), "logs": None, "dots": False}
    log = ErrorLog()
    try:
        with collector.paused():
            return _main(argv, log, holder)
    except KeyboardInterrupt as exc:                      # Ctrl-C, SIGTERM: EP0004
        from .interrupt import signal_name
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


def leave_if_threads_linger(rc: int) -> None:
    """For the command-line entries, after main_impl returned: a pass may have left a
    non-daemon thread running, and the interpreter's exit would wait for it forever.  Then
    flush and end the process now with the run's status (a library caller never calls this).
    Else the interpreter ends as usual, with the heap frozen: its finalization would rescan
    every object of the run for cycles (0.1-0.15 s after a ResNet-50 compile) only to free
    memory the process gives back anyway."""
    import threading
    main = threading.main_thread()
    if not any(t is not main and t.is_alive() and not t.daemon for t in threading.enumerate()):
        gc.freeze()
        return
    import sys
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    os._exit(rc & 0xFF)
