"""The ge.passes / ge.es surface of spec §3 and §5: exports, registration errors, hook
signature checks, Pattern/PatternInputs, helper types, ES argument conventions."""
from __future__ import annotations

import dataclasses

import pytest

import ge.passes as passes
from ge.es import GraphBuilder, TensorHolder
from ge.graph import DataType, Graph
from ge.passes import (DecomposePass, FusionBasePass, PassStage, PatternFusionPass,
                       PatternMatcherConfigBuilder, pattern, register_decompose_pass,
                       register_fusion_pass)

SPEC_ALL = {
    "FusionBasePass", "PatternFusionPass", "DecomposePass", "PassStage", "infer_shape",
    "PassContext", "MatchResult", "PatternMatcherConfig", "PatternMatcherConfigBuilder",
    "SubgraphInput", "SubgraphOutput", "SubgraphBoundary", "SubgraphRewriter", "Pattern",
    "NodeIo", "pattern", "create_pattern", "create_replacement", "register_fusion_pass",
    "register_decompose_pass", "get_registered_passes", "get_registered_pass_dicts",
    "get_registered_pass_by_descriptor_key", "clear_registered_passes", "FuseCheckResult",
    "can_fuse", "report_fuse"}


def test_exports_exact_and_resolvable():
    assert set(passes.__all__) == SPEC_ALL
    for name in SPEC_ALL:
        assert getattr(passes, name) is not None
    from ge.passes.pattern import NodeIo
    assert callable(passes.pattern) and passes.NodeIo is NodeIo
    from ge.passes import bootstrap, registry
    assert bootstrap.ENV_PY_PASS_PATH == "ASCEND_GE_PY_PASS_PATH"
    assert registry.PASS_KIND_DECOMPOSE == "decompose"


def test_pass_stage_values():
    assert [s.value for s in PassStage] == ["BeforeInferShape", "AfterInferShape",
                                            "AfterBuiltinFusionPass",
                                            "AfterOriginGraphOptimize"]
    assert PassStage.AFTER_INFER_SHAPE == "AfterInferShape"


def test_registration_descriptor_and_kinds():
    @register_fusion_pass(name="P1", stage=PassStage.BEFORE_INFER_SHAPE)
    class P1(PatternFusionPass):
        pass

    @register_fusion_pass(name="P2", stage=PassStage.AFTER_INFER_SHAPE)
    class P2(FusionBasePass):
        def run(self, graph, context):
            return None

    @register_decompose_pass(name="P3", stage=PassStage.AFTER_INFER_SHAPE, op_types=("Relu",))
    class P3(DecomposePass):
        pass

    descs = passes.get_registered_passes()
    assert [d.kind for d in descs] == ["pattern_fusion", "fusion_base", "decompose"]
    assert descs[0].descriptor_key == f"{P1.__module__}:P1:P1"
    assert P1.__ge_pass_descriptor__ is descs[0] and P3.op_types == ["Relu"]
    d = passes.get_registered_pass_dicts()[2]
    assert d["stage"] == "AfterInferShape" and d["op_types"] == ["Relu"]
    assert passes.get_registered_pass_by_descriptor_key(descs[1].descriptor_key) is descs[1]
    passes.clear_registered_passes()
    assert passes.get_registered_passes() == []


def test_registration_errors():
    with pytest.raises(TypeError, match="iterable of strings"):
        register_decompose_pass(name="x", stage=PassStage.AFTER_INFER_SHAPE, op_types="Relu")
    with pytest.raises(ValueError, match="at least one op type"):
        register_decompose_pass(name="x", stage=PassStage.AFTER_INFER_SHAPE, op_types=[])
    with pytest.raises(TypeError, match="non-empty strings"):
        register_decompose_pass(name="x", stage=PassStage.AFTER_INFER_SHAPE, op_types=[""])
    with pytest.raises(TypeError, match="register_fusion_pass expects a FusionBasePass"):
        register_fusion_pass(name="x", stage=PassStage.AFTER_INFER_SHAPE)(object)
    with pytest.raises(TypeError, match="register_decompose_pass expects a DecomposePass"):
        register_decompose_pass(name="x", stage=PassStage.AFTER_INFER_SHAPE,
                                op_types=["A"])(FusionBasePass)

    class A(FusionBasePass):
        pass

    class B(FusionBasePass):
        pass
    register_fusion_pass(name="dup", stage=PassStage.BEFORE_INFER_SHAPE)(A)
    with pytest.raises(ValueError, match="descriptor_key already exists"):
        register_fusion_pass(name="dup", stage=PassStage.BEFORE_INFER_SHAPE)(A)
    with pytest.raises(ValueError, match="name already exists"):
        register_fusion_pass(name="dup", stage=PassStage.BEFORE_INFER_SHAPE)(B)


