"""The ATC run after the command line parsed and was not `--help` (spec/atc-cli.md §2 steps
5-10): logging, raw options, global checks, single-op or common checks, mode checks and
dispatch.  Imported by ge.atc.main only when there is a run, so `--help` loads none of it."""
from __future__ import annotations

import os

from ge.compiler.progress import listening
from ge.errors import GeError
from ge.fsutil import fault_point

from .checks import (COMPILE_MODES, check_common, check_compile_family, check_global,
                     check_singleop, no_effect_warnings, prepare_check_report,
                     refuse_unsupported)
from .logs import start_logging
from .modes import run_mode
from .options import RunState, apply_raw_options
from .report import progress

__all__ = ["run_parsed"]


def _run_checks_and_mode(state: RunState) -> None:
    """§2 steps 7-10."""
    check_global(state)
    if state.get("singleop"):
        check_singleop(state)
        from .singleop import SINGLEOP_FLAG_RECORDS, run_singleop
        refuse_unsupported(state, SINGLEOP_FLAG_RECORDS)   # other flags: ignored, as in CANN
        no_effect_warnings(state, SINGLEOP_FLAG_RECORDS)
        with listening(progress):
            run_singleop(state)
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


def run_parsed(argv: list[str], parsed, log, holder: dict) -> tuple:
    """Steps 5-10 for a parsed command line: (ok, state, dots) for main to render; a failure's
    error is in `log`.  `holder` gets the log setup and whether a failure prints `...`."""
    logs = start_logging(parsed.values["log"])
    holder["logs"] = logs
    state = RunState(argv=list(argv), prog=holder["prog"], values=parsed.values,
                     user_set=parsed.user_set, environ=dict(os.environ))
    try:
        apply_raw_options(state)
        holder["dots"] = True                   # from here on, a failure prints `...` first
        _run_checks_and_mode(state)
    except GeError as error:
        log.add_error(error)
        return False, state, holder["dots"]
    return True, state, True
