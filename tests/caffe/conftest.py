"""Fixtures of the Caffe front-end tests: networks written with our writer
(bench/models/caffe_nets.py) and compiled once per session by the ATC main flow in this
process, with the shared kernel cache and float32 kept (the comparisons are at float32
tolerance)."""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Dict, NamedTuple

import pytest

from _samples import SAMPLE_SOC

# Every op on AiCpu (numpy reference kernels, no C compile): the whole networks check the
# parser's graphs; each op's compiled kernel is checked by the per-row networks.
NO_KERNELS = '{"compile options": {"graph": {"ge.exec.exclude_engines": "AiCore|AiVec"}}}'


class CaffeModel(NamedTuple):
    net: object             # bench.models.caffe_nets.CaffeNet
    prototxt: Path
    weight: Path
    om: Path


@pytest.fixture(scope="session")
def caffe_compile(atc_main, shared_kernel_cache, tmp_path_factory) -> Callable[..., CaffeModel]:
    """`caffe_compile(key, build, *extra_args, v1=False, files={}, kernels=True)`: the
    network `build()` saved (with `files`, name -> text, beside it) and compiled once per
    session under `key`; kernels=False places every op on AiCpu."""
    done: Dict[str, CaffeModel] = {}
    root = tmp_path_factory.mktemp("caffe")

    def get(key: str, build, *extra: str, v1: bool = False, files=None,
            kernels: bool = True) -> CaffeModel:
        if key not in done:
            work = root / key.replace("/", "_")
            net = build()
            prototxt, weight = (Path(p) for p in net.save(work, v1=v1))
            if not kernels:
                files = dict(files or {}, **{"no_kernels.json": NO_KERNELS})
                extra += ("--raw_ge_options=no_kernels.json",)
            for name, text in (files or {}).items():
                (work / name).write_text(text)
            run = atc_main("--framework=0", f"--model={prototxt}", f"--weight={weight}",
                           "--output=model", f"--soc_version={SAMPLE_SOC}",
                           "--precision_mode=must_keep_origin_dtype",
                           f"--op_compiler_cache_dir={shared_kernel_cache}", *extra, cwd=work)
            assert run.rc == 0, run.text
            done[key] = CaffeModel(net, prototxt, weight, work / "model.om")
        return done[key]
    return get
