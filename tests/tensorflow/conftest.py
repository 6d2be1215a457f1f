"""Session fixtures of the TensorFlow front-end tests: TensorFlow imported once, every frozen
graph generated once, every compile done once (the shared kernel cache of tests/conftest.py).

  tf                the tensorflow module (a test dependency; imported once per session)
  frozen(name)      path of the frozen graph `name` (_tf_graphs: Keras applications, bert,
                    control flow, ops) written once per session
  tf_compiled(name, *flags)
                    path of the OM of `name` compiled once per (name, flags) by the ATC main
                    flow in this process with --framework=3, --precision_mode=
                    must_keep_origin_dtype (float32 tolerances) and the shared cache
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Dict

import pytest

import _tf_graphs as G
from _samples import SAMPLE_SOC

BUILDERS = {
    **{name: (lambda name: lambda tf: G.keras_app(tf, name, classes=10))(name)
       for name in G.KERAS_APPS},
    "bert": G.bert_encoder,
    "small": G.small_conv,
    **G.CONTROL_FLOW,
    "ops": lambda tf: G.op_graph(tf, G.op_cases(tf)),
}


@pytest.fixture(scope="session")
def tf():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow
    return tensorflow


@pytest.fixture(scope="session")
def frozen(tf, tmp_path_factory) -> Callable[[str], Path]:
    root = tmp_path_factory.mktemp("frozen")

    def path(name: str) -> Path:
        out = root / f"{name}.pb"
        if not out.exists():
            out.write_bytes(BUILDERS[name](tf))
        return out
    return path


@pytest.fixture(scope="session")
def tf_compiled(frozen, atc_main, shared_kernel_cache, tmp_path_factory) -> Callable[..., Path]:
    done: Dict[tuple, Path] = {}
    root = tmp_path_factory.mktemp("tf_compiled")

    def get(name: str, *flags: str) -> Path:
        key = (name, flags)
        if key not in done:
            work = root / f"{name}_{len(done)}"
            work.mkdir()
            args = ("--framework=3", f"--model={frozen(name)}", f"--output={name}",
                    f"--soc_version={SAMPLE_SOC}", "--precision_mode=must_keep_origin_dtype",
                    f"--op_compiler_cache_dir={shared_kernel_cache}", *flags)
            run = atc_main(*args, cwd=work)
            assert run.rc == 0, f"pyatc {' '.join(args)} failed:\n{run.text}"
            done[key] = work / f"{name}.om"
        return done[key]
    return get
