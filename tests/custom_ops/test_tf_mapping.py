"""The example package's TensorFlow mapping: a frozen GraphDef with a `Swish` node (E13010
without the package) compiles with it, runs with the package's C kernel and matches numpy.
The GraphDef is written with our own schema (ge.proto.tensorflow): no TensorFlow needed."""
from __future__ import annotations

import numpy as np

from ge.proto.tensorflow import GraphDef

from .conftest import ARGS
from ._packages import SWISH_DIR

DT_FLOAT = 1


def _graph_def() -> bytes:
    graph = GraphDef()
    x = graph.node.add(name="x", op="Placeholder")
    x.attr["dtype"].type = DT_FLOAT
    for d in (1, 6):
        x.attr["shape"].shape.dim.add(size=d)
    swish = graph.node.add(name="swish", op="Swish", input=["x"])
    swish.attr["T"].type = DT_FLOAT
    swish.attr["alpha"].f = 0.5
    return graph.SerializeToString()


def test_tf_swish_node_compiles_with_the_package(atc_main, tmp_path, monkeypatch):
    import ge.runtime
    (tmp_path / "swish.pb").write_bytes(_graph_def())
    argv = ("--framework=3", f"--model={tmp_path / 'swish.pb'}", "--output=swish", *ARGS)
    run = atc_main(*argv, cwd=tmp_path)
    assert run.rc == 255 and "E13010" in run.stdout and "Swish" in run.stdout, run.text
    assert not (tmp_path / "swish.om").exists()
    run = atc_main(*argv, cwd=tmp_path, env={"ASCEND_CUSTOM_OPP_PATH": str(SWISH_DIR)})
    assert run.rc == 0, run.text
    monkeypatch.setenv("ASCEND_CUSTOM_OPP_PATH", str(SWISH_DIR))
    model = ge.runtime.load(tmp_path / "swish.om")
    assert model.engines["swish"] == "AiCore"
    x = np.linspace(-3, 3, 6, dtype=np.float32).reshape(1, 6)
    np.testing.assert_allclose(model.run([x])[0], x / (1 + np.exp(-0.5 * x)), rtol=1e-5,
                               atol=1e-6)
