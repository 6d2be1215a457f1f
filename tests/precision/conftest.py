"""Fixtures of the precision tests.

  ci_onnx     ci_onnx(name) -> ModelProto of a CI-sized bench model (resnet50, mobilenetv2, bert)
  build_om    build_om(model, path, options) -> OM path, compiled in-process; with aicpu=True
              every op runs its reference kernel (no C kernel compile: the dtype decisions and
              the float16/bfloat16 arithmetic are the same, ge.graph.lowprec)
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
for extra in (HERE, HERE.parent, HERE.parents[1]):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

from _samples import SAMPLE_SOC  # noqa: E402


@pytest.fixture(scope="session")
def ci_onnx():
    from bench.models import MODELS
    cache = {}

    def get(name: str):
        if name not in cache:
            cache[name] = MODELS[name](size="ci")
        return cache[name]
    return get


@pytest.fixture(scope="session")
def build_om():
    from ge.compiler.api import build_graph, save_om
    from ge.parser.onnx import parse_onnx

    def build(model, path, options=None, aicpu: bool = True) -> str:
        opts = {"ge.socVersion": SAMPLE_SOC, **(options or {})}
        if aicpu:
            opts["ge.exec.exclude_engines"] = "AiCore"
        graph = parse_onnx(model, dict(opts))
        save_om(str(path), build_graph(graph, dict(opts)), "test")
        return str(path)
    return build
