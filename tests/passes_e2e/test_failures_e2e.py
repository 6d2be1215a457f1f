"""A failing pass or plugin makes `pyatc` fail with E13028 / E13029, exit 255, no OM."""
from __future__ import annotations

import pytest

from .conftest import PLUGINS

FAILING_PASSES = {
    # case: (pass, "file:line", reason text, return code)
    "raises": ("E2eRaisingPass", "errors/raises.py:8,", "ValueError: e2e raising pass gives up",
               "4294967295"),
    # a returned failure has no traceback: the line is the def of run()
    "status": ("E2eStatusPass", "errors/status.py:7,", "e2e status pass found nothing it likes",
               "7"),
    "wrong_type": ("E2eWrongTypePass", "errors/wrong_type.py:7,",
                   "python pass returned unsupported type: str", "4294967295"),
    # what escapes `except Exception` is a pass failure too, never a silent stop
    "exits": ("E2eExitingPass", "errors/exits.py:10,", "SystemExit: 3", "4294967295"),
    "base_exception": ("E2eBaseExceptionPass", "errors/base_exception.py:8,",
                       "BaseException: e2e base exception", "4294967295"),
    "generator_exit": ("E2eGeneratorExitPass", "errors/generator_exit.py:8,",
                       "GeneratorExit: e2e generator exit", "4294967295"),
}

# Passes that return normally but leave a malformed graph: Graph.verify fails them.
BREAKING_PASSES = {
    "drops_output": ("E2eDropsOutputPass", "NetOutput"),
    "unconnects": ("E2eUnconnectsPass", "input 0"),
}


def _failed(run):
    assert run.rc == 255, run.text
    assert run.om is None and not list(run.work.glob("*.om"))
    assert "ATC run failed" in run.stdout and "ATC run success" not in run.stdout


@pytest.mark.parametrize("case", sorted(FAILING_PASSES))
def test_failing_pass_is_e13028_naming_pass_file_line_reason(e2e, case):
    name, where, reason, retcode = FAILING_PASSES[case]
    run = e2e[case]
    _failed(run)
    line = next(line for line in run.text.splitlines() if "E13028" in line)
    assert f"Failed to run custom fusion pass {name}. Return code: {retcode}." in line
    assert reason in line
    assert str(PLUGINS / where) in line, line


def test_plugin_import_failure_is_e13029_naming_the_file(e2e):
    run = e2e["broken_import"]
    _failed(run)
    line = next(line for line in run.text.splitlines() if "E13029" in line)
    assert f"Failed to load custom fusion pass lib {PLUGINS / 'errors/broken_import.py'}." in line
    assert "ModuleNotFoundError" in line and "e2e_module_that_does_not_exist" in line


@pytest.mark.parametrize("case", sorted(BREAKING_PASSES))
def test_a_pass_that_breaks_the_graph_fails_naming_it(e2e, case):
    name, what = BREAKING_PASSES[case]
    run = e2e[case]
    _failed(run)
    line = next(line for line in run.text.splitlines() if "E13028" in line)
    assert f"Failed to run custom fusion pass {name}." in line
    assert "the pass left the graph malformed" in line and what in line, line
