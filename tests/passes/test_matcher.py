"""Matcher and splice rules of spec §6.4-6.5 on hand-built graphs, one behaviour per test."""
from __future__ import annotations

import pytest

from ge.es import GraphBuilder
from ge.es.all import Add, Identity, MatMul, Mul, Relu
from ge.graph import DataType, Graph, Tensor
from ge.passes.boundary import SpliceError, splice
from ge.passes.matcher import Matcher, compile_pattern


def pat(fn, n_inputs=1):
    b = GraphBuilder("pattern")
    ins = b.create_inputs(n_inputs)
    outs = fn(*ins)
    outs = outs if isinstance(outs, list) else [outs]
    return compile_pattern(b.build_and_reset(outs), [])


def matcher(cp, graph, **kw):
    index = {}
    for n in graph.topo_order():
        index.setdefault("Const" if n.type == "Constant" else n.type, []).append(n)
    return Matcher(cp, candidates=lambda t: index.get(t, []), **kw), index


def first_match(cp, graph, anchor_type, **kw):
    m, index = matcher(cp, graph, **kw)
    results = [m.match_at(a) for a in index.get(anchor_type, [])]
    return results[0] if results else None


def graph_of(fn, n_inputs=1, name="g"):
    b = GraphBuilder(name)
    ins = [b.create_input(i, shape=[2, 2]) for i in range(n_inputs)]
    outs = fn(b, *ins)
    return b.build_and_reset(outs if isinstance(outs, list) else [outs])


def test_type_and_wildcard_inputs():
    cp = pat(lambda x: Relu(Identity(x)))
    g = graph_of(lambda b, x: Relu(Identity(Mul(x, x))))
    m = first_match(cp, g, "Relu")
    assert m and m.input_producers[0][0].type == "Mul"
    g2 = graph_of(lambda b, x: Relu(Relu(x)))
    fail = first_match(cp, g2, "Relu")
    assert not fail and fail.rule == "op_type"


def test_const_and_constant_are_one_type():
    cp = pat(lambda x: x + 0)
    g = graph_of(lambda b, x: Add(x, b.create_const_float(0.0)))
    const = [n for n in g.nodes if n.type == "Const"][0]
    g.rename_node(const, "c")
    const._type = "Constant"
    assert first_match(cp, g, "Add")


def test_const_value_match_is_exact():
    cp = pat(lambda x: x + 0.0)
    same = graph_of(lambda b, x: Add(x, b.create_const_float(0.0)))
    other = graph_of(lambda b, x: Add(x, b.create_const_float(1.0)))
    as_int = graph_of(lambda b, x: Add(x, b.create_scalar_int64(0)))
    assert first_match(cp, same, "Add", const_value=True)
    assert first_match(cp, other, "Add", const_value=True).rule == "const_value"
    assert first_match(cp, as_int, "Add", const_value=True).rule == "const_value"
    assert first_match(cp, other, "Add")          # without the switch any constant matches


def test_pattern_const_needs_a_real_constant():
    cp = pat(lambda x: x + 0)
    g = graph_of(lambda b, x, y: Add(x, y), 2)
    assert first_match(cp, g, "Add").rule == "op_type"


def test_ir_attr_match():
    cp = pat(lambda x, y: MatMul(x, y, None, transpose_x1=False), 2)
    plain = graph_of(lambda b, x, y: MatMul(x, y), 2)
    trans = graph_of(lambda b, x, y: MatMul(x, y, transpose_x1=True), 2)
    assert first_match(cp, plain, "MatMul", ir_attr=True)
    assert first_match(cp, trans, "MatMul", ir_attr=True).rule == "ir_attr"
    assert first_match(cp, trans, "MatMul")


def test_connected_input_count_must_be_equal():
    cp = pat(lambda x, y: MatMul(x, y), 2)
    b = GraphBuilder("g")
    x, y, z = b.create_inputs(3)
    g = b.build_and_reset([MatMul(x, y, z)])
    assert first_match(cp, g, "MatMul").rule == "input_count"


def test_same_pattern_input_must_bind_same_node():
    cp = pat(lambda x: Mul(x, x))
    assert first_match(cp, graph_of(lambda b, x: Mul(x, x)), "Mul")
    fail = first_match(cp, graph_of(lambda b, x, y: Mul(x, y), 2), "Mul")
    assert fail.rule == "input_binding"


def test_intermediate_used_outside_is_rejected():
    cp = pat(lambda x: Relu(Identity(x)))
    g = graph_of(lambda b, x: [Relu(Identity(x)), Identity(x)])
    g2 = graph_of(lambda b, x: (lambda i: [Relu(i), Mul(i, i)])(Identity(x)))
    assert first_match(cp, g, "Relu")
    assert first_match(cp, g2, "Relu").rule == "boundary"


