"""The example package's Caffe mapping: a `Swish` layer (E11009 without the package) compiles
with it, runs with the package's C kernel and matches numpy."""
from __future__ import annotations

import sys

import numpy as np

from .conftest import ARGS
from ._packages import REPO, SWISH_DIR

sys.path.insert(0, str(REPO))
from bench.models.caffe_nets import CaffeNet  # noqa: E402


def _net():
    net = CaffeNet("swish_caffe")
    x = net.input("data", [1, 3, 4, 4])
    y = net.conv(x, 3, 4, 1, name="conv")
    net.layer("Swish", "swish", [y], ["swish"])
    return net


def test_caffe_swish_layer_compiles_with_the_package(atc_main, tmp_path, monkeypatch):
    import ge.runtime
    net = _net()
    prototxt, weight = net.save(tmp_path)
    argv = ("--framework=0", f"--model={prototxt}", f"--weight={weight}", "--output=swish",
            *ARGS)
    run = atc_main(*argv, cwd=tmp_path)
    assert run.rc == 255 and "swish (Swish)" in run.stdout and "E11009" in run.stdout
    assert run.stdout.rstrip().endswith("see docs/custom-ops.md.")
    run = atc_main(*argv, cwd=tmp_path, env={"ASCEND_CUSTOM_OPP_PATH": str(SWISH_DIR)})
    assert run.rc == 0, run.text
    monkeypatch.setenv("ASCEND_CUSTOM_OPP_PATH", str(SWISH_DIR))
    model = ge.runtime.load(tmp_path / "swish.om")
    assert model.engines["swish"] == "AiCore"
    x = np.random.default_rng(0).standard_normal((1, 3, 4, 4)).astype(np.float32)
    w, b = net.blobs["conv"]
    conv = np.einsum("oi,nihw->nohw", w.reshape(4, 3), x) + b.reshape(1, 4, 1, 1)
    np.testing.assert_allclose(model.run([x])[0], conv / (1 + np.exp(-conv)), rtol=1e-5,
                               atol=1e-5)
