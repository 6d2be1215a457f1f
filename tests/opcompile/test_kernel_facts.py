"""The registry names each op's C kernel generator (OpDef.kernel_gen); the generators' own
per-op tables hold exactly those ops, so the two cannot drift apart."""
import pytest

from ge import ops
from ge.compiler.engines import AICORE, AICPU, GE_LOCAL, VECTOR, supported_engines
from ge.compiler.opcompile import RENDERERS, generator_for
from ge.compiler.opcompile import gen_elementwise, gen_layout, gen_matmul, gen_pool, gen_reduce
from ge.graph import Graph
from ge.graph.tensor import TensorDesc
from ge.graph.types import DataType
from ge.ops import OpDef, Port, registry

# kernel_gen name -> the generator table that must list every op naming it
PER_OP_TABLES = {
    "elementwise": gen_elementwise.ELEMENTWISE, "reduce": gen_reduce.REDUCE_OPS,
    "softmax": gen_reduce.SOFTMAX_OPS, "layer_norm": gen_reduce.NORM_OPS,
    "matmul": gen_matmul.MATMUL_OPS, "pool": gen_pool.POOL_OPS, "layout": gen_layout.LAYOUT_OPS,
}


def _named(kernel_gen):
    return {t for t, d in ops.all_ops().items() if d.kernel_gen == kernel_gen}


@pytest.mark.parametrize("kernel_gen", sorted(PER_OP_TABLES))
def test_generator_tables_match_the_registry(kernel_gen):
    assert _named(kernel_gen) == set(PER_OP_TABLES[kernel_gen])


def test_every_named_generator_exists():
    named = {d.kernel_gen for d in ops.all_ops().values() if d.kernel_gen}
    assert named <= set(RENDERERS)
    # no renderer left without ops (the custom one serves the ops of custom op packages)
    from ge.ops.custom import KERNEL_GEN
    assert set(RENDERERS) - {KERNEL_GEN} == named - {KERNEL_GEN}


def test_const_inputs_come_from_the_registry():
    assert generator_for("StridedSliceV2").const_inputs == ops.get("StridedSliceV2").kernel_consts
    assert generator_for("Tile") is None


def _node(op_type):
    g = Graph("g")
    x = g.add_node("Data", "x", attrs={"index": 0}, input_names=["x"])
    n = g.add_node(op_type, "n", inputs=[(x, 0)])
    desc = TensorDesc([2, 3], data_type=DataType.DT_FLOAT)
    x.update_output_desc(0, desc)
    n.update_input_desc(0, desc)
    n.update_output_desc(0, desc)
    return n


@pytest.fixture
def compiled_test_op():
    ops.register(OpDef("TestCompiledRelu", inputs=(Port("x"),), outputs=(Port("y"),),
                       kernel_gen="elementwise", doc="test op"))
    yield "TestCompiledRelu"
    registry.REGISTRY.pop("TestCompiledRelu", None)


def test_engines_follow_the_registry_facts(compiled_test_op):
    # a generator without a row for the op refuses it: the reason names the op
    engines, reason = supported_engines(_node(compiled_test_op))
    assert engines == () and compiled_test_op in reason
    assert supported_engines(_node("Relu"))[0] == (AICORE, VECTOR, AICPU)
    assert supported_engines(_node("Cast"))[0] == (AICORE, VECTOR, AICPU)
    assert supported_engines(_node("Tile"))[0] == (AICPU,)
    assert supported_engines(_node("Reshape"))[0] == (GE_LOCAL,)
