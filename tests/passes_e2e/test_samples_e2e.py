"""Each sample pass re-creation loaded by the real `pyatc` on its model: the rewrite in the OM
(mode-1 JSON), its counts in fusion_result.json, the numbers before/after the pass against
onnxruntime (ONNX) or the reference interpreter on the source graph (AIR); the negative
variants of spec/python-passes.md §7 and the switched-off runs leave the graph as it was."""
from __future__ import annotations

import glob
from collections import Counter

import numpy as np
import onnx
import pytest

from ge.om import read_om
from ge.ops.interpreter import run_graph

from .conftest import CASES, MODELS, model_file, mode1

# Op types of each model compiled without a user rewrite (built-in passes still run).
UNTOUCHED = {
    "matmul_add": {"BatchMatMulV2": 1, "Add": 1, "Data": 3, "NetOutput": 1},
    "matmul_add_es_fp16": {"MatMul": 1, "Add": 1, "Data": 3, "NetOutput": 1},
    "matmul_const": {"MatMul": 1, "Add": 1, "Const": 1, "Data": 2, "NetOutput": 1},
    "matmul_const_transpose": {"MatMul": 1, "Add": 1, "Const": 1, "Data": 2, "NetOutput": 1},
    "matmul_const_other": {"MatMul": 1, "Add": 1, "Const": 1, "Data": 2, "NetOutput": 1},
    # ScalarElementwiseFoldingPass (built-in) turns Add(x, scalar const) into Adds
    "add_zero": {"Adds": 1, "Add": 1, "Data": 2, "NetOutput": 1},
    "add_one": {"Adds": 1, "Add": 1, "Data": 2, "NetOutput": 1},
    "grouped_conv": {"Conv2D": 1, "MaxPoolV3": 1, "Const": 1, "Data": 1, "NetOutput": 1},
    "concat_relu": {"ConcatV2": 1, "Relu": 1, "Const": 1, "Data": 3, "NetOutput": 1},
    "conv_transpose": {"Conv2D": 1, "Transpose": 2, "Adds": 1, "Const": 3, "Data": 1,
                       "NetOutput": 1},
}

# case -> (pass name, op-type counts that must appear, op types that must be gone,
#          (match_times, effect_times))
REWRITES = {
    "s1": ("PythonFuseMatMulAndAddPass", {"GEMM": 1}, {"BatchMatMulV2", "Add"}, (1, 1)),
    "s2": ("PythonFuseMatMulAndAddCaptureTensorPass", {"GEMM": 1}, {"BatchMatMulV2", "Add"},
           (1, 1)),
    "s2_es": ("PythonFuseMatMulAndAddCaptureTensorPass", {"GEMM": 1}, {"MatMul", "Add"},
              (1, 1)),
    "s3": ("PythonMatmulAddFusionPass", {"GEMM": 1}, {"MatMul", "Add"}, (1, 1)),
    "s4": ("PythonAddZeroPass", {"Add": 1}, {"Adds", "Const"}, (1, 1)),
    "s4c": ("PythonAddZeroConstValueMatchPass", {"Add": 1}, {"Adds", "Const"}, (1, 1)),
    "s6": ("PythonDecomposeGroupedConvToSplitedPass", {"Conv2D": 3, "Split": 1, "Concat": 1},
           set(), (1, 1)),
    "g2": ("PythonMoveReluBeforeConcatPass", {"Relu": 3, "ConcatV2": 1}, set(), (1, 1)),
    # both Transposes gone; the compiler's layout transfer wraps the NHWC Conv2D in TransposeD
    "g3": ("PythonConvTransFormatPass", {"Conv2D": 1, "TransposeD": 2}, {"Transpose"}, (2, 2)),
}

