"""Session fixtures shared by all test packages: one kernel cache, the sample models compiled
once, and the installed entries.  Build on these instead of compiling again: the suite's time
must grow with what a test adds, not with how many tests compile the same model.

Compiling (one of each per test session):
  shared_kernel_cache  the session's kernel cache root (--op_compiler_cache_dir, and
                    ASCEND_CACHE_PATH for the whole session, so a compile that names no cache
                    of its own - in-process or a child process - uses it, never $HOME/atc_data).
                    Each kernel is compiled once per session; every later compile of it is a
                    hit.  Tests of the cache itself (tests/cache, tests/cache_e2e) keep private
                    caches.
  model_path(name)  the source file of a sample model of tests/_samples.py (SAMPLE_MODELS: the
                    onnx light model-zoo graphs light_<name>, the CI-sized <name>_ci of
                    bench/models); generated ones are written once per session
  atc_main(*args, cwd=...)
                    AtcRun(rc, stdout, stderr) of the ATC main flow run in this process
                    (`ge.atc.main_impl`, what pyatc runs; rc as a process would exit, 0 or 255)
                    in `cwd`, with ASCEND_WORK_PATH=cwd, `env` set for the run and the logs in a
                    session directory: no process start for a command line that does not test
                    an entry
  compiled_model(name)
                    CompiledSample(om, onnx): the sample compiled once per session by the ATC
                    main flow in this process (`ge.atc.main_impl`, what pyatc runs) with
                    --soc_version=SAMPLE_SOC and the shared cache; both files are read-only to
                    tests (copy before damaging one).  A later front end (TensorFlow, Caffe,
                    AIPP, dynamic shapes, ...) adds its samples to tests/_samples.py and gets the
                    same sharing; options beyond the defaults belong to the test that needs them.

The install layouts are built once per test run, on first use:
  installed_prefix  CANN-style tree from scripts/install_prefix.sh (set PYATC_TEST_PREFIX to an
                    existing install to skip the build)
  installed_venv    a fresh venv with `pip install --no-build-isolation --no-deps .` (set
                    PYATC_TEST_VENV to reuse one); it sees the test interpreter's packages
                    through a .pth file, so no download is needed
The entries are run the way a user runs them after `source <prefix>/set_env.sh`:
  entry_argv(name)  argv prefix of "atc", "pyatc" or "python3 -m ge.pyatc" (ENTRY_NAMES)
  entry_env         the environment to run them in (set_env.sh applied; `python3` on PATH is
                    the interpreter running the tests)
"""
from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Callable, Dict, List, NamedTuple, Optional

import pytest

from _pyatc_venv import make_venv

from _atc_run import AtcRun
from _samples import FP32_FLAG, FRAMEWORK_OF_SUFFIX, SAMPLE_SOC, sample_onnx

REPO_ROOT = Path(__file__).resolve().parents[1]
ENTRY_NAMES = ("atc", "pyatc", "python3 -m ge.pyatc")


# -- compiling: one kernel cache, each sample model compiled once ---------------------------------

@pytest.fixture(scope="session")
def shared_kernel_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("kernel_cache")