@pytest.mark.parametrize("body,fragment", [
    ("def run(self, graph, context): pass", "overrides run()"),
    ("@pattern\ndef p(self, inputs): pass\ndef patterns(self): return []",
     "cannot combine @pattern methods with patterns"),
    ("@pattern\ndef p(self, inputs, extra): pass", "@pattern methods only support"),
    ("def meet_requirements(self): pass", "meet_requirements only supports"),
    ("def meet_requirements(self, a, b, c): pass", "meet_requirements only supports"),
    ("def replacement(self, m, a, b): pass", "replacement only supports"),
    ("def replacement(self, inputs, a, b, c): pass", "Expression-style replacement"),
    ("def replacement(self, inputs, a, b): pass", "four arguments"),
])
def test_class_definition_checks(body, fragment):
    namespace = {"PatternFusionPass": PatternFusionPass, "pattern": pattern}
    src = "class X(PatternFusionPass):\n" + "\n".join("    " + l for l in body.splitlines())
    with pytest.raises(TypeError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        exec(src, namespace)


def test_hook_adaptation_context_passed_only_when_declared():
    seen = []

    class X(PatternFusionPass):
        def meet_requirements(self, match_result):
            seen.append(("mr", match_result))
            return 1

        def replacement(self, inputs, context):
            seen.append(("rep", context))

    x = X()
    assert x.meet_requirements("m", "ctx") == 1
    x.replacement("in", "m", "ctx")
    assert seen == [("mr", "m"), ("rep", "ctx")]
    assert X._ge_replacement_style == "expression"

    class Y(PatternFusionPass):
        def replacement(self, inputs, match):      # third param not named context
            seen.append(("match", match))
    Y().replacement("in", "m", "ctx")
    assert seen[-1] == ("match", "m")

    class D(DecomposePass):
        def replacement(self, node, ctx):
            return (node, ctx)
    assert D().replacement("n", "c") == ("n", "c")
    with pytest.raises(TypeError, match="overrides run"):
        class E(DecomposePass):
            def run(self, graph, context):
                pass


def test_pattern_inputs_rules():
    from ge.passes.pattern import PatternInputs
    inputs = PatternInputs(GraphBuilder("p"))
    assert inputs[2].name == "input_2" and len(inputs) == 3
    assert [t.name for t in inputs[:2]] == ["input_0", "input_1"]
    for bad, exc in ((slice(None, None), ValueError), (slice(0, 3, 2), ValueError),
                     (-1, ValueError), ("a", TypeError)):
        with pytest.raises(exc):
            inputs[bad]
    with pytest.raises(TypeError):
        a, b = inputs


def test_pattern_method_captures_and_name():
    class X(PatternFusionPass):
        @pattern
        def swap(self, inputs):
            a, b = inputs[:2]
            return [b, a]
    [pat] = X().patterns()
    names = [(io.node.name, io.index) for io in pat.get_captured_tensors()]
    assert names == [("input_0", 0), ("input_1", 0), ("input_1", 0), ("input_0", 0)]
    assert pat.graph_name == "X_swap_pattern"
    pat.release()
    assert not pat.is_valid()
    with pytest.raises(RuntimeError, match="released"):
        pat.get_captured_tensors()


def test_pattern_method_rejects_pattern_list():
    class X(PatternFusionPass):
        @pattern
        def two(self, inputs):
            b = GraphBuilder("g")
            return [b.build_and_reset(), Graph("h")]
    with pytest.raises(TypeError, match="single pattern only"):
        X().patterns()


def test_pass_context_and_matcher_config():
    from ge.passes import PassContext, PatternMatcherConfig
    with pytest.raises(TypeError):
        PassContext()
    with pytest.raises(TypeError):
        PatternMatcherConfig()
    ctx = PassContext._create("P", {"ge.k": "v"})
    assert ctx.get_pass_name() == "P" and ctx.get_error_message() == ""
    ctx.set_error_message("bad")
    assert ctx.get_error_message() == "bad" and ctx.get_option_value("ge.k") == "v"
    with pytest.raises(RuntimeError, match="Failed to get option value for key: nope"):
        ctx.get_option_value("nope")
    cfg = PatternMatcherConfigBuilder().enable_ir_attr_match().build()
    assert (cfg.is_enable_const_value_match(), cfg.is_enable_ir_attr_match()) == (False, True)
    assert PatternFusionPass(cfg).matcher_config is cfg


def test_fuse_check_result_and_can_fuse():
    from ge.passes import FuseCheckResult, can_fuse, create_replacement
    r = FuseCheckResult(True)
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.ok = False
    assert FuseCheckResult(False, "x") == FuseCheckResult(False, "x")
    assert "empty" in can_fuse(iter(())).reason
    with pytest.raises(TypeError):
        can_fuse([1])
    with pytest.raises(TypeError):
        create_replacement(1)
    b = GraphBuilder("g")
    x = b.create_input(0)
    from ge.es.all import Relu
    r1 = Relu(x)
    r2 = Relu(r1)
    r3 = Relu(r2)
    g = b.build_and_reset([r3])
    n1, n2, n3 = (t._get_node_snapshot() for t in (r1, r2, r3))
    assert can_fuse([n1, n2]).ok
    assert can_fuse([n1, n3]).reason == "it will create cycle after fuse"
    n1.set_attr("_user_stream_label", "s1")
    n2.set_attr("_user_stream_label", "s2")
    res = can_fuse([n1, n2])
    assert not res.ok and "s1" in res.reason and "s2" in res.reason
    other = GraphBuilder("o")
    on = Relu(other.create_input(0))._get_node_snapshot()
    assert "different graphs" in can_fuse([n1, on]).reason
    assert g.name == "g"


# -- ge.es ---------------------------------------------------------------------------------
def test_es_builder_and_holder_rules():
    with pytest.raises(TypeError):
        GraphBuilder(3)
    with pytest.raises(RuntimeError):
        TensorHolder()
    b = GraphBuilder()
    assert b.name == "graph"
    x = b.create_input(0)
    s = b.create_const_float([1.0, 2.0, 3.0, 4.0], shape=[2, 2])
    assert list(s._get_node_snapshot().get_attr("value").shape) == [2, 2]
    with pytest.raises(ValueError):
        b.create_const_int64([1, 2, 3], shape=[2, 2])
    with pytest.raises(ValueError):
        b.create_scalar_uint32(-1)
    assert (0 + x)._get_node_snapshot().get_in_data_nodes_and_port_indexes(0)[0].name \
        == "input_0"                                   # __radd__ swaps: Add(x, 0)
    sub = (1 - x)._get_node_snapshot()
    assert sub.type == "Sub" and sub.get_in_data_nodes_and_port_indexes(1)[0].name == "input_0"
    c = (x + [[0.1, 0.1], [0.1, 0.1]])._get_node_snapshot()
    const = c.get_in_data_nodes_and_port_indexes(1)[0].get_attr("value")
    assert const.data_type == DataType.DT_FLOAT and list(const.shape) == [2, 2]
    k = (x * 2)._get_node_snapshot().get_in_data_nodes_and_port_indexes(1)[0].get_attr("value")
    assert k.data_type == DataType.DT_INT64 and list(k.shape) == []
    with pytest.raises(ValueError):
        x + [[1, 2], [3]]
    y = GraphBuilder("other").create_input(0)
    with pytest.raises(ValueError, match="different GraphBuilders"):
        x + y
    b.build_and_reset([x])
    with pytest.raises(RuntimeError, match="already been built"):
        b.create_input(1)


def test_es_generated_signatures():
    import inspect
    from ge.es.all import BatchMatMulV2, Concat, Conv2D, Const, MatMul, Relu, Split
    from ge.es.math import Add, ConcatV2, GEMM, Identity, TensorMove  # noqa: F401
    from ge.es.nn import Relu as NnRelu  # noqa: F401
    assert str(inspect.signature(MatMul)) == \
        "(x1, x2, bias=None, *, transpose_x1=False, transpose_x2=False)"
    assert str(inspect.signature(BatchMatMulV2)).startswith(
        "(x1, x2, bias=None, offset_w=None, *, adj_x1=False")
    assert list(inspect.signature(Split).parameters)[:3] == ["split_dim", "x", "y_num"]
    assert list(inspect.signature(Const).parameters)[0] == "owner_graph_builder"
    params = inspect.signature(Conv2D).parameters
    assert params["strides"].kind == inspect.Parameter.KEYWORD_ONLY
    assert params["strides"].default is inspect.Parameter.empty
    b = GraphBuilder("g")
    x = b.create_input(0, shape=[1, 4, 2, 2])
    parts = Split(1, x, 2, num_split=2)
    assert isinstance(parts, list) and len(parts) == 2
    cat = Concat(1, parts, N=2)._get_node_snapshot()
    assert cat.get_inputs_size() == 3 and cat.get_attr("N") == 2
    with pytest.raises(TypeError):
        Relu(1.0)
    with pytest.raises(ValueError):
        Add(1, 2)
    with pytest.raises(ImportError):
        from ge.es.custom import AddCustom  # noqa: F401
    import ge.es.all as all_mod
    assert "MatMul" in all_mod.__all__