def test_multi_output_pattern():
    cp = pat(lambda x: (lambda i: [Relu(i), i])(Identity(x)))
    g = graph_of(lambda b, x: (lambda i: [Relu(i), Mul(i, i)])(Identity(x)))
    m = first_match(cp, g, "Relu")
    assert m and [a[0].type for a in m.output_anchors] == ["Relu", "Identity"]


def test_invalid_pattern_with_dynamic_io_or_no_output():
    from ge.es.all import ConcatV2
    from ge.passes.matcher import PatternError
    b = GraphBuilder("p")
    x, y = b.create_inputs(2)
    with pytest.raises(PatternError, match="dynamic"):
        compile_pattern(b.build_and_reset([ConcatV2([x, y], 0, N=2)]), [])
    with pytest.raises(PatternError, match="no outputs"):
        compile_pattern(Graph("empty"), [])


# -- splice -----------------------------------------------------------------------------------
def replacement(fn, n_inputs):
    b = GraphBuilder("rep")
    ins = b.create_inputs(n_inputs)
    out = fn(*ins)
    return b.build_and_reset(out if isinstance(out, list) else [out])


def test_splice_rewires_and_removes_orphans_but_keeps_shared_const():
    b = GraphBuilder("g")
    x = b.create_input(0)
    c = b.create_const_float(2.0)
    mid = Mul(Identity(x), c)
    keep = Add(x, c)
    g = b.build_and_reset([Relu(mid), keep])
    ident = [n for n in g.nodes if n.type == "Identity"][0]
    mul = [n for n in g.nodes if n.type == "Mul"][0]
    old, new = splice(g, [[(ident, 0)]], [(mul, 0)], replacement(lambda a: Relu(a), 1))
    assert sorted(n.type for n in old) == ["Const", "Identity", "Mul"]
    assert [n.type for n in new] == ["Relu"]
    relus = [n for n in g.nodes if n.type == "Relu"]
    assert len(relus) == 2 and "Identity" not in [n.type for n in g.nodes]
    assert any(n.type == "Const" for n in g.nodes)      # still feeds Add
    assert new[0].name.startswith("Relu_") and "Mul" in new[0].name
    assert set(new[0].origin) >= {mul.name, ident.name}


def test_splice_pass_through():
    g = graph_of(lambda b, x: Relu(Identity(x)))
    ident = [n for n in g.nodes if n.type == "Identity"][0]
    splice(g, [[(ident, 0)]], [(ident, 0)], replacement(lambda a: a, 1))
    relu = [n for n in g.nodes if n.type == "Relu"][0]
    assert relu.input(0)[0].type == "Data"


@pytest.mark.parametrize("rep_inputs,fragment", [(2, "Data nodes"), (1, None)])
def test_splice_count_checks_leave_graph_unchanged(rep_inputs, fragment):
    g = graph_of(lambda b, x: Relu(Identity(x)))
    ident = [n for n in g.nodes if n.type == "Identity"][0]
    before = str(g)
    rep = replacement(lambda *a: [a[0], a[0]] if rep_inputs == 1 else Add(*a), rep_inputs)
    with pytest.raises(SpliceError):
        splice(g, [[(ident, 0)]], [(ident, 0)], rep)
    assert str(g) == before


def test_splice_not_self_contained():
    g = graph_of(lambda b, x: (lambda i: [Relu(i), Mul(i, i)])(Identity(x)))
    relu = [n for n in g.nodes if n.type == "Relu"][0]
    ident = [n for n in g.nodes if n.type == "Identity"][0]
    with pytest.raises(SpliceError, match="self-contained"):
        splice(g, [[(ident, 0)]], [(relu, 0)], replacement(lambda a: Relu(a), 1))


def test_splice_open_boundary_reaching_graph_input():
    g = graph_of(lambda b, x: Relu(Identity(x)))
    relu = [n for n in g.nodes if n.type == "Relu"][0]
    before = str(g)
    with pytest.raises(SpliceError, match="not closed"):
        splice(g, [], [(relu, 0)], replacement(lambda: None, 0) if False else Graph("r"))
    assert str(g) == before


def test_shared_const_in_pattern_survives():
    from ge.passes.matcher import Matcher  # noqa: F401
    cp = pat(lambda x: x + 0)
    b = GraphBuilder("g")
    x, y = b.create_inputs(2)
    zero = b.create_const_float(0.0)
    g = b.build_and_reset([Relu(Add(x, zero)), Add(y, zero)])
    m = first_match(cp, g, "Add")
    assert m
    splice(g, m.input_anchors, m.output_anchors, replacement(lambda a: a, 1))
    assert [n.type for n in g.nodes].count("Const") == 1
    assert [n.type for n in g.nodes].count("Add") == 1
