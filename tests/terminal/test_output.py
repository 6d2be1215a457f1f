"""What a terminal shows is the same from every entry, line for line and in the same order
(start line, screen log of --log=info, progress, `...`, result line, warnings), and it is what a
pipe receives once the progress line is gone: the progress line is for terminals only."""
import re
import shutil

from terminal_helpers import KERNELS, START, SUCCESS, Session, normalise, screen_lines

ENTRIES = ("atc", "pyatc", "python3 -m ge.pyatc")
FLAGS = ("--log=info", "--virtual_type=0")            # screen log lines and one warning
ENV = {"ASCEND_SLOG_PRINT_TO_STDOUT": "1"}
WARNING = ("[PID: <pid>] <time> Option_Without_Effect(WP0001): Option --virtual_type=0 is "
           "accepted but has no effect in this implementation (the target is the host CPU).")


def _fresh(entry_argv, entry_env, root, model, entry) -> Session:
    """The same directories for every entry (paths appear in log lines), a cold cache."""
    shutil.rmtree(root, ignore_errors=True)
    return Session(entry_argv(entry), entry_env, root, model)


def test_every_entry_shows_the_same_screen(entry_argv, entry_env, chain_onnx, tmp_path):
    root = tmp_path / "same"
    tty, piped = {}, {}
    for entry in ENTRIES:
        run = _fresh(entry_argv, entry_env, root, chain_onnx, entry).run(*FLAGS, env=ENV)
        assert run.status == 0, run.raw[-2000:]
        tty[entry] = normalise(run.raw)
        res = _fresh(entry_argv, entry_env, root, chain_onnx, entry).run_piped(*FLAGS, env=ENV)
        piped[entry] = (res.returncode, normalise(res.stdout.decode()), res.stderr)
    assert tty["pyatc"] == tty["atc"] and tty["python3 -m ge.pyatc"] == tty["atc"]
    assert piped["pyatc"] == piped["atc"] and piped["python3 -m ge.pyatc"] == piped["atc"]

    # a terminal gets every count of the progress line, rewritten in place ...
    assert re.findall(r"\rkernels (\d+)/(\d+)", tty["atc"]) == [
        (str(done), str(KERNELS)) for done in range(KERNELS + 1)]
    # ... and in the end shows exactly what a pipe gets, which has no trace of it
    rc, out, err = piped["atc"]
    assert (rc, err) == (0, b"")
    assert "\r" not in out and "\x1b" not in out and not re.search(r"kernels \d+/", out)
    assert screen_lines(tty["atc"]) == out.split("\n")

    lines = out.split("\n")
    dots = lines.index("...")
    assert lines[0] == START
    assert len(lines[1:dots]) >= 5 and all(
        line.startswith("[INFO] GE(<pid>,atc):<time> ge.") for line in lines[1:dots])
    assert any("op compile: " in line for line in lines[1:dots])
    assert lines[dots:] == ["...", SUCCESS, WARNING, "", ""]

