"""Fixtures of the single-op tests: the op lists compiled once per session by the ATC main
flow in this process (tests/conftest.py `atc_main`), with the shared kernel cache."""
from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import pytest

from _atc_run import AtcRun
from _samples import SAMPLE_SOC

from ._oplists import GOOD, MIXED, write

# float32 results are compared at float32 tolerance: keep the dtypes the file gives
ARGS = (f"--soc_version={SAMPLE_SOC}", "--precision_mode=must_keep_origin_dtype")


class Built(NamedTuple):
    run: AtcRun
    op_list: str
    out: Path


def _build(atc_main, root: Path, name: str, ops: list, shared_kernel_cache) -> Built:
    op_list = write(root / f"{name}.json", ops)
    run = atc_main(f"--singleop={op_list}", f"--output={name}_out", *ARGS,
                   f"--op_compiler_cache_dir={shared_kernel_cache}", cwd=root)
    return Built(run, op_list, root / f"{name}_out")


@pytest.fixture(scope="session")
def good(atc_main, shared_kernel_cache, tmp_path_factory) -> Built:
    return _build(atc_main, tmp_path_factory.mktemp("singleop"), "good",
                  [op for _, op, _ in GOOD], shared_kernel_cache)


@pytest.fixture(scope="session")
def mixed(atc_main, shared_kernel_cache, tmp_path_factory) -> Built:
    return _build(atc_main, tmp_path_factory.mktemp("singleop_mixed"), "mixed", MIXED,
                  shared_kernel_cache)
