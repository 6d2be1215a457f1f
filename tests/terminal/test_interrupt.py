"""Ctrl-C and SIGTERM at three moments of a compile, for each entry, in a real terminal.

The moments are fault points (ge/fsutil/faults.py) where the compile waits for the signal:
`atc.compile_start` (options checked, nothing compiled), `kernels.half` (half of the kernels
built, the other cc jobs running or queued) and `om.partial` (every kernel published, half of
the OM in its temporary file).  Each time: status 255 soon after the signal, ATC's failure
report with EP0004 and nothing else, no traceback, no OM, no temporary anywhere, every cache
entry complete; then the next compile in the same directories succeeds (from the cache: no
progress line).
"""
import os
import re
import signal

import pytest

from ge.compiler.cache.store import list_entries, lookup
from ge.fsutil import parse_temp_name
from terminal_helpers import (KERNELS, SIGNAL_TIMEOUT, SOC, START, SUCCESS, normalise)

ENTRIES = ("atc", "pyatc", "python3 -m ge.pyatc")
MOMENTS = ("atc.compile_start", "kernels.half", "om.partial")
SIGNALS = {"SIGINT": signal.SIGINT, "SIGTERM": signal.SIGTERM}
FAILED = re.compile(r"ATC run failed, Please check the detail log, Try '.+ --help' for more "
                    r"information")


def _temporaries(directory) -> list:
    try:
        return [n for n in os.listdir(directory) if parse_temp_name(n) is not None]
    except FileNotFoundError:
        return []


def assert_nothing_left(session, published: int) -> None:
    """No OM, no temporary in the output directory, the cache (root and SoC directory) or
    TMPDIR; exactly `published` kernel entries (and maybe the support object's and a
    template's), each one complete."""
    assert sorted(os.listdir(session.cwd)) == ["m.onnx"]
    soc_dir = session.cache / "kernel_cache" / SOC
    for directory in (session.cwd, session.cache, soc_dir, session.tmpdir):
        assert _temporaries(directory) == [], directory
    entries = list_entries(str(soc_dir))
    kernels = [name for name in entries if not name.startswith("te_ge_")]
    assert len(kernels) == published, entries
    for name in entries:
        found = lookup(str(soc_dir), name, refresh=False)
        assert found.status == "hit", (name, found.reason)


def assert_interrupted_report(run, signame: str) -> None:
    assert (run.status, run.signal) == (255, None), run.raw[-2000:]
    assert run.seconds_after_signal < SIGNAL_TIMEOUT
    assert "Traceback" not in run.raw
    lines = [normalise(line) for line in run.lines]
    assert lines[:2] == [START, "..."], lines
    assert FAILED.fullmatch(lines[2]), lines
    assert lines[3] == (f"[PID: <pid>] <time> Interrupted(EP0004): The run was interrupted by "
                        f"{signame}."), lines
    assert lines[4].startswith("        Possible Cause: ")
    assert lines[5].startswith("        Solution: ")
    assert lines[6:] == ["", ""], lines


@pytest.mark.parametrize("signame", SIGNALS)
@pytest.mark.parametrize("entry", ENTRIES)
def test_interrupt_at_each_moment_then_compile_again(session_for, entry, signame):
    session = session_for(entry)
    published = {"atc.compile_start": 0, "kernels.half": 0, "om.partial": KERNELS}
    for moment in MOMENTS:
        run = session.interrupt_at(moment, SIGNALS[signame])
        assert_interrupted_report(run, signame)
        if moment != "atc.compile_start":      # the progress line was on the screen
            assert f"\rkernels {KERNELS // 2}/{KERNELS}" in run.raw
        assert_nothing_left(session, published[moment])
    # every kernel was published before om.partial: all hits, so no progress line either
    again = session.run()
    assert again.status == 0, again.raw[-2000:]
    assert again.lines == [START, "...", SUCCESS, "", ""] and "kernels" not in again.raw
    assert (session.cwd / "net.om").is_file()


def test_ctrl_c_before_the_flow_starts_is_status_255_without_traceback(monkeypatch, capsys):
    """pyatc's own start-up (dependency check, loading the library) is outside the ATC flow:
    Ctrl-C there ends pyatc with ATC's failure status and nothing on the screen."""
    from ge.pyatc import _entry

    def interrupted():
        raise KeyboardInterrupt
    monkeypatch.setattr(_entry, "_check_dependencies", interrupted)
    with pytest.raises(SystemExit) as ended:
        _entry.main("pyatc", ["--framework=5"])
    assert ended.value.code == 255
    assert capsys.readouterr() == ("", "")
