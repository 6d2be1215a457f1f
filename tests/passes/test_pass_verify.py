"""Graph.verify after every pass: a pass that leaves the graph malformed fails its stage with
E13028 naming the pass and the broken rule; a well-behaved pass is not disturbed."""
import pytest

from ge.errors import GeError
from ge.es import GraphBuilder
from ge.es.all import Neg, Relu
from ge.passes import FusionBasePass, PassStage, register_fusion_pass
from ge.passes.report import FusionReport
from ge.passes.runner import run_stage

BIS = PassStage.BEFORE_INFER_SHAPE


def graph():
    b = GraphBuilder("g")
    return b.build_and_reset([Neg(Relu(b.create_input(0)))])


def _pass(name, edit):
    @register_fusion_pass(name=name, stage=BIS)
    class P(FusionBasePass):
        def run(self, graph, context):
            edit(graph)
    return P


def _node(g, op_type):
    return next(n for n in g.nodes if n.type == op_type)


def _cut_relu_input(g):
    relu = _node(g, "Relu")
    src, idx = relu.get_in_data_nodes_and_port_indexes(0)
    g.remove_edge(src, idx, relu, 0)


def _drop_output(g):
    g.remove_node(_node(g, "NetOutput"))


def _erase_used_node(g):
    g.erase_node(_node(g, "Relu"))


@pytest.mark.parametrize("edit,fragment", [
    (_cut_relu_input, "unconnected input: required input 0 (x) of"),
    (_drop_output, "outputs: 0 NetOutput nodes"),
    (_erase_used_node, "erase_node("),
])
def test_pass_breaking_the_graph_is_named(edit, fragment):
    _pass("BreakingPass", edit)
    with pytest.raises(GeError) as err:
        run_stage(graph(), BIS, {}, FusionReport())
    assert err.value.code == "E13028"
    assert err.value.params["passname"] == "BreakingPass"
    assert fragment in err.value.params["reason"]


def test_pass_rewiring_properly_passes():
    def bypass_relu(g):
        relu = _node(g, "Relu")
        g.replace_uses((relu, 0), relu.input(0))
        g.erase_node(relu)
    _pass("GoodPass", bypass_relu)
    g = graph()
    run_stage(g, BIS, {}, FusionReport())
    assert [n.type for n in g.topo_order()] == ["Data", "Neg", "NetOutput"]
