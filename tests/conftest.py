"""Session fixtures shared by all test packages: the installed entries.

Each install layout is built once per test run, on first use:
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

import os
import subprocess
import sys
from pathlib import Path
from typing import Callable, Dict, List, Optional

import pytest

from _pyatc_venv import make_venv

REPO_ROOT = Path(__file__).resolve().parents[1]
ENTRY_NAMES = ("atc", "pyatc", "python3 -m ge.pyatc")


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
