"""A float16 hazard (a layer norm over raw features near 3000): force_fp16 fails the
comparison, `python3 -m ge.runtime.compare --dump` names the layer norm and the --keep_dtype
line that pins it, and that line makes the model pass.  The precision options work the same as
ATC flags, in --raw_ge_options and through ge.offline_compile; what the stage decided shows in
--mode=1 JSON, --mode=6, --display_model_info, the stage dumps and Netron."""
from __future__ import annotations

import contextlib
import io
import json

import numpy as np
import onnx
import pytest

from _models import hazard_inputs, hazard_model
from _netron import needs_netron, netron_view
from _om_compare import assert_same_om_except_cmdline
from _samples import SAMPLE_SOC
from ge.graph.attr_names import ATTR_PRECISION
from ge.offline_compile import build_model, save_model
from ge.parser.onnx import parse_onnx
from ge.runtime.compare import main as compare_main


@pytest.fixture(scope="module")
def hazard(tmp_path_factory, atc_main):
    """(work dir, ONNX path, input .npy, compile(output, *flags) -> OM path)."""
    work = tmp_path_factory.mktemp("hazard")
    onnx.save(hazard_model(), str(work / "hazard.onnx"))
    np.save(work / "x.npy", hazard_inputs()[0])

    def compile_(output: str, *flags: str):
        """Compile into work/<output>/m.om (one OM name: the header records it)."""
        (work / output).mkdir()
        run = atc_main("--framework=5", f"--model={work / 'hazard.onnx'}",
                       f"--output={work / output / 'm'}", f"--soc_version={SAMPLE_SOC}",
                       *flags, cwd=work)
        assert run.rc == 0, run.text
        return work / output / "m.om"
    return work, work / "hazard.onnx", work / "x.npy", compile_


def _compare(*args: str) -> tuple:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = compare_main(list(args))
    return rc, out.getvalue()


def test_force_fp16_fails_dump_names_the_op_and_its_keep_line_fixes_it(hazard):
    work, model, x, compile_ = hazard
    om = compile_("fp16", "--precision_mode=force_fp16")
    rc, text = _compare("--onnx", str(model), "--om", str(om), "--input", str(x), "--dump")
    assert rc != 0 and "result: FAIL" in text, text
    line = next(l for l in text.splitlines() if "--keep_dtype file:" in l)
    assert "float16, white list" in line
    divergence = next(l for l in text.splitlines() if l.startswith("first divergence"))
    assert "(LayerNorm)" in divergence
    keep = line.rsplit(": ", 1)[1]
    assert keep == "ln"
    (work / "keep.cfg").write_text(keep + "\n")
    fixed = compile_("kept", "--precision_mode=force_fp16", "--keep_dtype=keep.cfg")
    rc, text = _compare("--onnx", str(model), "--om", str(fixed), "--input", str(x), "--dump")
    assert rc == 0 and "result: PASS" in text and "no divergence" in text, text
    rc, text = _compare("--om", str(fixed), "--precision_report")
    rows = {l.split()[0]: l.split()[1:] for l in text.splitlines()[2:]}
    assert text.splitlines()[1].split()[-2:] == ["float32", "float16"]
    assert rows["LayerNorm"] == ["white", "1", "0"] and rows["SoftmaxV2"] == ["white", "0", "1"]


def test_flag_raw_options_and_offline_compile_give_one_om(hazard, atc_main):
    work, model, _, compile_ = hazard
    (work / "keep.cfg").write_text("ln\n")
    by_flag = compile_("by_flag", "--precision_mode=allow_mix_precision_bf16",
                       "--keep_dtype=keep.cfg")
    options = {"ge.exec.precision_mode_v2": "mixed_bfloat16", "keep_dtype": "keep.cfg"}
    (work / "raw.json").write_text(json.dumps({"compile options": {"global": options}}))
    by_raw = compile_("by_raw", "--raw_ge_options=raw.json")
    by_v2 = compile_("by_v2", "--precision_mode_v2=mixed_bfloat16", "--keep_dtype=keep.cfg")
    assert_same_om_except_cmdline(by_raw, by_v2)
    graph = parse_onnx(str(model), {"ge.socVersion": SAMPLE_SOC})
    api = build_model(graph, {"ge.socVersion": SAMPLE_SOC,
                              "ge.exec.precision_mode": "allow_mix_precision_bf16",
                              "keep_dtype": str(work / "keep.cfg")})
    (work / "by_api").mkdir()
    save_model(str(work / "by_api" / "m"), api)
    _same_graph_and_weights(by_flag, work / "by_api" / "m.om")


