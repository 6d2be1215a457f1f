"""The three entries over one ATC flow, in both install layouts (spec/atc-cli.md §1.1).

Runs every entry from a fresh directory, as a user would after installing. The ATC flow itself
is tested in tests/atc; here only what the entries add is asserted: same stdout apart from the
program name, same stderr, same exit status.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from _install_support import normalise_program_name, run

HELP = ["--help"]


def outputs(result):
    return (normalise_program_name(result.stdout.decode()),
            normalise_program_name(result.stderr.decode()), result.returncode)


@pytest.mark.parametrize("args", [HELP, [], ["--mode=9"]], ids=["help", "no-args", "bad-mode"])
def test_prefix_entries_agree(entry_argv, entry_env, tmp_path, args):
    results = {name: run(entry_argv(name) + args, entry_env, tmp_path)
               for name in ("atc", "pyatc", "python3 -m ge.pyatc")}
    reference = outputs(results["pyatc"])
    assert reference[0].startswith("ATC start working now, please wait for a moment.\n")
    for name, result in results.items():
        assert outputs(result) == reference, name


def test_pyatc_wrapper_found_on_path_after_set_env(entry_env, tmp_path, installed_prefix):
    by_path = run(["pyatc"] + HELP, entry_env, tmp_path)
    by_module = run(["python3", "-m", "ge.pyatc"] + HELP, entry_env, tmp_path)
    assert outputs(by_path) == outputs(by_module)
    assert outputs(by_path)[0].startswith("ATC start working now")


def test_venv_entries_agree(installed_venv, tmp_path):
    bindir = installed_venv / "bin"
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "LD_LIBRARY_PATH", "PYTHON", "PYATC_WRAPPER_LIB")}
    env["PATH"] = f"{bindir}{os.pathsep}{env.get('PATH', '')}"  # an activated venv
    results = [run(["pyatc"] + HELP, env, tmp_path),
               run([str(bindir / "python"), "-m", "ge.pyatc"] + HELP, env, tmp_path),
               run([str(bindir / "atc")] + HELP, env, tmp_path)]
    reference = outputs(results[0])
    assert reference[0].startswith("ATC start working now")
    assert [outputs(r) for r in results] == [reference] * 3


@pytest.mark.parametrize("layout", ["prefix", "venv"])
def test_python_variable_selects_interpreter(layout, installed_prefix, installed_venv, entry_env,
                                             marked_venv_python, tmp_path):
    wrapper = (installed_prefix if layout == "prefix" else installed_venv) / "bin" / "pyatc"
    env = dict(entry_env) if layout == "prefix" else {
        k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LD_LIBRARY_PATH")}
    if layout == "venv":
        # the marked venv does not have ge: give it the venv install's site-packages
        env["PYTHONPATH"] = os.pathsep.join(
            str(p) for p in installed_venv.glob("lib/python3*/site-packages"))
    default = run([str(wrapper)] + HELP, dict(env, PYTHON=sys.executable), tmp_path)
    chosen = run([str(wrapper)] + HELP, dict(env, PYTHON=str(marked_venv_python)), tmp_path)
    assert outputs(chosen) == outputs(default)
    assert outputs(chosen)[0].startswith("ATC start working now")


def test_atc_embeds_its_own_interpreter(entry_argv, entry_env, tmp_path):
    normal = run(entry_argv("atc") + HELP, entry_env, tmp_path)
    no_python = run(entry_argv("atc") + HELP,
                    dict(entry_env, PYTHON=str(tmp_path / "no-such-python")), tmp_path)
    assert outputs(no_python) == outputs(normal)
    assert outputs(normal)[0].startswith("ATC start working now")


def test_set_env_is_posix_sh_compatible_and_idempotent(installed_prefix, tmp_path):
    script = f'. "{installed_prefix}/set_env.sh"; . "{installed_prefix}/set_env.sh"; ' \
             'echo "$PYTHONPATH|$LD_LIBRARY_PATH|$PATH"'
    env = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/")}
    for shell in ("sh", "bash"):
        out = run([shell, "-c", script], env, tmp_path).stdout.decode().strip()
        pythonpath, ld_path, path = out.split("|")
        assert pythonpath == f"{installed_prefix}/python/site-packages", shell
        assert ld_path == f"{installed_prefix}/lib64", shell
        assert path == f"{installed_prefix}/bin:/usr/bin:/bin", shell


def test_import_ge_from_another_interpreter_after_set_env(entry_env, tmp_path, installed_prefix):
    others = sorted(Path("/root/.pyenv/versions").glob("3.1[0-9]*/bin/python3")) + \
        sorted(Path("/root/.pyenv/versions").glob("3.9*/bin/python3"))
    others = [p for p in others if p.resolve() != Path(sys.executable).resolve()]
    if not others:
        pytest.skip("no second CPython 3.9+ on this machine")
    result = run([str(others[0]), "-c", "import ge.pyatc; print(ge.pyatc.__file__)"],
                 entry_env, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.decode().startswith(f"{installed_prefix}/python/site-packages/ge/")
