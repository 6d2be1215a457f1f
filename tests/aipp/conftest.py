"""AIPP fixtures: the test models written once, and each (model, configuration) compiled once
per session by the ATC main flow in this process with the shared kernel cache."""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Dict

import onnx
import pytest

from _aipp_images import MODELS, aipp_args


@pytest.fixture(scope="session")
def aipp_models(tmp_path_factory) -> Dict[str, Path]:
    root = tmp_path_factory.mktemp("aipp_models")
    paths = {}
    for name, build in MODELS.items():
        paths[name] = root / f"{name}.onnx"
        onnx.save(build(), str(paths[name]))
    return paths


@pytest.fixture(scope="session")
def aipp_om(aipp_models, atc_main, tmp_path_factory) -> Callable[[str, str], Path]:
    """aipp_om(model name, configuration text) -> the OM, compiled once per session."""
    root = tmp_path_factory.mktemp("aipp_om")
    done: Dict[tuple, Path] = {}

    def get(model: str, config: str) -> Path:
        key = (model, config)
        if key not in done:
            work = root / f"case{len(done)}"
            work.mkdir()
            (work / "aipp.cfg").write_text(config)
            run = atc_main(*aipp_args(aipp_models[model], work / "aipp.cfg", "m"), cwd=work)
            assert run.rc == 0, run.text
            done[key] = work / "m.om"
        return done[key]
    return get
