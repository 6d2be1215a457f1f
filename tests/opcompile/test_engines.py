"""Engine placement: priorities, exclude_engines tokens, core type, EZ3003, kept assignments."""
import pytest

import ge.errors
from ge.compiler.engines import (ATTR_ENGINE, ATTR_KERNEL_LIB, ATTR_OP_KERNEL_LIB,
                                 excluded_engines, place_engines)
from ge.errors import GeError
from ge.graph.types import DataType
from opcompile_graphs import conv_relu_graph


def engines_of(g):
    return {n.name: n.attr(ATTR_ENGINE) for n in g.nodes}


@pytest.fixture(autouse=True)
def clear_warnings():
    ge.errors.take_warnings()
    yield
    ge.errors.take_warnings()


def test_default_prefers_aicore_and_ge_local_for_structural_ops():
    g = conv_relu_graph()
    place_engines(g, {})
    assert engines_of(g) == {"x": "DNN_VM_GE_LOCAL", "w": "DNN_VM_GE_LOCAL",
                             "conv": "AIcoreEngine", "relu0": "AIcoreEngine",
                             "out": "DNN_VM_GE_LOCAL"}
    conv = g.node("conv")
    assert conv.attr(ATTR_KERNEL_LIB) == conv.attr(ATTR_OP_KERNEL_LIB) == "AIcoreEngine"
    assert g.node("x").attr(ATTR_OP_KERNEL_LIB) == "DNN_VM_GE_LOCAL_OP_STORE"


@pytest.mark.parametrize("value", ["AiCore", "AiCore|AiVec", " AiCore | AiVector |"])
def test_excluding_aicore_moves_compute_ops_to_aicpu(value):
    g = conv_relu_graph()
    place_engines(g, {"ge.exec.exclude_engines": value})
    assert engines_of(g)["conv"] == "DNN_VM_AICPU"
    assert g.node("conv").attr(ATTR_OP_KERNEL_LIB) == "aicpu_tf_kernel"
    assert ge.errors.take_warnings() == []


def test_vector_core_type_uses_vector_engine():
    g = conv_relu_graph()
    place_engines(g, {"ge.engineType": "VectorCore"})
    assert engines_of(g)["relu0"] == "VectorEngine"
    assert excluded_engines({"ge.engineType": "VectorCore"}) == {"AIcoreEngine"}
    assert excluded_engines({}) == {"VectorEngine"}


def test_unknown_token_warns_and_is_ignored():
    g = conv_relu_graph()
    place_engines(g, {"ge.exec.exclude_engines": "AiCore|aicpu|Bogus"})
    warnings = ge.errors.take_warnings()
    assert [w.code for w in warnings] == ["WP0110", "WP0110"]
    assert "aicpu" in warnings[0].message and "Bogus" in warnings[1].message
    assert engines_of(g)["conv"] == "DNN_VM_AICPU"      # case-sensitive: aicpu is not AiCpu


def test_all_supporting_engines_excluded_is_ez3003():
    g = conv_relu_graph()
    with pytest.raises(GeError) as exc:
        place_engines(g, {"ge.exec.exclude_engines": "AiCore|AiCpu"})
    assert exc.value.code == "EZ3003"
    assert "conv (Conv2D)" in exc.value.message


def test_fp16_runs_on_aicore_and_unsupported_dtypes_fall_back_with_reason_in_ez3003():
    g = conv_relu_graph(DataType.DT_FLOAT16)
    place_engines(g, {})
    assert engines_of(g)["conv"] == "AIcoreEngine"      # through the float32 kernel (lowprec)
    g2 = conv_relu_graph(DataType.DT_INT32)
    with pytest.raises(GeError) as exc:
        place_engines(g2, {"ge.exec.exclude_engines": "AiCpu"})
    assert "DT_INT32" in exc.value.message


def test_existing_assignment_is_kept_without_exclusion():
    g = conv_relu_graph()
    place_engines(g, {})
    place_engines(g, {"ge.exec.exclude_engines": "AiCore"})   # spec §2.3 step 1
    assert engines_of(g)["conv"] == "AIcoreEngine"


def test_specified_engine_wins_over_exclusion():
    g = conv_relu_graph()
    g.node("relu0").set_attr("_specified_engine_name", "DNN_VM_AICPU")
    g.node("relu0").set_attr("_specified_kernel_lib_name", "aicpu_tf_kernel")
    place_engines(g, {"ge.exec.exclude_engines": "AiCpu"})
    assert engines_of(g)["relu0"] == "DNN_VM_AICPU"
