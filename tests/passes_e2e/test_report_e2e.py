"""fusion_result.json and ATC's warning report through `pyatc`: wall time on every pass, switched
-off passes (user and built-in) visible, an unknown pass name in a switch warned with WP0010
after the success line naming the closest registered names."""
from __future__ import annotations

from .conftest import CASES


def test_unknown_switch_name_gives_wp0010_after_success_line(e2e):
    run = e2e["s1_off"]      # switch string has PythonFuseMatMulAndAdPass (one "d" short)
    assert run.rc == 0, run.text
    lines = run.stdout.splitlines()
    success = lines.index("ATC run success, welcome to the next use.")
    warning = [i for i, line in enumerate(lines) if "WP0010" in line]
    assert warning and warning[0] > success, run.stdout
    text = lines[warning[0]]
    assert "PythonFuseMatMulAndAdPass" in text
    assert "closest registered names: PythonFuseMatMulAndAddPass" in text


def test_no_warning_for_known_names(e2e):
    assert "WP0010" not in e2e["s2_off"].text and "WP0010" not in e2e["late_builtin_off"].text


def test_builtin_pass_switched_off_is_visible(e2e):
    passes = e2e["s1_off"].graph_fusion()
    assert passes["ConvBatchNormFusionPass"]["switch"] == "off"
    assert passes["PythonFuseMatMulAndAddPass"]["switch"] == "off"
    assert "switch" not in passes["MatMulBiasAddFusionPass"]          # ran, found nothing
    assert "PythonFuseMatMulAndAdPass" not in passes                   # unknown: no entry


def test_wall_time_on_every_pass_entry_with_cann_fields(e2e):
    checked = 0
    for name, run in e2e.items():
        for record in run.records or []:
            assert set(record) == {"graph_fusion", "graph_name", "session_and_graph_id",
                                   "ub_fusion"}
            for pass_name, entry in record["graph_fusion"].items():
                assert {"match_times", "effect_times", "wall_time_us"} <= set(entry), entry
                assert int(entry["wall_time_us"]) >= 0
                traced = dict(CASES[name].env).get("GE_PASS_MATCH_TRACE") == "1"
                assert ("match_trace" in entry) == (traced and "switch" not in entry), \
                    (name, pass_name, entry)
                checked += 1
    assert checked > 50


def test_match_trace_names_candidates_and_closest_failure(e2e):
    entry = e2e["s3_const"].graph_fusion()["PythonMatmulAddFusionPass"]
    traces = {t["pattern"]: t for t in entry["match_trace"]}
    trace = traces["PythonMatmulAddFusionPass_matmul_add_pattern"]
    assert trace["candidates"] == 1 and trace["matches"] == 0
    closest = trace["closest_failures"][0]
    assert closest["rule"] == "const_value" and closest["candidate"]
