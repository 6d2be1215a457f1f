"""Fixtures of the runtime tests.

  tiny_om   the OM of _build.tiny_model() (two inputs, Conv/Relu/Add/Softmax), compiled once per
            session in-process and shared by the load, input-check and command-line tests; tests
            that damage it write a copy
"""
from __future__ import annotations

import pytest

from _build import compile_to_om, tiny_model


@pytest.fixture(scope="session")
def tiny_om(tmp_path_factory) -> str:
    return compile_to_om(tiny_model(), tmp_path_factory.mktemp("tiny") / "tiny.om")
