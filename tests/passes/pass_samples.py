"""Shared fixtures: an isolated pass registry per test and loaders for the sample files."""
from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "examples" / "fusion_pass"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


@pytest.fixture(autouse=True)
def isolated_registry():
    """Each test starts with empty user and built-in pass tables and gets them back after."""
    from ge.passes import registry
    saved_user, saved_builtin = dict(registry._USER), dict(registry._BUILTIN)
    registry._USER.clear()
    registry._BUILTIN.clear()
    yield
    registry._USER.clear()
    registry._BUILTIN.clear()
    registry._USER.update(saved_user)
    registry._BUILTIN.update(saved_builtin)


def load_file(path: Path):
    """Load a sample pass file the way discovery does (fresh module each call)."""
    name = f"_ge_py_pass_test_{path.stem}_{abs(hash((str(path), os.urandom(4))))}"
    spec = importlib.util.spec_from_file_location(name, str(path))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def sample():
    def _load(rel: str):
        return load_file(SAMPLES / rel)
    return _load