# negative case -> (pass name, (match_times, effect_times), trace rule that explains it or None)
NEGATIVES = {
    "s2_fp16": ("PythonFuseMatMulAndAddCaptureTensorPass", (1, 0), "meet_requirements"),
    "s3_transpose": ("PythonMatmulAddFusionPass", (0, 0), "ir_attr"),
    "s3_const": ("PythonMatmulAddFusionPass", (0, 0), "const_value"),
    "s4_nonzero": ("PythonAddZeroPass", (1, 0), None),
}

OFF = {"s1_off": "PythonFuseMatMulAndAddPass",
       "s2_off": "PythonFuseMatMulAndAddCaptureTensorPass",
       "s3_off": "PythonMatmulAddFusionPass",            # --fusion_switch_file, JSON format
       "s4_off": "PythonAddZeroPass",
       "s4c_off": "PythonAddZeroConstValueMatchPass",    # --fusion_switch_file, line format
       "s6_off": "PythonDecomposeGroupedConvToSplitedPass",
       "g2_off": "PythonMoveReluBeforeConcatPass",
       "g3_off": "PythonConvTransFormatPass"}


def counts(types) -> Counter:
    return Counter(types)


def compiled_ok(run):
    assert run.rc == 0 and run.om is not None, run.text
    assert "ATC run success" in run.stdout
    return run


def pass_entry(run, name) -> dict:
    entry = run.graph_fusion().get(name)
    assert entry is not None, f"{name} missing from fusion_result.json: {run.records}"
    return entry


