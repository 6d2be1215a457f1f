"""run_stage: order, instances, return mapping, failure codes, switches, report, tracing."""
from __future__ import annotations

import json

import pytest

from ge import errors
from ge.errors import GeError
from ge.es import GraphBuilder
from ge.es.all import Identity, Relu
from ge.graph import Graph
from ge.passes import (DecomposePass, FusionBasePass, PassStage, PatternFusionPass, pattern,
                       register_decompose_pass, register_fusion_pass)
from ge.passes.report import FusionReport, write_fusion_result
from ge.passes.runner import run_stage
from ge.passes.switches import PassSwitches, parse_switch_string

BIS = PassStage.BEFORE_INFER_SHAPE


def simple_graph(name="g"):
    b = GraphBuilder(name)
    return b.build_and_reset([Relu(Identity(b.create_input(0)))])


def base_pass(name, result=None, log=None, stage=BIS):
    @register_fusion_pass(name=name, stage=stage)
    class P(FusionBasePass):
        def __init__(self):
            if log is not None:
                log.append(("init", name))

        def run(self, graph, context):
            if log is not None:
                log.append(("run", name, graph.name, id(self)))
            if isinstance(result, Exception):
                raise result
            return result
    return P


def test_order_by_name_one_instance_root_then_subgraphs():
    log = []
    base_pass("b_pass", log=log)
    base_pass("A_pass", log=log)
    base_pass("other_stage", log=log, stage=PassStage.AFTER_INFER_SHAPE)
    g = simple_graph("root")
    sub = simple_graph("sub")
    relu = [n for n in g.nodes if n.type == "Relu"][0]
    g.add_subgraph(sub, relu)
    orphan = simple_graph("orphan")
    ident = [n for n in g.nodes if n.type == "Identity"][0]
    g.add_subgraph(orphan, ident)
    src = ident.input(0)
    g.remove_node(ident)                     # its subgraph is orphaned: passes skip it
    g.connect(src[0], src[1], relu, 0)
    run_stage(g, BIS, {}, FusionReport())
    runs = [e for e in log if e[0] == "run"]
    assert [(e[1], e[2]) for e in runs] == [("A_pass", "root"), ("A_pass", "sub"),
                                           ("b_pass", "root"), ("b_pass", "sub")]
    assert runs[0][3] == runs[1][3]
    assert [e for e in log if e[0] == "init"] == [("init", "A_pass"), ("init", "b_pass")]


@pytest.mark.parametrize("result", [None, True, 0])
def test_success_results(result):
    """None, True and 0 all mean success: the pass ran once, nothing failed or was changed."""
    log = []
    base_pass("P", result, log=log)
    graph = simple_graph()
    before = str(graph)
    errors.take_warnings()
    run_stage(graph, BIS, {}, FusionReport())
    assert [e[:3] for e in log if e[0] == "run"] == [("run", "P", "g")]
    assert str(graph) == before
    assert errors.take_warnings() == []


@pytest.mark.parametrize("result,retcode,fragment", [
    (False, "4294967295", "run() returned False"),
    (7, "7", "status 7"),
    ("yes", "4294967295", "python pass returned unsupported type: str"),
    (ValueError("broken"), "4294967295", "ValueError: broken"),
])
def test_failure_results_raise_e13028_with_location(result, retcode, fragment):
    base_pass("Failing", result)
    with pytest.raises(GeError) as info:
        run_stage(simple_graph(), BIS, {}, FusionReport())
    err = info.value
    assert err.code == "E13028" and err.params["retcode"] == retcode
    assert fragment in err.message and "Failing" in err.message
    assert "test_runner.py:" in err.message and "stage BeforeInferShape" in err.message


def test_failure_status_points_at_the_run_def():
    @register_fusion_pass(name="StatusLine", stage=BIS)
    class P(FusionBasePass):
        def run(self, graph, context):
            return 3
    line = P.run.__code__.co_firstlineno
    with pytest.raises(GeError) as info:
        run_stage(simple_graph(), BIS, {}, FusionReport())
    assert f"test_runner.py:{line}," in info.value.message


