"""Subgraph boundaries and the one splice function (spec/python-passes.md §3.12, §6.5).

`splice(graph, inputs, outputs, replacement)` is used by all three pass kinds (pattern
matches, decompose nodes, `SubgraphRewriter.replace`) and by the built-in fusions
(ge/compiler/fusion/rules.py).  Order of work (as torch.fx's
rewriter): check the boundary and the replacement, copy the replacement in, rewire inputs and
outputs, inherit control edges, then erase replaced nodes that lost every consumer.
"""
from __future__ import annotations

import logging
from typing import Iterable, Optional

from ge.graph.attr_names import ATTR_PASS_NAME
from ge.graph import CONST_TYPES as _CONST_TYPES, Graph, GraphCycleError, Node
from ge.ops import Role, role_of

__all__ = ["SubgraphInput", "SubgraphOutput", "SubgraphBoundary", "SubgraphRewriter",
           "SpliceError", "splice", "replaced_set", "erase_unused", "STATUS_SUCCESS",
           "STATUS_FAILED",
           "ATTR_PASS_NAME"]

_log = logging.getLogger(__name__)

STATUS_SUCCESS = 0
STATUS_FAILED = 0xFFFFFFFF
_BOUNDARY_ROLES = frozenset({Role.DATA, Role.OUTPUT})  # a replaced subgraph never holds these


class SpliceError(Exception):
    """A boundary or replacement the splice refuses; the text says which rule."""


class SubgraphInput:
    """Consumer input anchors inside the subgraph that share one producer output."""

    def __init__(self, anchors: Optional[Iterable] = None):
        self._anchors: list[tuple] = []
        for item in anchors or ():
            if not isinstance(item, tuple) or len(item) != 2:
                raise RuntimeError("SubgraphInput elements must be (node, index) tuples")
            node, idx = item
            if not isinstance(node, Node):
                raise TypeError("SubgraphInput element node must be a ge.graph.Node")
            self._anchors.append((node, int(idx)))

    def add_input(self, node: Node, out_index: int) -> int:
        if not isinstance(node, Node):
            raise TypeError("add_input expects a ge.graph.Node")
        if not 0 <= out_index < node.num_inputs or node.input(out_index) is None:
            return STATUS_FAILED
        if self._anchors:
            first, idx = self._anchors[0]
            if first.input(idx) != node.input(out_index):
                return STATUS_FAILED
        self._anchors.append((node, int(out_index)))
        return STATUS_SUCCESS

    @property
    def anchors(self) -> list:
        return list(self._anchors)


class SubgraphOutput:
    """One output anchor of a node inside the subgraph; set once."""

    def __init__(self, node: Optional[Node] = None, out_index: Optional[int] = None):
        self._anchor = None
        if node is not None:
            if self.set_output(node, 0 if out_index is None else out_index) != STATUS_SUCCESS:
                raise RuntimeError(f"bad subgraph output {node.name}:{out_index}")

    def set_output(self, node: Node, out_index: int) -> int:
        if not isinstance(node, Node):
            raise TypeError("set_output expects a ge.graph.Node")
        if self._anchor is not None or not 0 <= out_index < node.num_outputs:
            return STATUS_FAILED
        self._anchor = (node, int(out_index))
        return STATUS_SUCCESS

    @property
    def anchor(self):
        return self._anchor


class SubgraphBoundary:
    """Logical input and output slots, ordered by index."""

    def __init__(self):
        self._inputs: dict[int, SubgraphInput] = {}
        self._outputs: dict[int, SubgraphOutput] = {}

    def add_input(self, index: int, sub_input: SubgraphInput) -> int:
        if not isinstance(sub_input, SubgraphInput):
            raise TypeError("add_input expects a SubgraphInput")
        if index in self._inputs:
            return STATUS_FAILED
        self._inputs[int(index)] = sub_input
        return STATUS_SUCCESS

    def add_output(self, index: int, sub_output: SubgraphOutput) -> int:
        if not isinstance(sub_output, SubgraphOutput):
            raise TypeError("add_output expects a SubgraphOutput")
        if index in self._outputs:
            return STATUS_FAILED
        self._outputs[int(index)] = sub_output
        return STATUS_SUCCESS

    def input_anchors(self) -> list[list]:
        return [self._inputs[k].anchors for k in sorted(self._inputs)]

    def output_anchors(self) -> list:
        return [self._outputs[k].anchor for k in sorted(self._outputs)]


