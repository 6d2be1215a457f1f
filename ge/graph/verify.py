"""The invariants of the IR, checked by `Graph.verify()` after every pipeline stage and every
pass (ge.compiler.pipeline, ge.passes.runner).

A graph is well formed when:
  - its node table is consistent (each node is filed under its own name and owned by it);
  - every data edge is recorded on both ends, and every control edge too;
  - every producer a consumer names is a node of the same graph;
  - it is acyclic (data and control edges);
  - every input slot that must be connected is (the rule comes from the caller: ge.graph
    knows no ops, the op registry does: `ge.ops.required_slots`);
  - it has exactly one NetOutput and every NetOutput input is connected.
Subgraphs of a root graph are checked too, except those whose parent node is gone.  A graph
whose structure is unchanged since it last passed (Graph._edits: nodes, edges, slots, order)
is not walked again, so a stage that only sets attributes costs nothing here.

`verify` raises GraphInvariantError naming the graph, the broken rule and the nodes; it
never changes the graph.  The callers turn it into a coded error naming the stage or pass.
"""
from __future__ import annotations

from typing import Callable, Iterable, Optional

__all__ = ["GraphInvariantError", "verify"]

RequiredSlots = Callable[[object], Iterable[int]]   # node -> input slots that must be connected


class GraphInvariantError(ValueError):
    def __init__(self, graph_name: str, rule: str, detail: str):
        self.graph_name, self.rule, self.detail = graph_name, rule, detail
        super().__init__(f"graph {graph_name}: {rule}: {detail}")


def _edges(graph, fail) -> None:
    """Both ends of every edge.  Each consumer entry must name an input that reads it back,
    and a list never names one input twice (an input reads one producer, so no two lists
    share an entry); then equal counts mean every input edge is listed by its producer."""
    from .graph import Node
    table = graph._nodes
    for name, node in table.items():
        if not isinstance(node, Node) or node._name != name or node._graph is not graph:
            fail("node table", f"entry {name} holds {node!r}, which is not its own node")
    n_inputs = n_listed = 0
    for node in table.values():
        for i, edge in enumerate(node._inputs):
            if edge is None:
                continue
            n_inputs += 1
            if edge[0]._graph is not graph:     # erased nodes and other graphs' nodes
                fail("missing producer", f"{node.name}:{i} reads {edge[0].name}:{edge[1]}, "
                                         f"which is not a node of the graph")
        for k, users in enumerate(node._outputs):
            for dst, j in users:
                if dst._graph is not graph:
                    fail("missing consumer", f"{node.name}:{k} feeds {dst.name}:{j}, which "
                                             f"is not a node of the graph")
                edge = dst._inputs[j] if 0 <= j < len(dst._inputs) else None
                if edge is None or edge[0] is not node or edge[1] != k:
                    fail("one-sided edge", f"{node.name}:{k} lists {dst.name}:{j} as a "
                                           f"consumer, but that input reads something else")
            n_listed += len(users)
            if len(users) > 1 and len({(id(d), j) for d, j in users}) != len(users):
                fail("one-sided edge", f"{node.name}:{k} lists a consumer twice")
        for c in node._ctrl_in:
            if c._graph is not graph or node not in c._ctrl_out:
                fail("control edge", f"{c.name} -> {node.name} is not recorded on both ends")
        for c in node._ctrl_out:
            if c._graph is not graph or node not in c._ctrl_in:
                fail("control edge", f"{node.name} -> {c.name} is not recorded on both ends")
    if n_listed != n_inputs:        # some input edge is not listed by its producer: name it
        for node in table.values():
            for i, edge in enumerate(node._inputs):
                outs = edge[0]._outputs if edge is not None else ()
                if edge is not None and (not 0 <= edge[1] < len(outs)
                                         or (node, i) not in outs[edge[1]]):
                    fail("one-sided edge", f"{node.name}:{i} reads {edge[0].name}:{edge[1]}, "
                                           f"but {edge[0].name} does not list it as a "
                                           f"consumer")


def _connected(graph, required: Optional[RequiredSlots], fail) -> None:
    outputs = [n for n in graph._nodes.values() if n._type == "NetOutput"]
    if len(outputs) != 1:
        fail("outputs", f"{len(outputs)} NetOutput nodes"
                        + (f" ({', '.join(n.name for n in outputs)})" if outputs else "")
                        + "; a graph has exactly one")
    missing = [i for i, e in enumerate(outputs[0]._inputs) if e is None]
    if missing:
        fail("outputs", f"graph output(s) {missing} of {outputs[0].name} are not connected")
    if required is None:
        return
    for node in graph._nodes.values():
        for i in required(node):
            if i < len(node._inputs) and node._inputs[i] is None:
                fail("unconnected input", f"required input {i} ({node._in_names[i]}) of "
                                          f"{node.name} ({node.type}) is not connected")


def _verify_one(graph, required: Optional[RequiredSlots]) -> None:
    from .graph import GraphCycleError

    def fail(rule: str, detail: str):
        raise GraphInvariantError(graph.name, rule, detail)

    _edges(graph, fail)
    try:
        graph.topo_order()
    except GraphCycleError as exc:
        fail("cycle", f"through {', '.join(exc.nodes[:5])}")
    _connected(graph, required, fail)


def verify(graph, required: Optional[RequiredSlots] = None) -> None:
    """Check `graph` and its live subgraphs; raise GraphInvariantError on the first broken
    rule.  `required(node)` gives the input slots that must be connected."""
    graphs = [graph]
    if graph.parent_graph is None:
        graphs += [sub for sub in graph._subgraphs.values()
                   if sub.parent_node is None or sub.parent_node.graph is not None]
    for g in graphs:
        if g._verified != (required, g._edits):
            _verify_one(g, required)
            g._verified = (required, g._edits)
