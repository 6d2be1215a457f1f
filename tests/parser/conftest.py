"""Fixtures for the ONNX parser tests."""
from __future__ import annotations

import os

import onnx
import pytest

LIGHT_DIR = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")


@pytest.fixture
def light_dir():
    if not os.path.isdir(LIGHT_DIR):
        pytest.skip("onnx light models not installed")
    return LIGHT_DIR