def replaced_set(inputs: list[list], outputs: list) -> list[Node]:
    """Nodes reached backwards from the outputs, not crossing input anchors (ordered)."""
    stops = {(id(n), i) for anchors in inputs for n, i in anchors}
    seen: dict[int, Node] = {}
    stack = [n for n, _ in outputs]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        if role_of(node.type) in _BOUNDARY_ROLES:
            raise SpliceError(f"boundary is not closed: the subgraph reaches {node.type} "
                              f"node {node.name}; declare the input anchors that feed it")
        seen[id(node)] = node
        for i, edge in enumerate(node.inputs()):
            if edge is not None and (id(node), i) not in stops:
                stack.append(edge[0])
    return list(seen.values())


def _check_boundary(graph: Graph, inputs: list[list], outputs: list) -> tuple[list, list]:
    if not outputs:
        raise SpliceError("boundary has no outputs")
    producers = []
    for k, anchors in enumerate(inputs):
        if not anchors:
            raise SpliceError(f"boundary input {k} has no anchors")
        node, idx = anchors[0]
        if node.graph is not graph or node.input(idx) is None:
            raise SpliceError(f"boundary input {k}: {node.name}:{idx} has no producer")
        producers.append(node.input(idx))
    for k, anchor in enumerate(outputs):
        if anchor is None:
            raise SpliceError(f"boundary output {k} is not set")
        if anchor[0].graph is not graph:
            raise SpliceError(f"boundary output {k}: {anchor[0].name} is not in graph "
                              f"{graph.name}")
    nodes = replaced_set(inputs, outputs)
    inside = {id(n) for n in nodes}
    for k, anchors in enumerate(inputs):
        for node, idx in anchors:
            if id(node) not in inside:
                raise SpliceError(f"boundary input {k}: {node.name}:{idx} is outside the "
                                  "replaced subgraph")
    escape = escaping_use(nodes, inside, outputs)
    if escape is not None:
        node, j, dst = escape
        raise SpliceError(f"subgraph is not self-contained: {node.name}:{j} "
                          f"feeds {dst.name} outside it; declare it as an output")
    return producers, nodes


def escaping_use(nodes: Iterable[Node], inside: set, outputs: Iterable) -> Optional[tuple]:
    """The first (node, output index, consumer) where a node of a replaced set feeds a node
    outside it (`inside`: their ids) through an output that is not a declared boundary output;
    None when the set is self-contained.  A shared constant may feed others: it survives."""
    declared = {(id(n), i) for n, i in outputs}
    for node in nodes:
        if node.type in _CONST_TYPES:
            continue
        for j in range(node.num_outputs):
            if (id(node), j) in declared:
                continue
            for dst, _ in node.consumers(j):
                if id(dst) not in inside:
                    return node, j, dst
    return None


def _check_replacement(replacement: Graph, n_in: int, n_out: int) -> tuple[dict, list]:
    datas = [n for n in replacement.nodes if n.type == "Data"]
    if len(datas) != n_in:
        raise SpliceError(f"replacement has {len(datas)} Data nodes but the boundary has "
                          f"{n_in} inputs")
    index_of = {}
    for d in datas:
        k = d.attr("index", 0)
        if k in index_of.values() or not 0 <= k < n_in:
            raise SpliceError(f"replacement Data {d.name} has index {k}; expected each of "
                              f"0..{n_in - 1} once")
        index_of[id(d)] = k
    net = replacement.output_node()
    outs = [] if net is None else net.inputs()
    if len(outs) != n_out or any(e is None for e in outs):
        raise SpliceError(f"replacement has {len(outs)} outputs but the boundary has "
                          f"{n_out} outputs")
    try:
        replacement.topo_order()
    except GraphCycleError as exc:
        raise SpliceError(f"replacement graph has a cycle: {exc}") from None
    return index_of, outs


