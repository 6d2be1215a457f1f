"""Passes that never return: a time limit fails them naming the pass (E13028), and threads a
pass leaves behind do not keep a finished command line alive (issue #19 item 7)."""
from __future__ import annotations

import os
import subprocess
import time

import pytest

from ge.passes.deadline import DEFAULT_SECONDS, TIMEOUT_ENV, TIMEOUT_OPTION, pass_timeout

from .conftest import MODELS, PLUGINS, SOC, model_file
from .test_failures_e2e import _failed

ENTRIES = ("atc", "pyatc", "python3 -m ge.pyatc")


@pytest.mark.parametrize("case, name, where", [
    ("sleeps", "E2eSleepingPass", "hangs/sleeps.py:10,"),
    ("spins", "E2eSpinningPass", "hangs/spins.py:"),
])
def test_a_pass_that_never_returns_fails_after_the_limit(e2e, case, name, where):
    run = e2e[case]
    _failed(run)
    line = next(line for line in run.text.splitlines() if "E13028" in line)
    assert f"Failed to run custom fusion pass {name}." in line
    assert f"did not finish within 2 s ({TIMEOUT_ENV})" in line
    assert str(PLUGINS / where) in line, line


@pytest.mark.parametrize("entry", ENTRIES)
def test_a_thread_left_by_a_pass_does_not_keep_the_entry_alive(entry, entry_argv, entry_env,
                                                               e2e_models, tmp_path):
    env = {k: v for k, v in entry_env.items() if not k.startswith(("ASCEND_", "DUMP_"))}
    env["ASCEND_GE_PY_PASS_PATH"] = str(PLUGINS / "hangs" / "leaves_thread.py")
    env["ASCEND_PROCESS_LOG_PATH"] = str(tmp_path / "log")
    args = [f"--framework={MODELS['matmul_add'][0]}",
            f"--model={model_file(e2e_models, 'matmul_add')}", f"--output={tmp_path / 'm'}",
            f"--soc_version={SOC}", "--op_compiler_cache_mode=disable", "--precision_mode=must_keep_origin_dtype"]
    started = time.monotonic()
    done = subprocess.run(entry_argv(entry) + args, cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ATC run success" in done.stdout and (tmp_path / "m.om").exists()
    assert time.monotonic() - started < 100      # not the pass's hour-long sleep


@pytest.mark.parametrize("options, environ, seconds", [
    ({}, {}, DEFAULT_SECONDS),
    ({}, {TIMEOUT_ENV: "5"}, 5.0),
    ({TIMEOUT_OPTION: "7.5"}, {TIMEOUT_ENV: "5"}, 7.5),     # the GE option wins
    ({TIMEOUT_OPTION: "0"}, {}, 0.0),                       # 0: no limit
])
def test_timeout_setting(options, environ, seconds):
    assert pass_timeout(options, environ) == seconds


def test_invalid_timeout_warns_and_keeps_the_default():
    from ge.errors import take_warnings
    take_warnings()
    assert pass_timeout({}, {TIMEOUT_ENV: "soon"}) == DEFAULT_SECONDS
    (warning,) = take_warnings()
    assert warning.code == "WP0111" and warning.params["source"] == TIMEOUT_ENV
