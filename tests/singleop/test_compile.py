"""`--singleop`: one OM per op, named as ATC names them, each running on the host and matching
numpy; an op that fails beside ops that build; mode 1, mode 6, Netron; the entries agree."""
from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest

from _netron import needs_netron, netron_view
from _om_compare import assert_same_om_except_cmdline

import ge.runtime
from ge.compiler import api
from ge.om import read_om
from ge.runtime.__main__ import main as runtime_main
from ge.runtime._cli import guarded

from ._oplists import GOOD, MIXED, random_inputs, write
from .conftest import ARGS

SUCCESS = "ATC run success, welcome to the next use."


def test_every_op_is_one_om_named_as_atc_names_it(good):
    assert good.run.rc == 0, good.run.text
    assert SUCCESS in good.run.stdout
    assert sorted(p.name for p in good.out.iterdir()) == sorted(name for name, _, _ in GOOD)


@pytest.mark.parametrize("name,op,reference", GOOD, ids=[n for n, _, _ in GOOD])
def test_each_om_runs_on_the_host_and_matches_numpy(good, name, op, reference):
    inputs = random_inputs(op)
    model = ge.runtime.load(str(good.out / name))
    try:
        (got,) = model.run(inputs)
    finally:
        model.close()
    want = reference(*inputs)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_each_om_holds_the_op_between_data_and_netoutput(good):
    for name, op, _ in GOOD:
        om = read_om(str(good.out / name))
        graph = om.to_graph()
        data = [n for n in graph.nodes if n.type == "Data"]
        assert [n.type for n in graph.nodes if n.type not in ("Data", "Const")] == \
            [op["op"], "NetOutput"], name
        assert len(data) == len(random_inputs(op))
        node = graph.node(op.get("name") or op["op"])
        assert node is not None and node.type == op["op"]
        assert om.model_attr("GE_INNER_SINGLE_OP_TYPE") == op["op"]
        assert om.model_attr("_single_op_scene") is True


def test_the_runtime_command_line_runs_a_single_op_om(good, tmp_path, capsys):
    name, op, reference = GOOD[1]
    inputs = random_inputs(op, seed=3)
    files = []
    for k, array in enumerate(inputs):
        np.save(tmp_path / f"in{k}.npy", array)
        files.append(str(tmp_path / f"in{k}.npy"))
    rc = guarded(runtime_main, ["--model", str(good.out / name), "--input", ",".join(files),
                                "--output", str(tmp_path / "out")])
    assert rc == 0, capsys.readouterr()
    np.testing.assert_allclose(np.load(tmp_path / "out" / "output_0.npy"), reference(*inputs),
                               rtol=1e-5, atol=1e-5)


def test_mode1_renders_and_mode6_shows_a_single_op_om(good, atc_main, tmp_path):
    om = good.out / "matmul_t.om"
    run = atc_main("--mode=1", f"--om={om}", "--json=m.json", cwd=tmp_path)
    assert run.rc == 0, run.text
    model = json.loads((tmp_path / "m.json").read_text())
    (graph,) = model["graph"]
    assert [(o["name"], o["type"]) for o in graph["op"]] == [
        ("matmul_t_in_0", "Data"), ("matmul_t_in_1", "Data"), ("matmul_t", "MatMulV2"),
        ("matmul_t_Node_Output", "NetOutput")]
    attrs = {a["key"]: a["value"] for a in model["attr"]}
    assert attrs["GE_INNER_SINGLE_OP_TYPE"] == {"s": "MatMulV2"}
    run = atc_main("--mode=6", f"--om={om}", cwd=tmp_path)
    assert run.rc == 0, run.text
    assert f"Original Atc command line: pyatc --singleop={good.op_list}" in run.stdout


@needs_netron
def test_netron_opens_a_single_op_om(good):
    view = netron_view(good.out / "gemm_ta.om")
    assert view["format"] == "DaVinci OM"
    (graph,) = view["graphs"]
    assert [(n["name"], n["type"]) for n in graph["nodes"]] == [
        ("gemm_ta_in_0", "Data"), ("gemm_ta_in_1", "Data"), ("gemm_ta_in_2", "Data"),
        ("gemm_ta", "GEMM"), ("gemm_ta_Node_Output", "NetOutput")]
    assert set(graph["initializers"]) == {"gemm_ta_in_3:0", "gemm_ta_in_4:0"}


def test_an_op_that_fails_does_not_stop_the_others(mixed):
    run = mixed.run
    assert run.rc == 255 and "Traceback" not in run.text
    assert [p.name for p in mixed.out.iterdir()] == ["relu_ok.om"]
    assert (f"Single_Op_Build_Failed(EP0700): 4 of the 5 ops in {mixed.op_list} failed to "
            "compile: add_rank (entry 0), add_mismatch (entry 1), add_wrong_output (entry 3), "
            "relu_5hd (entry 4).") in run.stdout
    assert ("add_rank (entry 0): EP0002 Op add_rank (Add, entry 0): input 0 of unknown rank "
            "[-2] is not supported by this implementation.") in run.stdout
    assert "add_mismatch (entry 1): " in run.stdout and "[2, 3], [4, 5]" in run.stdout
    assert ("add_wrong_output (entry 3): E13014 Value [3, 2] of parameter output_desc[0].shape "
            "for Op add_wrong_output is invalid. Reason: op type Add gives [2, 3] for the "
            "inputs in input_desc.") in run.stdout
    assert ("relu_5hd (entry 4): EP0002 Op relu_5hd (Relu, entry 4): input 0 in format "
            "NC1HWC0 is not supported by this implementation.") in run.stdout


def test_the_single_op_option_map(atc_main, tmp_path, monkeypatch):
    """spec/atc-cli.md §8.3: the single-op keys, and raw-option-only keys are not merged."""
    seen = []
    build = api.build_graph
    monkeypatch.setattr(api, "build_graph",
                        lambda graph, options, framework=5: seen.append(options) or
                        build(graph, options, framework))
    (tmp_path / "raw.json").write_text(json.dumps(
        {"compile options": {"global": {"ge.exec.exclude_engines": "AiCore"}}}))
    op_list = write(tmp_path / "ops.json", [MIXED[2]])
    run = atc_main(f"--singleop={op_list}", "--output=out", *ARGS, "--raw_ge_options=raw.json",
                   cwd=tmp_path)
    assert run.rc == 0, run.text
    (options,) = seen
    for key, value in (("ge.exec.single_op", "1"), ("ge.exec.hcclFlag", "0"),
                       ("ge.streamNum", "1"), ("ge.buildGraphMode", "offline"),
                       ("ge.exec.precision_mode", "must_keep_origin_dtype")):
        assert options[key] == value
    assert "ge.exec.exclude_engines" not in options and "ge.optimizationSwitch" not in options


def test_atc_and_pyatc_write_the_same_oms(entry_argv, entry_env, shared_kernel_cache,
                                          tmp_path):
    op_list = write(tmp_path / "ops.json", [op for _, op, _ in GOOD[:2]])
    for entry in ("atc", "pyatc"):
        done = subprocess.run(entry_argv(entry) + [f"--singleop={op_list}",
                                                   f"--output={entry}_out", *ARGS,
                                                   f"--op_compiler_cache_dir={shared_kernel_cache}"],
                              cwd=tmp_path, env=entry_env, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
    for name, _, _ in GOOD[:2]:
        assert_same_om_except_cmdline(tmp_path / "atc_out" / name, tmp_path / "pyatc_out" / name)
