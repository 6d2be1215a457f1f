"""ATC process logging (spec/atc-cli.md §1.2, §10).

Logs go to a file `<root>/debug/plog/plog-<pid>_<YYYYmmddHHMMSSfff>.log`, where root is
`ASCEND_PROCESS_LOG_PATH` or `$HOME/ascend/log`.  `--log` sets the level of the `ge` logger
(default `null`: nothing is logged), except that with `NPU_COLLECT_PATH` set `--log=null` keeps
`ASCEND_GLOBAL_LOG_LEVEL`.  With `ASCEND_SLOG_PRINT_TO_STDOUT=1` and a level other than null the
records are also printed on stdout.  Internal faults (E19999) always write their traceback to
the log file, whatever the level, so that the screen never shows one.
"""
from __future__ import annotations

import logging
import os
import sys
import time
from dataclasses import dataclass, field

from ge import stdio
from .report import clear_progress

__all__ = ["LogSetup", "start_logging", "default_log_path", "LEVELS"]

LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING,
          "error": logging.ERROR, "null": logging.CRITICAL + 10}
_GLOBAL_LEVELS = {"0": "debug", "1": "info", "2": "warning", "3": "error", "4": "null"}
_FORMAT = "[%(levelname)s] GE(%(process)d,atc):%(asctime)s %(name)s: %(message)s"


def default_log_path(environ) -> str:
    root = environ.get("ASCEND_PROCESS_LOG_PATH") or os.path.join(
        environ.get("HOME") or os.path.expanduser("~"), "ascend", "log")
    now = time.time()
    stamp = time.strftime("%Y%m%d%H%M%S", time.localtime(now)) + f"{int(now * 1000) % 1000:03d}"
    return os.path.join(root, "debug", "plog", f"plog-{os.getpid()}_{stamp}.log")


@dataclass
class LogSetup:
    path: str
    level_name: str
    handlers: list = field(default_factory=list)

    def write_fault(self, text: str) -> str | None:
        """Append an internal-fault record to the log file; return its path, None if unwritable."""
        try:
            from ge.fsutil import make_dirs
            make_dirs(os.path.dirname(self.path))
            with open(self.path, "a", encoding="utf-8", errors="surrogateescape") as handle:
                handle.write(f"[ERROR] GE({os.getpid()},atc): {text}\n")
        except OSError:
            return None
        return self.path

    def close(self) -> None:
        logger = logging.getLogger("ge")
        for handler in self.handlers:
            logger.removeHandler(handler)
            try:
                handler.close()         # flushes: a full disk fails here too
            except Exception:
                pass
        self.handlers.clear()


class _Quiet:
    """A handler that logging faults cannot turn into an outcome: the first failed record
    silences the handler (the stdlib's handleError would print "--- Logging error ---" and a
    traceback for every record) and, for the log file, is a WP0003 warning after the result."""

    broken = False

    def emit(self, record: logging.LogRecord) -> None:
        if self.broken:
            return
        try:
            super().emit(record)            # FileHandler opens the file here, outside its try
        except Exception:
            self.handleError(record)

    def handleError(self, record: logging.LogRecord) -> None:
        if self.broken:
            return
        self.broken = True
        self.report(sys.exc_info()[1])

    def report(self, exc) -> None:
        pass


class _ScreenHandler(logging.Handler):
    """Log records on stdout; a progress line on the screen is erased first (ge.atc.report).
    A record the screen cannot take is dropped (ge.stdio): a screen cannot warn about itself."""

    def emit(self, record: logging.LogRecord) -> None:
        clear_progress()
        try:
            text = self.format(record)
        except Exception:
            return
        stdio.write("stdout", text + "\n")


class _LazyFileHandler(_Quiet, logging.FileHandler):
    """Creates the plog directory only when the first record is written."""

    def _open(self):
        from ge.fsutil import make_dirs
        make_dirs(os.path.dirname(self.baseFilename))
        return super()._open()

    def report(self, exc) -> None:
        from ge.errors import warn          # logs to "ge": this handler is silent by now
        reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        warn("WP0003", {"file": self.baseFilename, "reason": reason})


def start_logging(level_flag: str, environ=None) -> LogSetup:
    environ = os.environ if environ is None else environ
    level_name = level_flag
    if level_flag == "null" and environ.get("NPU_COLLECT_PATH"):
        level_name = _GLOBAL_LEVELS.get(environ.get("ASCEND_GLOBAL_LOG_LEVEL", ""), "null")
    setup = LogSetup(default_log_path(environ), level_name)
    logger = logging.getLogger("ge")
    logger.setLevel(LEVELS[level_name])
    if level_name == "null":
        return setup
    formatter = logging.Formatter(_FORMAT)
    file_handler = _LazyFileHandler(setup.path, encoding="utf-8", delay=True,
                                    errors="surrogateescape")
    file_handler.setFormatter(formatter)
    setup.handlers.append(file_handler)
    if environ.get("ASCEND_SLOG_PRINT_TO_STDOUT") == "1":
        screen = _ScreenHandler()
        screen.setFormatter(formatter)
        setup.handlers.append(screen)
    for handler in setup.handlers:
        logger.addHandler(handler)
    return setup