def splice(graph: Graph, inputs: list[list], outputs: list, replacement: Graph,
           pass_name: str = "", keep_names: bool = False) -> tuple[list[Node], list[Node]]:
    """Replace the subgraph between `inputs` and `outputs` by a copy of `replacement`.

    `inputs[k]` lists the consumer anchors (node, input slot) that replacement Data k takes
    over (one producer each); `outputs[j]` is the (node, output) whose consumers replacement
    output j takes over.  Copies are named `<name>_<replaced names>` (made unique in the graph,
never from process state, so that two compiles name them alike), or with
    `keep_names` the replacement node's own name once the replaced nodes are gone (unique).
    Returns (replaced nodes, new nodes).  Raises SpliceError, leaving the graph unchanged.
    """
    producers, old = _check_boundary(graph, inputs, outputs)
    index_of, rep_outs = _check_replacement(replacement, len(inputs), len(outputs))
    origin: list[str] = []
    for n in old:
        origin += [o for o in (n.origin or [n.name]) if o not in origin]
    suffix = "_".join(n.name for n in old)
    copies: dict[int, Node] = {}
    for rn in replacement.topo_order():
        if role_of(rn.type) in _BOUNDARY_ROLES:
            continue
        name = graph.unique_name(rn.name if keep_names else f"{rn.name}_{suffix}")
        new = graph.copy_node(rn, name)
        new.merge_origin(origin)
        if pass_name:
            marks = list(new.attr(ATTR_PASS_NAME, []) or [])
            new.set_attr(ATTR_PASS_NAME, marks + [pass_name])
        copies[id(rn)] = new
    for rn in replacement.nodes:
        new = copies.get(id(rn))
        if new is None:
            continue
        for i, edge in enumerate(rn.inputs()):
            if edge is None:
                continue
            src, sidx = edge
            if src.type == "Data":
                psrc, pidx = producers[index_of[id(src)]]
                graph.connect(psrc, pidx, new, i)
                new.update_input_desc(i, psrc.out_desc(pidx))
            else:
                graph.connect(copies[id(src)], sidx, new, i)
        for c in rn.get_out_control_nodes():
            if id(c) in copies:
                graph.add_control_edge(new, copies[id(c)])
    for (onode, oidx), (rsrc, ridx) in zip(outputs, rep_outs):
        if rsrc.type == "Data":
            target = producers[index_of[id(rsrc)]]
        else:
            target = (copies[id(rsrc)], ridx)
        graph.replace_uses((onode, oidx), target)
    old_ids = {id(n) for n in old}
    new_nodes = list(copies.values())
    for n in old:
        for c in n.get_in_control_nodes():
            if id(c) not in old_ids:
                for new in new_nodes:
                    graph.add_control_edge(c, new)
        for c in n.get_out_control_nodes():
            if id(c) not in old_ids:
                for new in new_nodes:
                    graph.add_control_edge(new, c)
    erase_unused(graph, old)
    if keep_names:
        for rn in replacement.nodes:
            new = copies.get(id(rn))
            if new is not None and new.name != rn.name and graph.node(rn.name) is None:
                graph.rename_node(new, rn.name)
    return old, new_nodes


def erase_unused(graph: Graph, nodes: list[Node]) -> None:
    """Erase the given nodes that have no data consumer left, repeatedly (a node whose last
    reader went is erased after it)."""
    pending = list(nodes)
    candidates = {id(n) for n in nodes}
    while pending:
        node = pending.pop()
        if node.graph is not graph or any(node.consumers(j) for j in range(node.num_outputs)):
            continue
        feeders = [e[0] for e in node.inputs() if e is not None]
        graph.erase_node(node)
        pending += [f for f in feeders if id(f) in candidates]


class SubgraphRewriter:
    """Replace a hand-described subgraph (FusionBasePass.run) by a replacement graph."""

    @staticmethod
    def replace(boundary: SubgraphBoundary, replacement: Graph, *, context=None):
        if not isinstance(boundary, SubgraphBoundary):
            raise TypeError("replace expects a SubgraphBoundary")
        if not isinstance(replacement, Graph):
            raise TypeError("replace expects a ge.graph.Graph replacement")
        inputs, outputs = boundary.input_anchors(), boundary.output_anchors()
        graph = outputs[0][0].graph if outputs and outputs[0] is not None else None
        pass_name = context.get_pass_name() if context is not None else ""
        try:
            if graph is None:
                raise SpliceError("boundary has no outputs")
            if context is not None:
                from .fuse_inspector import can_fuse
                check = can_fuse(replaced_set(inputs, outputs))
                if not check.ok:
                    raise SpliceError(f"cannot fuse: {check.reason}")
            old, new = splice(graph, inputs, outputs, replacement, pass_name)
        except SpliceError as exc:
            _log.warning("SubgraphRewriter::Replace failed: %s", exc)
            if context is None:
                return STATUS_FAILED
            text = (f"SubgraphRewriter::Replace with context failed, pass_name={pass_name}, "
                    f"status={STATUS_FAILED}: {exc}")
            context.set_error_message(text)
            raise RuntimeError(text) from None
        if context is None:
            return STATUS_SUCCESS
        from .fuse_inspector import record_fusion
        record_fusion(context, old, new)
        return None
