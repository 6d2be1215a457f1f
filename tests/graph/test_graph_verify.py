"""Graph.verify: each IR invariant, broken on purpose, fails naming its rule and the nodes;
erase_node refuses while consumers remain; remove_node (CANN surface) unlinks them."""
import pytest

from ge import ops
from ge.errors import GeError
from ge.graph import Graph, GraphInvariantError


def chain() -> Graph:
    """x -> relu -> neg -> out, plus a constant feeding an Add."""
    g = Graph("g")
    x = g.add_node("Data", "x", attrs={"index": 0}, input_names=["x"])
    relu = g.add_node("Relu", "relu", inputs=[(x, 0)])
    neg = g.add_node("Neg", "neg", inputs=[(relu, 0)])
    g.add_node("NetOutput", "out", inputs=[(neg, 0)])
    return g


def broken(g: Graph) -> GraphInvariantError:
    with pytest.raises(GraphInvariantError) as err:
        g.verify(ops.required_slots)
    return err.value


def test_well_formed_graph_passes():
    g = chain()
    g.verify(ops.required_slots)
    sub = chain()
    g.add_subgraph(sub, g.node("relu"))
    g.verify(ops.required_slots)


def test_edge_recorded_on_one_end_only():
    g = chain()
    relu, neg = g.node("relu"), g.node("neg")
    relu._outputs[0].remove((neg, 0))              # the consumer still reads relu
    err = broken(g)
    assert (err.rule, err.graph_name) == ("one-sided edge", "g")
    assert "neg:0 reads relu:0" in err.detail


def test_consumer_list_names_an_edge_the_consumer_does_not_have():
    g = chain()
    g.node("x")._outputs[0].append((g.node("neg"), 0))
    err = broken(g)
    assert err.rule == "one-sided edge" and "x:0 lists neg:0" in err.detail


def test_producer_outside_the_graph():
    g, other = chain(), chain()
    g.connect(other.node("relu"), 0, g.node("neg"), 0)
    err = broken(g)
    assert err.rule == "missing producer" and "neg:0 reads relu:0" in err.detail


def test_erased_producer_still_referenced():
    g = chain()
    relu = g.node("relu")
    del g._nodes["relu"]                           # dropped from the table, edges kept
    relu._graph = None
    err = broken(g)
    assert err.rule == "missing consumer" and err.detail.startswith("x:0 feeds relu:0")
    g.disconnect(relu, 0)
    err = broken(g)
    assert err.rule == "missing producer" and err.detail.startswith("neg:0 reads relu:0")


def test_cycle():
    g = chain()
    g.add_control_edge(g.node("neg"), g.node("relu"))
    err = broken(g)
    assert err.rule == "cycle" and "relu" in err.detail and "neg" in err.detail


def test_control_edge_on_one_end_only():
    g = chain()
    g.node("x")._ctrl_out.append(g.node("neg"))
    err = broken(g)
    assert err.rule == "control edge" and "x -> neg" in err.detail


def test_required_input_not_connected():
    g = chain()
    g.disconnect(g.node("neg"), 0)
    err = broken(g)
    assert err.rule == "unconnected input"
    assert err.detail == "required input 0 (x0) of neg (Neg) is not connected"
    g.verify()                                     # without the registry's rule it passes


def test_optional_input_may_stay_unconnected():
    g = chain()
    mm = g.add_node("MatMulV2", "mm", inputs=[(g.node("relu"), 0), (g.node("relu"), 0), None])
    g.connect(mm, 0, g.node("neg"), 0)
    g.verify(ops.required_slots)                   # bias (slot 2) is optional


def test_graph_output_missing_or_unconnected():
    g = chain()
    g.remove_node(g.node("out"))
    err = broken(g)
    assert err.rule == "outputs" and "0 NetOutput" in err.detail
    g = chain()
    g.node("out").add_input()
    err = broken(g)
    assert err.rule == "outputs" and "[1] of out are not connected" in err.detail


def test_live_subgraph_is_checked_orphan_is_not():
    g = chain()
    sub = chain()
    g.add_subgraph(sub, g.node("relu"))
    sub.disconnect(sub.node("neg"), 0)
    err = broken(g)
    assert err.graph_name == sub.name and err.rule == "unconnected input"
    g2 = chain()
    orphan = chain()
    g2.add_subgraph(orphan, g2.node("neg"))
    orphan.disconnect(orphan.node("neg"), 0)
    src = g2.node("neg").input(0)
    g2.remove_node(g2.node("neg"))                 # parent gone: its subgraph is dead
    g2.connect(src[0], src[1], g2.node("out"), 0)
    g2.verify(ops.required_slots)


def test_erase_node_refuses_while_consumers_remain():
    g = chain()
    extra = g.add_node("Abs", "abs", inputs=[(g.node("relu"), 0)])
    g.node("out").add_input()
    g.connect(extra, 0, g.node("out"), 1)
    with pytest.raises(GeError) as err:
        g.erase_node(g.node("relu"))
    assert err.value.code == "EP0005"
    assert err.value.params["where"] == "erase_node(relu)"
    assert "relu still feeds neg:0, abs:0" in err.value.params["reason"]
    assert g.node("relu") is not None              # nothing changed
    g.verify(ops.required_slots)


def test_erase_node_after_rewiring():
    g = chain()
    relu = g.node("relu")
    g.replace_uses((relu, 0), (g.node("x"), 0))
    g.erase_node(relu)
    assert [n.name for n in g.topo_order()] == ["x", "neg", "out"]
    g.verify(ops.required_slots)


def test_remove_node_unlinks_its_consumers():
    g = chain()
    g.remove_node(g.node("relu"))
    assert g.node("relu") is None and g.node("neg").input(0) is None
    assert broken(g).rule == "unconnected input"


def test_unchanged_structure_is_not_walked_again_but_any_edit_is(monkeypatch):
    import ge.graph.verify as verify_module
    walks = []
    real = verify_module._verify_one
    monkeypatch.setattr(verify_module, "_verify_one",
                        lambda g, required: (walks.append(g.name), real(g, required)))
    g = chain()
    g.verify(ops.required_slots)
    g.node("relu").set_attr("alpha", 1.0)          # attributes are not structure
    g.verify(ops.required_slots)
    assert walks == ["g"]
    g.add_node("Abs", "abs", inputs=[(g.node("x"), 0)])
    g.disconnect(g.node("neg"), 0)                 # any edit through the graph is seen
    assert broken(g).rule == "unconnected input"
    assert walks == ["g", "g"]


def test_input_reading_an_output_its_producer_does_not_have():
    g = chain()
    g.node("neg")._inputs[0] = (g.node("relu"), 3)
    g.node("relu")._outputs[0].clear()
    err = broken(g)
    assert err.rule == "one-sided edge" and "neg:0 reads relu:3" in err.detail
