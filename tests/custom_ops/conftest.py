"""Fixtures of the custom operator package tests: the example package's model compiled once
per session; every module leaves no package loaded behind it (the registry is shared by the
whole test process)."""
from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import pytest

from _atc_run import AtcRun
from _samples import SAMPLE_SOC

from ._packages import SWISH_DIR, swish_model

ARGS = (f"--soc_version={SAMPLE_SOC}", "--precision_mode=must_keep_origin_dtype")


class SwishBuild(NamedTuple):
    run: AtcRun
    onnx: Path
    om: Path


@pytest.fixture(autouse=True, scope="module")
def _no_package_left():
    yield
    from ge.ops.custom import unload
    unload()


@pytest.fixture(scope="session")
def swish_build(atc_main, tmp_path_factory, shared_kernel_cache) -> SwishBuild:
    root = tmp_path_factory.mktemp("swish")
    source = swish_model(root / "swish.onnx")
    run = atc_main("--framework=5", f"--model={source}", "--output=swish", *ARGS,
                   f"--op_compiler_cache_dir={shared_kernel_cache}", cwd=root,
                   env={"ASCEND_CUSTOM_OPP_PATH": str(SWISH_DIR)})
    return SwishBuild(run, source, root / "swish.om")


@pytest.fixture
def with_swish(monkeypatch):
    monkeypatch.setenv("ASCEND_CUSTOM_OPP_PATH", str(SWISH_DIR))
