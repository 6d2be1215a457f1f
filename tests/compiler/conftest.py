"""Fixtures of the end-to-end compiler tests (the shared ones are in tests/conftest.py).

  MODELS            the twelve models of the compiler issue: the nine onnx "light" models and
                    the CI-sized ResNet-50, MobileNetV2 and BERT (tests/_samples.py)
  model_path(name), shared_kernel_cache, compiled_model(name)
                    from tests/conftest.py
  atc_run(entry, *args, cwd=..., env=...)
                    runs an installed entry ("atc", "pyatc", "python3 -m ge.pyatc") as a real
                    process with the session cache, logs under the session temp dir
  compiled(name)    the OM of compiled_model(name), shared by the structure and numbers tests
"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Callable, Dict, List, Optional

import numpy as np
import onnx
import pytest

from _atc_run import AtcRun
from _samples import REPO, SAMPLE_MODELS as MODELS, SAMPLE_SOC as SOC
from bench.models import bert


@pytest.fixture(scope="session")
def atc_run(entry_argv, entry_env, shared_kernel_cache, tmp_path_factory) -> Callable[..., AtcRun]:
    logs = tmp_path_factory.mktemp("plog")

    def run(entry: str, *args: str, cwd: Path, env: Optional[Dict[str, str]] = None,
            cache: bool = True) -> AtcRun:
        environment = {k: v for k, v in entry_env.items()
                       if not k.startswith(("ASCEND_PROCESS_LOG", "DUMP_GE", "DUMP_GRAPH"))}
        environment.update(ASCEND_PROCESS_LOG_PATH=str(logs), ASCEND_WORK_PATH=str(cwd))
        environment.update(env or {})
        extra: List[str] = [f"--op_compiler_cache_dir={shared_kernel_cache}"] if cache else []
        done = subprocess.run(entry_argv(entry) + list(args) + extra, cwd=cwd, env=environment,
                              capture_output=True, timeout=600)
        decode = lambda data: data.decode("utf-8", "replace")  # noqa: E731
        return AtcRun(done.returncode, decode(done.stdout), decode(done.stderr))
    return run


def compile_args(model: Path, output: str, *extra: str) -> List[str]:
    return ["--framework=5", f"--model={model}", f"--output={output}",
            f"--soc_version={SOC}", "--precision_mode=must_keep_origin_dtype", *extra]


@pytest.fixture(scope="session")
def compiled(compiled_model) -> Callable[[str], Path]:
    """`compiled(name)`: the OM of the sample model (compiled once per session)."""
    return lambda name: compiled_model(name).om


# -- inputs -------------------------------------------------------------------------------------

_NP = {onnx.TensorProto.FLOAT: np.float32, onnx.TensorProto.INT64: np.int64,
       onnx.TensorProto.INT32: np.int32, onnx.TensorProto.FLOAT16: np.float16}


def graph_inputs(model: onnx.ModelProto) -> List[onnx.ValueInfoProto]:
    weights = {t.name for t in model.graph.initializer}
    return [v for v in model.graph.input if v.name not in weights]


def random_feeds(model: onnx.ModelProto, seed: int = 0) -> Dict[str, np.ndarray]:
    """Seeded inputs: standard normal floats; BERT ids in the vocabulary and a padded mask."""
    rng = np.random.default_rng(seed)
    feeds = {}
    for value in graph_inputs(model):
        ttype = value.type.tensor_type
        shape = [d.dim_value if d.dim_value > 0 else 1 for d in ttype.shape.dim]
        dtype = _NP[ttype.elem_type]
        if value.name == "input_ids":
            feeds[value.name] = rng.integers(0, bert.SIZES["ci"]["vocab"], shape).astype(dtype)
        elif value.name == "attention_mask":
            mask = np.ones(shape, dtype)
            mask[..., -3:] = 0
            feeds[value.name] = mask
        else:
            feeds[value.name] = rng.standard_normal(shape).astype(dtype)
    return feeds


def onnxruntime_outputs(model, feeds: Dict[str, np.ndarray]) -> List[np.ndarray]:
    ort = pytest.importorskip("onnxruntime")
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    data = model if isinstance(model, (str, os.PathLike)) else model.SerializeToString()
    session = ort.InferenceSession(os.fspath(data) if not isinstance(data, bytes) else data,
                                   options, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)
