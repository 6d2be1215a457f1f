"""Fixtures of the end-to-end cache tests: the models (built once) and a `pyatc` runner.

Every compile runs the installed `pyatc` (tests/conftest.py `entry_argv`/`entry_env`) with HOME,
TMPDIR, ASCEND_WORK_PATH and ASCEND_PROCESS_LOG_PATH pointed into the test's tmp directory, so
no test touches the real $HOME/atc_data.
"""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

from e2e_helpers import ModelFiles, Pyatc  # noqa: E402


@pytest.fixture(scope="session")
def models(tmp_path_factory):
    """name -> path of tiny, small (conv), small6 (conv, other widths), resnet50, mobilenetv2
    (CI sizes)."""
    return ModelFiles(tmp_path_factory.mktemp("e2e_models"))


@pytest.fixture
def pyatc(entry_argv, entry_env, tmp_path, models):
    return Pyatc(entry_argv("pyatc"), entry_env, tmp_path, models)


@pytest.fixture(scope="module")
def module_pyatc(entry_argv, entry_env, tmp_path_factory, models):
    """A runner whose directories live as long as the test module (shared references)."""
    return Pyatc(entry_argv("pyatc"), entry_env, tmp_path_factory.mktemp("module"), models)
