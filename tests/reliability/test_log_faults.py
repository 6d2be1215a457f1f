"""Issue #19 item 5: logging faults never change the outcome and never print a traceback.

Before: `--log=debug` with a full log directory printed "ATC run success", wrote the OM, then
fifteen "--- Logging error ---" tracebacks and exit status 255.  Now the log file's first failed
record is one WP0003 warning naming it; the handler is silent after that.
"""
import pytest

from faultprobe import Atc, needs_mounts, read_only, tiny_model, tmpfs


@pytest.fixture(scope="module")
def atc(tmp_path_factory):
    base = tmp_path_factory.mktemp("log_faults")
    runner = Atc(base, tiny_model(base / "tiny.onnx"))
    runner.cache = base / "cache"
    return runner


def _log_warning(run, reason: str) -> str:
    run.assert_clean_screen()
    lines = run.lines("WP0003")
    assert len(lines) == 1 and "/debug/plog/plog-" in lines[0], run.text[-3000:]
    assert reason in lines[0], lines[0]
    return lines[0]


def test_full_log_disk_with_debug_logging_still_succeeds(atc):
    needs_mounts()
    logs = str(atc.tmp / "fulllog")
    run = atc(f"--op_compiler_cache_dir={atc.cache}", "--log=debug",
              setup=tmpfs(logs, "16k", fill=True), env={"ASCEND_PROCESS_LOG_PATH": logs})
    assert run.rc == 0 and "ATC run success" in run.stdout, run.text[-3000:]
    assert (run.cwd / "net.om").is_file()
    _log_warning(run, "No space left on device")


def test_read_only_log_directory(atc):
    needs_mounts()
    logs = str(atc.tmp / "rolog")
    run = atc(f"--op_compiler_cache_dir={atc.cache}", "--log=info", setup=read_only(logs),
              env={"ASCEND_PROCESS_LOG_PATH": logs})
    assert run.rc == 0 and (run.cwd / "net.om").is_file(), run.text[-3000:]
    _log_warning(run, "Read-only file system")


def test_log_root_that_is_a_file_keeps_the_screen_copy(atc, tmp_path):
    """The log file cannot exist under a file; the records still reach the screen."""
    blocker = tmp_path / "not_a_dir"
    blocker.write_text("")
    run = atc(f"--op_compiler_cache_dir={atc.cache}", "--log=info",
              env={"ASCEND_PROCESS_LOG_PATH": str(blocker), "ASCEND_SLOG_PRINT_TO_STDOUT": "1"})
    assert run.rc == 0, run.text[-3000:]
    assert "op compile:" in run.stdout          # the info records on stdout
    _log_warning(run, "Not a directory")


def test_a_failing_run_keeps_its_code_with_a_full_log_disk(atc):
    """The outcome of a failed run does not change either: its own code, exit 255."""
    needs_mounts()
    logs = str(atc.tmp / "fulllog_fail")
    run = atc(f"--op_compiler_cache_dir={atc.cache}", "--log=debug", "--input_shape=nosuch:2,8",
              setup=tmpfs(logs, "16k", fill=True), env={"ASCEND_PROCESS_LOG_PATH": logs})
    run.assert_clean_screen()
    assert run.rc == 255 and "ATC run failed" in run.stdout, run.text[-3000:]
    assert "(E10016)" in run.stdout, run.stdout
    assert not (run.cwd / "net.om").exists()