def _same_graph_and_weights(a, b) -> None:
    """ge.offline_compile names the model after its graph; everything compiled is equal."""
    from ge.om import read_om
    om_a, om_b = read_om(str(a)), read_om(str(b))
    assert om_a.weights == om_b.weights and list(om_a.kernels) == list(om_b.kernels)
    ga, gb = om_a.model_def.graph[0], om_b.model_def.graph[0]
    assert [op.SerializeToString(deterministic=True) for op in ga.op] == \
        [op.SerializeToString(deterministic=True) for op in gb.op]
    from ge.graph.attr_names import ATTR_MODEL_DTYPE_COUNTS, ATTR_MODEL_PRECISION
    for key in (ATTR_MODEL_PRECISION, ATTR_MODEL_DTYPE_COUNTS):
        assert om_a.model_attr(key) == om_b.model_attr(key)


def test_mode1_mode6_display_model_info_and_dumps_show_the_decisions(hazard, atc_main, tmp_path):
    work, _, _, compile_ = hazard
    env = {"DUMP_GE_GRAPH": "1", "DUMP_GRAPH_PATH": str(tmp_path / "dumps"),
           "DUMP_GRAPH_LEVEL": "1"}
    run = atc_main("--framework=5", f"--model={work / 'hazard.onnx'}", "--output=shown",
                   f"--soc_version={SAMPLE_SOC}", "--precision_mode=cube_fp16in_fp32out",
                   "--display_model_info=1", cwd=tmp_path, env=env)
    assert run.rc == 0, run.text
    expect = ("precision info: precision_mode[cube_fp16in_fp32out], float ops per dtype: "
              "float16[1], float32[2].")
    assert expect in run.stdout.splitlines()
    mode6 = atc_main("--mode=6", f"--om={tmp_path / 'shown.om'}", cwd=tmp_path)
    assert mode6.rc == 0 and expect in mode6.stdout.splitlines()
    assert atc_main("--mode=1", f"--om={tmp_path / 'shown.om'}", "--json=m.json",
                    cwd=tmp_path).rc == 0
    ops = json.loads((tmp_path / "m.json").read_text())["graph"][0]["op"]
    shown = {op["type"]: {kv["key"]: kv["value"] for kv in op["attr"]}[ATTR_PRECISION]["s"]
             for op in ops if any(kv["key"] == ATTR_PRECISION for kv in op.get("attr", []))}
    assert shown["BatchMatMulV2"] == "dtype=float16 list=white by=cube_fp16in_fp32out"
    assert shown["LayerNorm"] == "dtype=float32 list=white by=cube_fp16in_fp32out"
    matmul = next(op for op in ops if op["type"] == "BatchMatMulV2")
    assert matmul["input_desc"][0]["dtype"] == "DT_FLOAT16"
    assert matmul["output_desc"][0]["dtype"] == "DT_FLOAT"          # fp16 in, fp32 out
    (directory,) = (tmp_path / "dumps").iterdir()
    (after,) = directory.glob("ge_proto_*_DtypeAssignment.txt")
    assert "dtype=float16 list=white by=cube_fp16in_fp32out" in after.read_text()


@needs_netron
def test_netron_sees_the_decision(hazard):
    _, _, _, compile_ = hazard
    (graph,) = netron_view(compile_("netron", "--precision_mode=force_fp16"))["graphs"]
    decided = [n for n in graph["nodes"] if ATTR_PRECISION in n["attributes"]]
    assert {n["type"] for n in decided} == {"LayerNorm", "BatchMatMulV2", "SoftmaxV2"}


def test_the_stage_knows_every_mode_the_flag_table_accepts():
    """The flag table (ge.atc.flags) and the stage's policies (ge.compiler.precision.modes)
    name the same values: the compiler does not import ATC, so this test keeps them one list."""
    from ge.atc.flags import flag
    from ge.compiler.precision.modes import POLICIES, V2_TO_V1
    assert set(flag("precision_mode").choices) == set(POLICIES)
    refused = {"cube_hif8", "mixed_hif8"}            # EP0002 on the host (no HiFloat8)
    assert set(flag("precision_mode_v2").choices) == set(V2_TO_V1) | refused