@pytest.fixture(scope="session", autouse=True)
def _session_cache_path(shared_kernel_cache):
    """ASCEND_CACHE_PATH for the whole session: compiles that name no cache share this one."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ASCEND_CACHE_PATH", str(shared_kernel_cache))
        yield


@pytest.fixture(scope="session")
def model_path(tmp_path_factory) -> Callable[[str], Path]:
    generated = tmp_path_factory.mktemp("models")

    def path(name: str) -> Path:
        found = sample_onnx(name, generated)
        if found is None:
            pytest.skip(f"onnx ships no {name}.onnx")
        return found
    return path


@pytest.fixture(scope="session")
def atc_main(tmp_path_factory) -> Callable[..., AtcRun]:
    from ge.atc import main_impl
    logs = tmp_path_factory.mktemp("atc_main_log")

    def run(*args: str, cwd: Path, env: Optional[Dict[str, str]] = None) -> AtcRun:
        out, err = io.StringIO(), io.StringIO()
        with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(out), \
                contextlib.redirect_stderr(err):
            patch.chdir(cwd)
            for key, value in dict(env or {}, ASCEND_WORK_PATH=str(cwd),
                                   ASCEND_PROCESS_LOG_PATH=str(logs)).items():
                patch.setenv(key, value)
            rc = main_impl(["pyatc", *args])
        return AtcRun(rc & 0xFF, out.getvalue(), err.getvalue())
    return run


class CompiledSample(NamedTuple):
    om: Path
    onnx: Path


@pytest.fixture(scope="session")
def compiled_model(model_path, shared_kernel_cache, atc_main,
                   tmp_path_factory) -> Callable[[str], CompiledSample]:
    done: Dict[str, CompiledSample] = {}
    root = tmp_path_factory.mktemp("compiled")

    def get(name: str) -> CompiledSample:
        if name not in done:
            source = model_path(name)
            work = root / name
            work.mkdir()
            args = (f"--framework={FRAMEWORK_OF_SUFFIX[source.suffix]}", f"--model={source}",
                    f"--output={name}", f"--soc_version={SAMPLE_SOC}", FP32_FLAG,
                    f"--op_compiler_cache_dir={shared_kernel_cache}")
            run = atc_main(*args, cwd=work)
            assert run.rc == 0, f"pyatc {' '.join(args)} failed:\n{run.text}"
            done[name] = CompiledSample(work / f"{name}.om", source)
        return done[name]
    return get


def _run_build(argv: List[str], env: Optional[Dict[str, str]]) -> None:
    result = subprocess.run(argv, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        pytest.fail(f"{' '.join(argv)} failed ({result.returncode}):\n"
                    f"{result.stdout[-4000:]}\n{result.stderr[-4000:]}", pytrace=False)


@pytest.fixture(scope="session")
def installed_prefix(tmp_path_factory) -> Path:
    existing = os.environ.get("PYATC_TEST_PREFIX")
    if existing:
        return Path(existing)
    prefix = tmp_path_factory.mktemp("install") / "cann"
    env = dict(os.environ, PYTHON=sys.executable)
    _run_build([str(REPO_ROOT / "scripts" / "install_prefix.sh"), str(prefix)], env)
    return prefix


@pytest.fixture(scope="session")
def installed_venv(tmp_path_factory) -> Path:
    existing = os.environ.get("PYATC_TEST_VENV")
    if existing:
        return Path(existing)
    venv = tmp_path_factory.mktemp("venv") / "pyatc-venv"
    python = make_venv(venv, see_outer_packages=True)
    _run_build([sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
                "--no-build-isolation", "--no-deps", "--no-index", str(REPO_ROOT)], None)
    return venv


def set_env_environment(prefix: Path, base: Dict[str, str]) -> Dict[str, str]:
    """`base` after `source <prefix>/set_env.sh` (run by bash)."""
    out = subprocess.run(["bash", "-c", '. "$1" && env -0', "set_env", str(prefix / "set_env.sh")],
                         env=base, check=True, capture_output=True).stdout
    return dict(item.split("=", 1) for item in out.decode().split("\0") if "=" in item)


@pytest.fixture(scope="session")
def entry_env(installed_prefix) -> Dict[str, str]:
    base = dict(os.environ)
    base["PATH"] = os.path.dirname(sys.executable) + os.pathsep + base.get("PATH", "")
    for name in ("PYTHON", "PYATC_WRAPPER_LIB"):
        base.pop(name, None)
    return set_env_environment(installed_prefix, base)


@pytest.fixture(scope="session")
def entry_argv(installed_prefix) -> Callable[[str], List[str]]:
    def argv(name: str) -> List[str]:
        if name == "atc":
            return [str(installed_prefix / "bin" / "atc")]
        if name == "pyatc":
            return [str(installed_prefix / "bin" / "pyatc")]
        if name == "python3 -m ge.pyatc":
            return [sys.executable, "-m", "ge.pyatc"]
        raise KeyError(f"unknown entry {name!r}; known: {', '.join(ENTRY_NAMES)}")
    return argv
