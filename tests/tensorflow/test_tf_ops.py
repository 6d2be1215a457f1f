"""One op-level graph per mapping row: every row of the TensorFlow mapping table (and every
pass-through op) has a case in _tf_graphs.op_cases, all cases are outputs of one GraphDef compiled
once, and each output matches TensorFlow's."""
from __future__ import annotations

import pytest

from ge.parser.tensorflow import ROWS
from ge.parser.tensorflow._mappings import PASS_THROUGH
from ge.proto.tensorflow import GraphDef
from ge.runtime.compare_tf import compare_tf_model

CASES = sorted(list(ROWS) + sorted(PASS_THROUGH))


@pytest.fixture(scope="module")
def comparison(frozen, tf_compiled):
    result = compare_tf_model(frozen("ops"), tf_compiled("ops"))
    return {d.reference: d for d in result.outputs}


@pytest.fixture(scope="module")
def graph_ops(frozen):
    graph = GraphDef()
    graph.ParseFromString(frozen("ops").read_bytes())
    return {n.op for n in graph.node}


def test_every_row_has_a_case(tf):
    import _tf_graphs as G
    assert sorted(G.op_cases(tf)) == CASES


@pytest.mark.parametrize("op", CASES)
def test_row_matches_tensorflow(op, comparison, graph_ops):
    assert op in graph_ops, f"the case of {op} does not produce a {op} node"
    d = comparison[f"out_{op}:0"]
    assert d.ok, f"{op}: max abs {d.max_abs}, max rel {d.max_rel}, first bad {d.first_bad}"
