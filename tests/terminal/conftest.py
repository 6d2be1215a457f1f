"""Fixtures of the terminal tests: the model (built once) and sessions of an installed entry
(tests/conftest.py `entry_argv` / `entry_env`) in a private directory tree."""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

from terminal_helpers import Session, chain_model  # noqa: E402


@pytest.fixture(scope="session")
def chain_onnx(tmp_path_factory):
    return chain_model(tmp_path_factory.mktemp("terminal_model") / "chain.onnx")


@pytest.fixture
def session_for(entry_argv, entry_env, tmp_path, chain_onnx):
    """entry name, directory name -> a Session of that entry under the test's tmp_path."""
    def make(entry: str, name: str = "session") -> Session:
        return Session(entry_argv(entry), entry_env, tmp_path / name, chain_onnx)
    return make