def test_context_error_message_is_the_reason():
    @register_fusion_pass(name="Ctx", stage=BIS)
    class P(FusionBasePass):
        def run(self, graph, context):
            context.set_error_message("my own reason")
            return False
    with pytest.raises(GeError, match="my own reason"):
        run_stage(simple_graph(), BIS, {}, FusionReport())


def test_pattern_pass_soft_failures_do_not_fail():
    @register_fusion_pass(name="BadPatterns", stage=BIS)
    class P(PatternFusionPass):
        def patterns(self):
            raise RuntimeError("no patterns today")

    @register_fusion_pass(name="RaisingMeet", stage=BIS)
    class Q(PatternFusionPass):
        @pattern
        def p(self, inputs):
            return Relu(inputs[0])

        def meet_requirements(self, match_result):
            raise KeyError("x")

        def replacement(self, inputs):
            return inputs[0]
    g = simple_graph()
    before = str(g)
    report = FusionReport(trace=True)
    run_stage(g, BIS, {}, report)
    assert str(g) == before
    trace = report.graphs["g"]["RaisingMeet"].traces[0]
    assert trace.closest[0]["rule"] == "meet_requirements"
    assert "KeyError" in trace.closest[0]["detail"]


def test_replacement_returning_none_fails_pass():
    @register_fusion_pass(name="NoneRep", stage=BIS)
    class P(PatternFusionPass):
        @pattern
        def p(self, inputs):
            return Relu(inputs[0])

        def replacement(self, match_result):
            return None
    with pytest.raises(GeError, match="must return ge.graph.Graph"):
        run_stage(simple_graph(), BIS, {}, FusionReport())


def test_decompose_replacement_count_mismatch_fails():
    @register_decompose_pass(name="Dec", stage=BIS, op_types=["Relu"])
    class D(DecomposePass):
        def replacement(self, node):
            b = GraphBuilder("r")
            x, y = b.create_inputs(2)
            return b.build_and_reset([x + y])
    with pytest.raises(GeError, match="2 Data nodes but the boundary has 1 inputs"):
        run_stage(simple_graph(), BIS, {}, FusionReport())


def test_dead_pattern_cached_on_self_matches_nothing():
    @register_fusion_pass(name="Cached", stage=BIS)
    class P(PatternFusionPass):
        def patterns(self):
            if not hasattr(self, "_p"):
                b = GraphBuilder("p")
                from ge.passes import create_pattern
                self._p = create_pattern(b.build_and_reset([Relu(b.create_input(0))]))
            return [self._p]

        def replacement(self, inputs):
            return inputs[0]
    g = simple_graph("root")
    g.add_subgraph(simple_graph("sub"), [n for n in g.nodes if n.type == "Relu"][0])
    run_stage(g, BIS, {}, FusionReport())
    assert "Relu" not in [n.type for n in g.nodes]                      # root: fused
    assert "Relu" in [n.type for n in g.get_subgraph("sub").nodes]       # sub: dead pattern


def test_self_recreating_pattern_is_stopped():
    @register_fusion_pass(name="Loop", stage=BIS)
    class P(PatternFusionPass):
        @pattern
        def p(self, inputs):
            return Relu(inputs[0])

        def replacement(self, inputs):
            return Relu(inputs[0])
    with pytest.raises(GeError, match="keeps matching its own replacement"):
        run_stage(simple_graph(), BIS, {}, FusionReport())


# -- switches ---------------------------------------------------------------------------------
def test_switch_string_syntax():
    table, bad = parse_switch_string("A:on;B:off;C;:on;D:ON;A:off;E:on:x")
    assert table == {"A": "off", "B": "off"} and bad == ["C", ":on", "D:ON", "E:on:x"]


def test_switch_string_beats_file_and_specific_beats_all(tmp_path):
    f = tmp_path / "s.json"
    f.write_text(json.dumps({"Switch": {"GraphFusion": {"ALL": "off", "B": "on"}}}))
    sw = PassSwitches.from_options({"ge.optimizationSwitch": "C:on",
                                    "ge.fusionSwitchFile": str(f)})
    assert (sw.enabled("A"), sw.enabled("B"), sw.enabled("C")) == (False, True, True)


