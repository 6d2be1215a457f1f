"""Fixtures of the unknown-dimension tests (docs/dynamic-shapes.md "Unknown dimensions and
ranges"): the CI-sized ResNet-50, MobileNetV2 and BERT with symbolic dims, each compiled once
per session with `-1`/range `--input_shape` by the ATC main flow in this process."""
from __future__ import annotations

from pathlib import Path
from typing import Callable, NamedTuple

import onnx
import pytest

from _samples import SAMPLE_SOC
from bench.models import MODELS

# float32 results are compared at float32 tolerance: keep the dtypes the model gives
PRECISION = "--precision_mode=must_keep_origin_dtype"


def symbolic(model: onnx.ModelProto, dims: dict) -> onnx.ModelProto:
    """The model with `dims` ({input: {axis: name}}) symbolic in its inputs (and the batch
    axis of its outputs), as an exporter writes them; value infos dropped."""
    out = onnx.ModelProto()
    out.CopyFrom(model)
    for vi in out.graph.input:
        for axis, name in dims.get(vi.name, {}).items():
            vi.type.tensor_type.shape.dim[axis].dim_param = name
    for vi in out.graph.output:
        vi.type.tensor_type.shape.dim[0].dim_param = "N"
    del out.graph.value_info[:]
    return out


# name -> (generator, symbolic dims)
SYMBOLIC = {
    "resnet50": ("resnet50", {"input": {0: "N", 2: "H", 3: "W"}}),
    "mobilenetv2": ("mobilenetv2", {"input": {0: "N", 2: "H", 3: "W"}}),
    "bert": ("bert", {"input_ids": {0: "N"}, "attention_mask": {0: "N"}}),
}


class Compiled(NamedTuple):
    onnx: Path
    om: Path


@pytest.fixture(scope="session")
def symbolic_model(tmp_path_factory) -> Callable[[str], Path]:
    root = tmp_path_factory.mktemp("symbolic_models")
    done: dict = {}

    def get(name: str) -> Path:
        if name not in done:
            generator, dims = SYMBOLIC[name]
            done[name] = root / f"{name}.onnx"
            onnx.save(symbolic(MODELS[generator](size="ci"), dims), str(done[name]))
        return done[name]
    return get


@pytest.fixture(scope="session")
def dynamic_om(symbolic_model, atc_main, shared_kernel_cache,
               tmp_path_factory) -> Callable[..., Compiled]:
    """dynamic_om(name, *flags): the model compiled with those shape flags (once each)."""
    root = tmp_path_factory.mktemp("dynamic_oms")
    done: dict = {}

    def get(name: str, *flags: str) -> Compiled:
        key = (name,) + flags
        if key not in done:
            work = root / f"{name}_{len(done)}"
            work.mkdir()
            args = ("--framework=5", f"--model={symbolic_model(name)}", "--output=m",
                    f"--soc_version={SAMPLE_SOC}", PRECISION,
                    f"--op_compiler_cache_dir={shared_kernel_cache}", *flags)
            run = atc_main(*args, cwd=work)
            assert run.rc == 0, f"pyatc {' '.join(args)} failed:\n{run.text}"
            done[key] = Compiled(symbolic_model(name), work / "m.om")
        return done[key]
    return get
