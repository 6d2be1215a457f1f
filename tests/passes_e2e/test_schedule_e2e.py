"""Scheduling as the user sees it through `pyatc`: passes of one stage in name order whatever
the file order, each of the 4 stages once per compile, root graph then subgraphs with one
instance; and the built-in MatMul+Add bias fusion running before AfterBuiltinFusionPass."""
from __future__ import annotations

from collections import Counter

from .conftest import mode1
from .test_samples_e2e import check_numbers

STAGES = ["BeforeInferShape", "AfterInferShape", "AfterBuiltinFusionPass",
          "AfterOriginGraphOptimize"]


def records(run):
    assert run.rc == 0, run.text
    rows = [line.split()[1:] for line in run.stdout.splitlines()
            if line.startswith("[e2e-record]")]
    return [tuple(row) for row in rows]        # (stage, pass, graph, instance id)


def test_stages_run_in_order_once_per_compile(e2e):
    rows = records(e2e["schedule"])
    seen = []
    for stage, *_ in rows:
        if not seen or seen[-1] != stage:
            seen.append(stage)
    assert seen == STAGES
    per_pass_graph = Counter((p, g) for _, p, g, _ in rows)
    assert set(per_pass_graph.values()) == {1}, per_pass_graph


def test_same_stage_passes_run_in_name_order_not_file_order(e2e):
    # a_record_z.py (scanned first) registers E2eRecordZ; b_record_stages.py registers
    # E2eRecordA after it: name order wins.
    rows = [r for r in records(e2e["schedule"]) if r[0] == "BeforeInferShape"]
    order = list(dict.fromkeys(p for _, p, _, _ in rows))
    assert order == ["E2eRecordA", "E2eRecordBeforeInferShape", "E2eRecordZ"]


def test_root_graph_then_subgraphs_with_one_instance(e2e):
    rows = records(e2e["schedule"])
    by_pass = {}
    for _, name, graph, instance in rows:
        by_pass.setdefault(name, []).append((graph, instance))
    assert len(by_pass) == 6
    instances = set()
    for name, runs in by_pass.items():
        graphs = [g for g, _ in runs]
        assert graphs[0] == "schedule" and len(graphs) == 3, runs      # root, then 2 branches
        assert len({i for _, i in runs}) == 1, runs                     # one instance
        instances.add(runs[0][1])
    assert len(instances) == 6                                          # new one per pass


def test_builtin_bias_fusion_runs_before_after_builtin_fusion_stage(e2e, e2e_models):
    """CANN runs every engine's built-in graph fusion before AfterBuiltinFusionPass (spec
    python-passes.md §6.1): a MatMul + bias-vector model is already fused when a user pass of
    that stage looks; switching the built-in pass off lets the user pass fuse it."""
    on, off = e2e["late"], e2e["late_builtin_off"]
    passes = on.graph_fusion()
    assert passes["MatMulBiasAddFusionPass"]["effect_times"] == "1"
    assert passes["E2eLateMatMulAddPass"]["match_times"] == "0"
    assert "GEMM" not in mode1(on.om)[0] and "Add" not in mode1(on.om)[0]
    passes = off.graph_fusion()
    assert passes["MatMulBiasAddFusionPass"]["switch"] == "off"
    assert passes["E2eLateMatMulAddPass"]["effect_times"] == "1"
    assert "GEMM" in mode1(off.om)[0] and "BatchMatMulV2" not in mode1(off.om)[0]
    check_numbers(on, e2e_models)
    check_numbers(off, e2e_models)
