"""Fixtures for the install tests: a stand-in ATC flow, bare and marked venvs, a runner.

The stand-in flow (`stub_flow`) is a tiny `ge` package whose `ge.atc.main_impl` records what
the native layer handed it (argv bytes, the interpreter, a marker import) and returns a chosen
int; its `ge.__path__` continues into the real installed `ge`, so `ge.pyatc` stays the real one.
It stands in for the ATC flow, which is not the unit under test here.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from _install_support import write_stub_flow
from _pyatc_venv import make_venv, venv_purelib


@pytest.fixture(scope="session")
def stub_flow_prefix(tmp_path_factory, installed_prefix) -> Path:
    """Put first on PYTHONPATH: the stand-in flow, the rest of ge from the prefix install."""
    real = str(installed_prefix / "python" / "site-packages" / "ge")
    return write_stub_flow(tmp_path_factory.mktemp("stub-prefix"), [real])


@pytest.fixture(scope="session")
def stub_flow_venv(tmp_path_factory, installed_venv) -> Path:
    """Put first on PYTHONPATH: the stand-in flow, the rest of ge from the venv install."""
    reals = sorted(str(p) for p in installed_venv.glob("lib/python3*/site-packages/ge"))
    return write_stub_flow(tmp_path_factory.mktemp("stub-venv"), reals)


@pytest.fixture(scope="session")
def bare_venv_python(tmp_path_factory) -> Path:
    """A venv with nothing installed: none of pyatc's runtime dependencies."""
    return make_venv(tmp_path_factory.mktemp("bare") / "venv", see_outer_packages=False)


@pytest.fixture(scope="session")
def marked_venv_python(tmp_path_factory) -> Path:
    """A venv that has the runtime dependencies plus a package only it has."""
    python = make_venv(tmp_path_factory.mktemp("marked") / "venv", see_outer_packages=True)
    Path(venv_purelib(python), "pyatc_test_marker.py").write_text("NAME = 'marked-venv'\n")
    return python