def test_legacy_switch_file_and_errors(tmp_path):
    f = tmp_path / "s.cfg"
    f.write_text("A:off\n\n B : on \n")
    sw = PassSwitches.from_options({"ge.fusionSwitchFile": str(f)})
    assert (sw.enabled("A"), sw.enabled("B")) == (False, True)
    for text in ("A:maybe\n", "A:on\nA:off\n", "", '{"Other": {}}',
                 '{"Switch": {"GraphFusion": {"A": 1}}}'):
        f.write_text(text)
        with pytest.raises(GeError) as info:
            PassSwitches.from_options({"ge.fusionSwitchFile": str(f)})
        assert info.value.code == "E10001"
    with pytest.raises(GeError):
        PassSwitches.from_options({"ge.fusionSwitchFile": str(tmp_path / "missing.json")})


def test_untrimmed_on_quirk(tmp_path):
    f = tmp_path / "s.json"
    f.write_text(json.dumps({"Switch": {"GraphFusion": {"A": " on"}}}))
    assert not PassSwitches.from_options({"ge.fusionSwitchFile": str(f)}).enabled("A")


def test_builtin_forbidden_close():
    sw = PassSwitches.from_options({"ge.optimizationSwitch": "forbidden_close_pass:on",
                                    "ge.oo.level": "O1"})
    assert sw.enabled("X", builtin=True, forbidden_close=True)
    assert not sw.enabled("Y", builtin=True)
    sw = PassSwitches.from_options({"ge.optimizationSwitch": "forbidden_close_pass:off"})
    assert not sw.enabled("X", builtin=True, forbidden_close=True)


def test_switched_off_pass_not_instantiated_and_unknown_name_warned():
    log = []
    base_pass("FusePass", log=log)
    errors.take_warnings()
    run_stage(simple_graph(), BIS, {"ge.optimizationSwitch": "FusePass:off;FusPass:on;"
                                                             "forbidden_close_pass:on"},
              FusionReport())
    assert log == []
    warnings = errors.take_warnings()
    assert len(warnings) == 1 and "FusPass" in warnings[0].message
    assert "closest registered names: FusePass" in warnings[0].message


def test_builtin_registration_runs_beside_user_passes():
    log = []

    @register_fusion_pass(name="BuiltinOne", stage=BIS, builtin=True)
    class B(FusionBasePass):
        def run(self, graph, context):
            log.append("builtin")
    from ge.passes import get_registered_passes
    assert get_registered_passes() == []
    run_stage(simple_graph(), BIS, {}, FusionReport())
    assert log == ["builtin"]


# -- report -----------------------------------------------------------------------------------
def test_fusion_result_json(tmp_path):
    @register_fusion_pass(name="Strip", stage=BIS)
    class P(PatternFusionPass):
        @pattern
        def p(self, inputs):
            return Identity(inputs[0])

        def replacement(self, inputs):
            return inputs[0]
    report = FusionReport()
    run_stage(simple_graph("net"), BIS, {}, report)
    path = write_fusion_result(report, str(tmp_path))
    assert path.startswith(str(tmp_path / "FE")) and path.endswith("fusion_result.json")
    records = json.loads(open(path).read())
    entry = records[0]["graph_fusion"]["Strip"]
    assert {k: entry[k] for k in ("effect_times", "match_times")} == {"effect_times": "1",
                                                                      "match_times": "1"}
    assert int(entry["wall_time_us"]) >= 0 and "match_trace" not in entry
    assert records[0]["session_and_graph_id"] == "0_0"


def test_trace_option_records_closest_failure():
    @register_fusion_pass(name="Tr", stage=BIS)
    class P(PatternFusionPass):
        @pattern
        def p(self, inputs):
            return Relu(Relu(inputs[0]))

        def replacement(self, inputs):
            return inputs[0]
    report = FusionReport()
    run_stage(simple_graph(), BIS, {"ge.passMatchTrace": "1"}, report)
    trace = report.graphs["g"]["Tr"].traces[0]
    assert trace.candidates == 1 and trace.closest[0]["rule"] == "op_type"
    assert "Identity" in trace.closest[0]["detail"]
