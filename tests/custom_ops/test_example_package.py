"""The example package (examples/custom_ops/swish): a model that fails with E13010 compiles
once the package adds com.example::Swish, runs with the package's compiled C kernel, compares
with the package's numpy reference, shows in --mode=1 JSON, --mode=6 and Netron, and is
refused by a runtime without the package."""
from __future__ import annotations

import json

import numpy as np
import pytest

from _netron import needs_netron, netron_view

from .conftest import ARGS
from ._packages import SWISH_DIR, swish_model

PACKAGE = "com.example.swish 1.0.0"


def test_unknown_op_is_e13010_pointing_to_custom_ops_doc(atc_main, tmp_path):
    source = swish_model(tmp_path / "swish.onnx")
    run = atc_main("--framework=5", f"--model={source}", "--output=swish", *ARGS, cwd=tmp_path)
    assert run.rc == 255 and "Traceback" not in run.text
    assert ("Invalid_Model_Operator_Not_Supported(E13010): No operator plugin is registered "
            "for Op: swish, optype: com.example::1::Swish.") in run.stdout
    last = [line for line in run.stdout.splitlines() if line.strip()][-1]
    assert last.strip() == ("To add an operator yourself, write a custom operator package: "
                            "see docs/custom-ops.md.")
    assert not (tmp_path / "swish.om").exists()


def test_package_op_compiles_runs_and_compares(swish_build, with_swish):
    import ge.runtime
    from ge.runtime.compare import compare_model
    assert swish_build.run.rc == 0, swish_build.run.text
    model = ge.runtime.load(swish_build.om)
    assert model.engines == {"relu": "AiCore", "swish": "AiCore", "add": "AiCore"}
    x = np.random.default_rng(1).standard_normal((2, 8)).astype(np.float32)
    r = np.maximum(x, 0)
    np.testing.assert_allclose(model.run([x])[0], r / (1 + np.exp(-1.5 * r)) + x, rtol=1e-6,
                               atol=1e-6)
    result = compare_model(swish_build.onnx, model, [x], dump=True)
    assert result.ok and [d.op_type for d in result.nodes] == ["Relu", "Swish", "Add"]
    assert all(d.ok for d in result.nodes)


def test_om_records_the_package_in_mode1_mode6_and_netron(swish_build, atc_main, tmp_path):
    run = atc_main("--mode=1", f"--om={swish_build.om}", "--json=m.json", cwd=tmp_path)
    assert run.rc == 0, run.text
    model = json.loads((tmp_path / "m.json").read_text())
    attrs = {a["key"]: a["value"] for a in model["attr"]}
    assert attrs["_custom_op_packages"]["list"]["s"] == [PACKAGE]
    (swish,) = [o for o in model["graph"][0]["op"] if o["type"] == "Swish"]
    op_attrs = {a["key"]: a["value"] for a in swish["attr"]}
    assert op_attrs["_custom_op_package"] == {"s": PACKAGE}
    assert op_attrs["alpha"] == {"f": 1.5} and op_attrs["_kernelname"]["s"].startswith("te_swish_")
    run = atc_main("--mode=6", f"--om={swish_build.om}", cwd=tmp_path)
    assert f"custom   info: custom operator packages[{PACKAGE}]." in run.stdout


@needs_netron
def test_netron_shows_the_custom_op(swish_build):
    (graph,) = netron_view(swish_build.om)["graphs"]
    assert [(n["name"], n["type"]) for n in graph["nodes"] if n["type"] != "Data"][:3] == [
        ("relu", "Relu"), ("swish", "Swish"), ("add", "Add")]


def test_runtime_without_the_package_refuses_the_model(swish_build, monkeypatch, capsys):
    import ge.runtime
    from ge.errors import GeError
    from ge.runtime.__main__ import main
    from ge.runtime._cli import guarded
    monkeypatch.delenv("ASCEND_CUSTOM_OPP_PATH", raising=False)
    with pytest.raises(GeError) as err:
        ge.runtime.load(swish_build.om)
    assert err.value.code == "EP0905"
    assert guarded(main, ["--model", str(swish_build.om)]) == 255
    assert capsys.readouterr().err == (
        "[ERROR] EP0905: The model uses op Swish of custom operator package com.example.swish "
        "1.0.0, which is not installed.\n")


def test_kernel_cache_key_includes_the_package_source(with_swish, tmp_path, monkeypatch):
    """The same node with the package's C source changed (a comment) is another kernel."""
    import shutil
    from ge.compiler.api import load_custom_ops
    from ge.compiler.opcompile.compile import kernel_task
    from ge.compiler.opcompile.signature import OpSignature, TensorSig
    t = TensorSig((2, 8), "DT_FLOAT")
    sig = OpSignature.make("Swish", [t], [t], {"alpha": 1.5})
    load_custom_ops()
    first = kernel_task(sig, "host")
    copy = shutil.copytree(SWISH_DIR, tmp_path / "swish_copy")
    (copy / "swish.c").write_text("/* edited */\n" + (copy / "swish.c").read_text())
    monkeypatch.setenv("ASCEND_CUSTOM_OPP_PATH", str(copy))
    load_custom_ops()
    second = kernel_task(sig, "host")
    assert first.name != second.name and "/* edited */" in second.source
    assert first.source.replace("#include", "") in second.source.replace("/* edited */\n", "") \
        .replace("#include", "")


def test_port_dtype_rule_is_a_coded_error(atc_main, tmp_path):
    from onnx import TensorProto
    source = swish_model(tmp_path / "swish_int.onnx", dtype=TensorProto.INT32)
    run = atc_main("--framework=5", f"--model={source}", "--output=swish_int", *ARGS,
                   cwd=tmp_path, env={"ASCEND_CUSTOM_OPP_PATH": str(SWISH_DIR)})
    assert run.rc == 255 and "Traceback" not in run.text
    assert ("Input x of op swish (Swish) has dtype DT_INT32; the op allows DT_FLOAT, "
            "DT_FLOAT16, DT_DOUBLE.") in run.stdout
    assert not (tmp_path / "swish_int.om").exists()
