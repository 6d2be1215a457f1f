"""Screen output of the ATC flow: fixed lines, error report, warning report (spec §2, §7.3-4).

The only module of ge.atc that writes to stdout/stderr, through ge.stdio: messages that a
closed, full or reader-less stream cannot take are dropped, the product text (--help, --mode=6)
is EP0006 when lost.  Text is written as UTF-8 with `surrogateescape`, so non-UTF-8 bytes of a
path given on the command line come back out as the same bytes instead of raising.  On a
terminal, long work shows one progress line (`kernels 12/47`) rewritten in place with `\r`;
every other line erases it first, so it never mixes with them, and nothing of it reaches an
output that is not a terminal.
"""
from __future__ import annotations

import os
import sys
import time
from collections import namedtuple

from ge import stdio
from ge.errors import GeError, GeWarning


__all__ = ["START_LINE", "DOTS_LINE", "SUCCESS_LINE", "failure_line", "Record", "ErrorLog",
           "render_errors", "render_warnings", "out", "err", "product", "report_line", "progress",
           "clear_progress"]

START_LINE = "ATC start working now, please wait for a moment."
DOTS_LINE = "..."
SUCCESS_LINE = "ATC run success, welcome to the next use."


def _codes():
    """The code table, on first need: `--help` never renders a code."""
    from . import codes
    return codes


def failure_line(prog: str) -> str:
    return f"ATC run failed, Please check the detail log, Try '{prog} --help' for more information"


def out(line: str = "") -> None:
    """A message line on stdout; dropped when stdout cannot take it (ge.stdio)."""
    clear_progress()
    stdio.write("stdout", line + "\n")


def err(line: str) -> None:
    clear_progress()
    stdio.write("stderr", line + "\n")


def product(text: str) -> None:
    """Text that is the product of the run (--help, --mode=6): EP0006 when it is lost."""
    clear_progress()
    stdio.write_product("stdout", text + "\n")


def report_line(line: str = "") -> None:
    """A line of the result and error report: on stdout as ATC prints it, on stderr when
    stdout cannot take it (a failed run must still say why somewhere)."""
    clear_progress()
    if not stdio.write("stdout", line + "\n"):
        stdio.write("stderr", line + "\n")


_progress_width = 0         # characters of the progress line on the screen, 0 when none


def _stdout_is_terminal() -> bool:
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):         # replaced or closed stdout
        return False


def progress(what: str, done: int, total: int) -> None:
    """Show `<what> <done>/<total>` in place of the previous progress line (terminals only)."""
    global _progress_width
    if not _stdout_is_terminal():
        return
    text = f"{what} {done}/{total}"
    stdio.write("stdout", "\r" + text.ljust(_progress_width))
    _progress_width = max(_progress_width, len(text))


def clear_progress() -> None:
    """Erase the progress line (and a `^C` the terminal echoed after it): carriage return, then
    ECMA-48 "erase to end of line"; the cursor stays at the start of the empty line."""
    global _progress_width
    if _progress_width:
        _progress_width = 0
        stdio.write("stdout", "\r\x1b[K")


def timestamp(now: float | None = None) -> str:
    """`YYYY-MM-DD-hh:mm:ss.mmm.uuu` in local time."""
    now = time.time() if now is None else now
    micro = int(round((now - int(now)) * 1_000_000)) % 1_000_000
    base = time.strftime("%Y-%m-%d-%H:%M:%S", time.localtime(int(now)))
    return f"{base}.{micro // 1000:03d}.{micro % 1000:03d}"


class Record(namedtuple("Record", "code message when pid detail", defaults=("",))):
    """One reported error; `detail` is the code's detail text, printed as a TraceBack line."""
    __slots__ = ()

    @property
    def lines(self) -> list[str]:
        """This record's lines inside the report (8-space indent)."""
        return [f"        {line}" for text in (self.message, self.detail) if text
                for line in text.splitlines()]

    @property
    def headline(self) -> str:
        entry = _codes().lookup(self.code)
        title = entry.title if entry else "Error"
        return f"[PID: {self.pid}] {self.when} {title}({self.code}): {self.message}"


class ErrorLog:
    """Errors recorded during one run, in order, duplicates dropped (§7.1)."""

    def __init__(self) -> None:
        self.records: list[Record] = []

    def add(self, code: str, params: dict | None = None) -> None:
        text, detail = _codes().format_parts(code, params)
        if any((r.code, r.message, r.detail) == (code, text, detail) for r in self.records):
            return
        self.records.append(Record(code, text, timestamp(), os.getpid(), detail))

    def add_error(self, error: GeError) -> None:
        self.add(error.code, error.params)

    def __bool__(self) -> bool:
        return bool(self.records)


def _follow_ups(code: str) -> list[str]:
    entry = _codes().lookup(code)
    if entry is None:
        return []
    return [f"        {label}: {text}" for label, text in
            (("Possible Cause", entry.cause), ("Solution", entry.solution))
            if text and text != "N/A"]


def render_errors(log: ErrorLog) -> list[str]:
    """Lines of the error report, the trailing empty line included."""
    records = log.records
    if not records:
        return [""]
    headline = next((r for r in records if not _codes().is_internal(r.code)), None)
    if headline is None:
        lines = [f"{records[0].code}: Internal error!"]
        lines += [line for r in records for line in r.lines]
        return lines + [""]
    lines = [headline.headline] + _follow_ups(headline.code)
    # the headline's own detail comes first: the why of the headline, then earlier records
    rest = [f"        {line}" for line in headline.detail.splitlines()]
    rest += [line for r in records if r is not headline for line in r.lines]
    if rest:
        lines.append("TraceBack (most recent call last):")
        lines += rest
    return lines + [""]


def render_warnings(warnings: list[GeWarning]) -> list[str]:
    """One `[PID] time Title(code): message` line per warning, then an empty line (§7.4)."""
    lines = []
    seen = set()
    for w in warnings:
        text = _codes().format_message(w.code, w.params)
        if (w.code, text) in seen:
            continue
        seen.add((w.code, text))
        entry = _codes().lookup(w.code)
        title = entry.title if entry else "Warning"
        lines.append(f"[PID: {os.getpid()}] {timestamp()} {title}({w.code}): {text}")
    return lines + [""]
