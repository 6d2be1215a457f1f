"""splice names its copies from the graph alone: two compiles in one process name them alike;
with keep_names a replacement node takes the name of the node it replaces."""
from ge.graph import Graph
from ge.passes.boundary import splice


def chain() -> Graph:
    g = Graph("g")
    x = g.add_node("Data", "x", attrs={"index": 0}, input_names=["x"])
    relu = g.add_node("Relu", "relu", inputs=[(x, 0)])
    g.add_node("NetOutput", "out", inputs=[(g.add_node("Neg", "neg", inputs=[(relu, 0)]), 0)])
    return g


def replacement(name: str) -> Graph:
    rep = Graph("rep")
    d = rep.add_node("Data", "d", attrs={"index": 0}, input_names=["x"])
    rep.add_node("NetOutput", "o", inputs=[(rep.add_node("Abs", name, inputs=[(d, 0)]), 0)])
    return rep


def _splice(g: Graph, name: str, **kw):
    relu = g.node("relu")
    return splice(g, [[(relu, 0)]], [(relu, 0)], replacement(name), **kw)


def test_names_do_not_depend_on_earlier_splices():
    names = []
    for _ in range(2):
        g = chain()
        _, new = _splice(g, "abs")
        names.append([n.name for n in new])
    assert names[0] == names[1] == ["abs_relu"]


def test_keep_names_takes_over_the_replaced_name():
    g = chain()
    _, new = _splice(g, "relu", keep_names=True)
    assert [n.name for n in new] == ["relu"] and new[0].type == "Abs"
    assert g.node("neg").input(0) == (new[0], 0)
    g.verify()