# -- numbers ---------------------------------------------------------------------------------------
def _feeds_for_onnx(model: onnx.ModelProto, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    weights = {t.name for t in model.graph.initializer}
    feeds = []
    for value in model.graph.input:
        if value.name in weights:
            continue
        shape = [d.dim_value for d in value.type.tensor_type.shape.dim]
        feeds.append(rng.standard_normal(shape).astype(np.float32))
    return feeds


def _feeds_for_graph(graph, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    data = sorted(graph.data_nodes(), key=lambda n: int(n.attr("index", 0)))
    return [rng.standard_normal(list(n.out_desc(0).shape))
            .astype(np.float16 if n.out_desc(0).get_data_type().name == "DT_FLOAT16"
                    else np.float32) for n in data]


def check_numbers(run, e2e_models) -> None:
    """Reference execution before the pass (source graph) and after it (graph read back from
    the OM) agree, and with onnxruntime on the source model when it is ONNX."""
    case = CASES[run.name]
    path = model_file(e2e_models, case.model)
    after_graph = read_om(str(run.om)).to_graph()
    if MODELS[case.model][0] == 5:
        from ge.parser.onnx import parse_onnx
        ort = pytest.importorskip("onnxruntime")
        model = onnx.load(str(path))
        feeds = _feeds_for_onnx(model)
        names = [v.name for v in model.graph.input
                 if v.name not in {t.name for t in model.graph.initializer}]
        session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        expected = session.run(None, dict(zip(names, feeds)))
        before = run_graph(parse_onnx(str(path)), feeds)
    else:
        from ge.graph.serialize import load_air
        before_graph = load_air(str(path))
        feeds = _feeds_for_graph(before_graph)
        expected = before = run_graph(before_graph, feeds)
    after = run_graph(after_graph, feeds)
    tol = 1e-2 if feeds[0].dtype == np.float16 else 1e-5
    for want, got_before, got_after in zip(expected, before, after):
        np.testing.assert_allclose(np.asarray(got_before, np.float32),
                                   np.asarray(want, np.float32), rtol=tol, atol=tol)
        np.testing.assert_allclose(np.asarray(got_after, np.float32),
                                   np.asarray(want, np.float32), rtol=tol, atol=tol)


# -- rewrites --------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", sorted(REWRITES))
def test_sample_rewrites_through_pyatc(e2e, e2e_models, case):
    name, present, absent, (match, effect) = REWRITES[case]
    run = compiled_ok(e2e[case])
    types, _ = mode1(run.om)
    have = counts(types)
    assert {t: have[t] for t in present} == present, types
    assert not absent & set(types), types
    entry = pass_entry(run, name)
    assert (entry["match_times"], entry["effect_times"]) == (str(match), str(effect))
    assert "switch" not in entry
    check_numbers(run, e2e_models)


def test_sample_prints_reach_the_user(e2e):
    assert "Define replacement for FuseMatMulAndAddPass" in e2e["s1"].stdout
    assert ("[PythonAddZeroPass] matched=PythonAddZeroPass_add_zero_pattern captured=x:0 "
            "const_dtype=DT_FLOAT zero=True") in e2e["s4"].stdout
    assert "Replacement of PythonMoveReluBeforeConcatPass succeeded" in e2e["g2"].stdout


def test_decompose_keeps_groups_apart(e2e):
    """The three Conv2D of the grouped-conv split are group-1 convs over 2 channels each."""
    _, document = mode1(e2e["s6"].om)
    convs = [op for op in document["graph"][0]["op"] if op["type"] == "Conv2D"]
    assert len(convs) == 3
    for op in convs:
        attrs = {a["key"]: a["value"] for a in op["attr"]}
        assert int(attrs["groups"]["i"]) == 1, attrs["groups"]
        assert attrs["_fusion_pass_name"]["list"]["s"] == [
            "PythonDecomposeGroupedConvToSplitedPass"]


# -- negatives and switches ------------------------------------------------------------------------
@pytest.mark.parametrize("case", sorted(NEGATIVES))
def test_negative_variant_leaves_graph_unchanged(e2e, e2e_models, case):
    name, (match, effect), rule = NEGATIVES[case]
    run = compiled_ok(e2e[case])
    types, _ = mode1(run.om)
    assert counts(types) == UNTOUCHED[CASES[case].model], types
    entry = pass_entry(run, name)
    assert (entry["match_times"], entry["effect_times"]) == (str(match), str(effect))
    if rule is not None:     # traced: fusion_result.json says why at the closest candidate
        rules = {f["rule"] for t in entry["match_trace"] for f in t["closest_failures"]}
        assert rule in rules, entry["match_trace"]
    check_numbers(run, e2e_models)


def test_fp16_refusal_is_the_samples_own_message(e2e):
    assert ("Only support Add inputs are DT_FLOAT, got input0=DT_FLOAT16, input1=DT_FLOAT16"
            in e2e["s2_fp16"].stdout)


@pytest.mark.parametrize("case", sorted(OFF))
def test_switched_off_sample_leaves_graph_unchanged(e2e, e2e_models, case):
    run = compiled_ok(e2e[case])
    types, _ = mode1(run.om)
    assert counts(types) == UNTOUCHED[CASES[case].model], types
    entry = pass_entry(run, OFF[case])
    assert entry["switch"] == "off"
    assert (entry["match_times"], entry["effect_times"]) == ("0", "0")
    assert "Define pattern" not in run.stdout and "is starting" not in run.stdout
    check_numbers(run, e2e_models)


# -- g3: the rewrite at its stage, and the layout the compiler restores -------------------------
def test_conv_data_format_pass_rewrites_at_its_stage(e2e):
    """PythonConvTransFormatPass removes both transposes and marks the Conv2D NHWC (the graph
    dump after RunCustomPassBeforeInfershape); the OM keeps data_format NHWC."""
    run = compiled_ok(e2e["g3"])
    assert run.stdout.count("Remove output edges success") == 2, run.text
    pattern = run.work / "dump" / "**" / "ge_proto_*RunCustomPassBeforeInfershape*"
    dumps = glob.glob(str(pattern), recursive=True)
    assert dumps, run.text
    text = open(dumps[0]).read()
    assert "Transpose" not in text and "NHWC" in text, text
    _, document = mode1(run.om)
    conv = next(op for op in document["graph"][0]["op"] if op["type"] == "Conv2D")
    attrs = {a["key"]: a["value"] for a in conv["attr"]}
    assert attrs["data_format"]["s"] == "NHWC"
