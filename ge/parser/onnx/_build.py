"""ModelProto → ge.graph.Graph: pre-check, Data / Const / node / NetOutput construction, If
subgraphs (spec/ir-ops.md §1.2–§1.9).  Knows no op: every op fact comes from the mapping table
(_mappings.py) and the op registry.  Does not optimise and does not infer shapes.
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Optional

import numpy as np
from . import _proto as onnx
from ._proto import AttributeProto, GraphProto

from ge.graph.attr_names import ATTR_PARENT_INDEX
from ge.errors import GeError
from ge.graph import Graph, Node, TensorDesc
from ge.graph.types import AttrValueType as VT

from .._emit import add_node
from ._context import ConvertError, NodeCtx, make_tensor
from ._mappings import SUPPORTED_OPSETS, lookup, make_key
from ._model import const_type, ge_dtype, invalid_model, tensor_to_array
from ._options import ParseOptions

__all__ = ["build_graph"]

NET_OUTPUT = "Node_Output"


# -- walking the model --------------------------------------------------------------------------

def _subgraph_attrs(node: onnx.NodeProto) -> list:
    out = []
    for a in node.attribute:
        if a.type == AttributeProto.GRAPH:
            out.append((a.name, a.g))
        elif a.type == AttributeProto.GRAPHS:
            out += [(a.name, g) for g in a.graphs]
    return out


def outer_names(g: GraphProto) -> set:
    """Tensors a graph (and its nested graphs) reads but does not define itself."""
    defined = {i.name for i in g.input} | {t.name for t in g.initializer}
    defined |= {o for n in g.node for o in n.output if o}
    used = {o.name for o in g.output}
    for n in g.node:
        used |= {i for i in n.input if i}
        for _, sub in _subgraph_attrs(n):
            used |= outer_names(sub)
    return used - defined


def _branch_name(if_name: str, attr: str, index: int) -> str:
    return f"{if_name}_{index}_{attr}"


def name_unnamed_nodes(g: GraphProto, counter: list) -> None:
    """spec §1.2.1: unnamed nodes become `<op_type>_<counter>` (one counter, BFS order)."""
    queue = [g]
    while queue:
        graph = queue.pop(0)
        for n in graph.node:
            if not n.name:
                n.name = f"{n.op_type}_{counter[0]}"
                counter[0] += 1
            queue += [sub for _, sub in _subgraph_attrs(n)]


def unique_node_names(g: GraphProto) -> dict:
    """Repeated node names (valid ONNX) made unique per graph: a later node named like an
    earlier one becomes `<name>_<k>` (the smallest k free in that graph).  Returns
    {(new name, outputs): original name}, so the IR node can still record the name the model
    gave it (`_datadump_original_op_names`)."""
    original: dict = {}
    queue = [g]
    while queue:
        graph = queue.pop(0)
        taken = {n.name for n in graph.node}
        seen: set = set()
        for n in graph.node:
            if n.name in seen:
                k = 1
                while f"{n.name}_{k}" in taken:
                    k += 1
                original[(f"{n.name}_{k}", tuple(n.output))] = n.name
                n.name = f"{n.name}_{k}"
                taken.add(n.name)
            seen.add(n.name)
            queue += [sub for _, sub in _subgraph_attrs(n)]
    return original


def read_opsets(model: onnx.ModelProto) -> dict:
    opsets: dict[str, int] = {}
    for entry in model.opset_import:  # later duplicates overwrite (spec §1.2.2)
        opsets[entry.domain or "ai.onnx"] = int(entry.version)
    return opsets


# -- pre-check ----------------------------------------------------------------------------------

def precheck(g: GraphProto, opsets: dict, prefix: str = "") -> None:
    """Every unsupported node in one E13010 report (names are unique: unique_node_names).

    A missing IR proto (E10501) is reported when the converter emits it: which IR types a row
    produces depends on the node (Conv 2-D vs 3-D), so it cannot be known here."""
    unsupported: list[tuple[str, str]] = []

    def visit(graph: GraphProto, prefix: str) -> None:
        _check_single_writers(graph, prefix)
        for n in graph.node:
            full = f"{prefix}/{n.name}" if prefix else n.name
            domain = n.domain or "ai.onnx"
            if domain not in opsets:
                raise invalid_model("", f"node {full} uses domain {domain}, which the model "
                                    "does not import (opset_import)")
            row = lookup(domain, opsets[domain], n.op_type)
            if row is None:
                unsupported.append((full, make_key(domain, opsets[domain], n.op_type)))
            for attr, sub in _subgraph_attrs(n):
                if row is not None:
                    index = 0 if attr == "then_branch" else 1
                    visit(sub, _branch_name(full, attr, index))

    visit(g, prefix)
    if unsupported:
        version = opsets.get("ai.onnx")
        low, high = SUPPORTED_OPSETS
        opsets_note = ""
        if version is not None and not low <= version <= high:
            opsets_note = (f" The model imports ai.onnx opset {version}; this implementation "
                           f"supports ai.onnx opsets {low} to {high}.")
        raise GeError("E13010", {"opname": unsupported[0][0], "optype": unsupported[0][1],
                                 "nodes": ", ".join(f"{n} ({k})" for n, k in unsupported),
                                 "opsets": opsets_note})


def _check_single_writers(graph: GraphProto, prefix: str) -> None:
    """ONNX graphs are single-assignment: a graph input declared twice, or a tensor written by
    two nodes (or by a node and the graph's inputs), is an invalid model (EP0101), never a
    silently dropped producer."""
    writer: dict[str, str] = {}
    for vi in graph.input:
        if vi.name in writer:
            raise invalid_model("", f"graph input {vi.name} is declared twice")
        writer[vi.name] = "a graph input"
    for t in graph.initializer:
        writer.setdefault(t.name, "an initializer")       # an initializer may default an input
    for n in graph.node:
        full = f"{prefix}/{n.name}" if prefix else n.name
        for out in n.output:
            if out and out in writer:
                raise invalid_model("", f"tensor {out} is written by {writer[out]} and by node "
                                        f"{full or n.op_type}")
            if out:
                writer[out] = f"node {full or n.op_type}"


# -- building -----------------------------------------------------------------------------------

def _static_shape(value_info) -> Optional[list]:
    t = value_info.type
    if not t.HasField("tensor_type") or not t.tensor_type.HasField("shape"):
        return None
    dims = [d.dim_value if d.HasField("dim_value") else -1 for d in t.tensor_type.shape.dim]
    if any(d < -1 for d in dims):    # -1: unknown, as some exporters write it
        raise invalid_model("", f"tensor {value_info.name} has the shape {dims}: a dimension "
                            "is a size (>= 0), -1 or symbolic (dim_param)")
    return dims


@dataclass
class _State:
    root: Graph
    opsets: dict
    options: ParseOptions
    model_dir: Optional[str]
    counter: int = 0                              # PartitionedCall_<inner>_<counter>
    renamed: dict = field(default_factory=dict)   # unique_node_names: (name, outputs) -> original
    onnx_outputs: dict = field(default_factory=dict)   # root ONNX node -> [Edge | None]


def _add_data(graph: Graph, name: str, index: int, desc: TensorDesc | None) -> Node:
    node = add_node(graph, "Data", name, 1, 1, [name])
    node.set_attr_kind("index", VT.VT_INT, index)
    if desc is not None:
        node.set_attr_kind("data_type", VT.VT_INT, int(desc.data_type))
        node.update_input_desc(0, desc)
        node.update_output_desc(0, desc)
    return node


def _root_data_desc(vi, state: _State) -> TensorDesc:
    t = vi.type
    if not t.HasField("tensor_type"):
        raise invalid_model("", f"graph input {vi.name} is not a tensor")
    dtype = ge_dtype(t.tensor_type.elem_type, f"graph input {vi.name}")
    shape = _static_shape(vi)
    user = state.options.input_shapes.get(vi.name)
    if user is not None:
        if shape and len(shape) != len(user):
            raise GeError("E10001", {"value": f"{vi.name}:{','.join(map(str, user))}",
                                     "parameter": "--input_shape",
                                     "reason": f"the model gives input {vi.name} rank "
                                     f"{len(shape)}, the option rank {len(user)}."})
        shape = user
    desc = TensorDesc(shape if shape is not None else [-2], state.options.input_format, dtype)
    return desc


class _GraphBuilder:
    """Builds one Graph (root or branch) from one GraphProto."""

    def __init__(self, state: _State, g: GraphProto, graph: Graph, prefix: str,
                 captures: list):
        self.state, self.g, self.graph, self.prefix = state, g, graph, prefix
        self.is_root = not prefix
        self.scope: dict[str, tuple] = {}
        self.const_of: dict[str, np.ndarray] = {}
        self.shape_of: dict[str, list] = {}
        self.captures = captures
        for vi in list(g.input) + list(g.value_info) + list(g.output):
            shape = _static_shape(vi)
            if shape is not None:
                self.shape_of[vi.name] = shape

    def full_name(self, name: str) -> str:
        return f"{self.prefix}/{name}" if self.prefix else name

    # -- inputs and constants ------------------------------------------------------------------
    def add_inputs(self) -> None:
        init_names = {t.name for t in self.g.initializer}
        if self.is_root:
            if not self.g.input:
                raise GeError("E16001", {"type": "input"})
            data_names = [vi.name for vi in self.g.input if vi.name not in init_names]
            for name in self.state.options.input_shapes:
                if name in init_names:
                    raise GeError("E10017", {"opname": name, "parameter": "input_shape"})
                if name not in data_names:
                    raise GeError("E10016", {"opname": name, "parameter": "input_shape"})
        index = 0
        for vi in self.g.input:
            if vi.name in init_names:
                continue
            desc = _root_data_desc(vi, self.state) if self.is_root else None
            node = _add_data(self.graph, vi.name, index, desc)
            if not self.is_root:
                node.set_attr_kind(ATTR_PARENT_INDEX, VT.VT_INT, index + 1)  # If slot 0 is cond
            self.scope[vi.name] = (node, 0)
            if desc is not None:
                self.shape_of[vi.name] = list(desc.shape)
            index += 1
        for name in self.captures:  # outer-scope tensors of a branch, sorted (spec §1.9)
            node = _add_data(self.graph, name, index, None)
            node.set_attr_kind(ATTR_PARENT_INDEX, VT.VT_INT, index + 1)
            self.scope[name] = (node, 0)
            index += 1

    def add_initializers(self) -> None:
        for k, t in enumerate(sorted(self.g.initializer, key=lambda t: t.name)):
            value = tensor_to_array(t, self.state.model_dir, t.name)
            node = add_node(self.graph, "Const", f"{t.name}_Initializer_{k}", 0, 1, [t.name])
            node.set_attr_kind("value", VT.VT_TENSOR, make_tensor(value, const_type(t)))
            node.out_desc(0).set_shape(value.shape).set_origin_shape(value.shape)
            self.scope[t.name] = (node, 0)
            self.const_of[t.name] = value

    # -- nodes ---------------------------------------------------------------------------------
    def node_order(self) -> list:
        """ONNX nodes in a stable topological order; dangling inputs and cycles refused."""
        nodes = list(self.g.node)
        producer = {o: i for i, n in enumerate(nodes) for o in n.output if o}
        preds: list[set] = []
        for n in nodes:
            needed = [i for i in n.input if i]
            for _, sub in _subgraph_attrs(n):
                needed += sorted(outer_names(sub))
            deps = set()
            for name in needed:
                if name in producer:
                    deps.add(producer[name])
                elif name not in self.scope:
                    raise invalid_model("", f"input {name} of node {self.full_name(n.name)} "
                                        "is produced by no node, graph input or initializer")
            preds.append(deps)
        users: list[list] = [[] for _ in nodes]
        pending = [len(p) for p in preds]
        for i, deps in enumerate(preds):
            for d in deps:
                users[d].append(i)
        ready = [i for i, c in enumerate(pending) if c == 0]
        heapq.heapify(ready)
        order = []
        while ready:
            i = heapq.heappop(ready)
            order.append(nodes[i])
            for u in users[i]:
                pending[u] -= 1
                if pending[u] == 0:
                    heapq.heappush(ready, u)
        if len(order) != len(nodes):
            stuck = [self.full_name(nodes[i].name) for i, c in enumerate(pending) if c > 0]
            raise invalid_model("", f"the graph has a cycle through nodes {', '.join(stuck[:8])}")
        return order

    def consumed(self) -> set:
        names = {o.name for o in self.g.output}
        for n in self.g.node:
            names |= {i for i in n.input if i}
            for _, sub in _subgraph_attrs(n):
                names |= outer_names(sub)
        if self.is_root:
            names |= {n for n, _ in self.state.options.out_nodes}  # resolved by node name
            names |= set(self.state.options.out_tensors)
        return names

    def convert(self, proto: onnx.NodeProto, consumed: set) -> None:
        domain = proto.domain or "ai.onnx"
        opset = self.state.opsets[domain]
        row = lookup(domain, opset, proto.op_type)
        name = self.full_name(proto.name)
        ins = [self.scope[i] if i else None for i in proto.input]
        in_names = list(proto.input)
        if proto.op_type == "If":
            captures = sorted(set().union(*(outer_names(s) for _, s in _subgraph_attrs(proto))))
            ins += [self.scope[c] for c in captures]
            in_names += captures
        used = [bool(o) and (o in consumed or (self.is_root and proto.name in consumed))
                for o in proto.output]
        original = self.state.renamed.get((proto.name, tuple(proto.output)), proto.name)
        ctx = NodeCtx(self.graph, proto, name, opset, ins, in_names, used, self.const_of,
                      self.shape_of, model_dir=self.state.model_dir,
                      origin=self.full_name(original),
                      build_branch=lambda node, attr, idx: self.build_branch(proto, node, attr,
                                                                             idx))
        try:
            outs = row.convert(ctx)
        except ConvertError as exc:
            key = make_key(domain, opset, proto.op_type)
            raise GeError("E11010", {"opname": name, "optype": key, "reason": str(exc)}) from None
        self.rename(ctx, name)
        edges = []
        for i, out_name in enumerate(proto.output):
            edge = outs[i] if i < len(outs) else None
            edges.append(edge)
            if not out_name:
                continue
            if edge is None:
                if used[i]:
                    key = make_key(domain, opset, proto.op_type)
                    raise GeError("E11010", {"opname": name, "optype": key, "reason":
                                             f"output {i} ({out_name}) is used but the IR op "
                                             f"has no output for it"})
                continue
            self.scope[out_name] = edge
            if edge[0].type == "Const":
                self.const_of[out_name] = edge[0].attr("value").numpy()
        if self.is_root:
            self.state.onnx_outputs[proto.name] = edges

    def rename(self, ctx: NodeCtx, name: str) -> None:
        """One emitted node keeps the ONNX name; several become PartitionedCall_<inner>_<n>."""
        if len(ctx.emitted) == 1:
            node = ctx.emitted[0][0]
            self.graph.rename_node(node, self.graph.unique_name(name))
            return
        for node, suffix in ctx.emitted:
            final = f"PartitionedCall_{name}_{suffix}_{self.state.counter}"
            self.state.counter += 1
            self.graph.rename_node(node, self.graph.unique_name(final))

    def build_branch(self, proto: onnx.NodeProto, if_node: Node, attr: str, index: int) -> str:
        sub_proto = next(s for a, s in _subgraph_attrs(proto) if a == attr)
        all_captures = sorted(set().union(*(outer_names(s) for _, s in _subgraph_attrs(proto))))
        sub_name = _branch_name(self.full_name(proto.name), attr, index)
        sub = Graph(sub_name)
        _GraphBuilder(self.state, sub_proto, sub, sub_name, all_captures).build()
        self.state.root.add_subgraph(sub, parent_node=if_node)
        return sub_name

    # -- outputs -------------------------------------------------------------------------------
    def output_edges(self) -> list:
        if self.is_root and self.state.options.out_tensors:
            edges = []
            for name in self.state.options.out_tensors:
                if name not in self.scope:
                    raise GeError("E10016", {"opname": name, "parameter": "out_nodes"})
                edges.append((name, self.scope[name]))
            return edges
        if self.is_root and self.state.options.out_nodes:
            edges = []
            for name, index in self.state.options.out_nodes:
                outs = self.state.onnx_outputs.get(name)
                if outs is None:
                    raise GeError("E10016", {"opname": name, "parameter": "out_nodes"})
                if index >= len(outs) or outs[index] is None:
                    raise GeError("E10003", {"value": f"{name}:{index}",
                                             "parameter": "out_nodes",
                                             "reason": f"node {name} has {len(outs)} "
                                                       f"outputs."})
                edges.append((f"{name}:{index}", outs[index]))
            return edges
        if not self.g.output:
            raise GeError("E16001", {"type": "output"})
        edges = []
        for o in self.g.output:
            if o.name not in self.scope:
                raise invalid_model("", f"graph output {o.name} is produced by no node")
            edges.append((o.name, self.scope[o.name]))
        return edges

    def add_net_output(self) -> None:
        edges = self.output_edges()
        name = NET_OUTPUT if self.is_root else f"{self.graph.name}_{NET_OUTPUT}"
        node = add_node(self.graph, "NetOutput", name, len(edges), 0, [])
        for k, (tensor_name, edge) in enumerate(edges):
            self.graph.connect(edge[0], edge[1], node, k)
            node.in_desc(k).name = tensor_name
            if not self.is_root:
                node.set_input_attr(ATTR_PARENT_INDEX, k, k)

    def build(self) -> Graph:
        self.add_inputs()
        self.add_initializers()
        consumed = self.consumed()
        for proto in self.node_order():
            self.convert(proto, consumed)
        self.add_net_output()
        return self.graph


def build_graph(model: onnx.ModelProto, options: ParseOptions, model_dir: Optional[str],
                graph_name: str) -> Graph:
    """The whole parse of a (copied, mutable) ModelProto."""
    name_unnamed_nodes(model.graph, [0])
    renamed = unique_node_names(model.graph)
    opsets = read_opsets(model)
    precheck(model.graph, opsets)
    root = Graph(graph_name)
    state = _State(root, opsets, options, model_dir, renamed=renamed)
    _GraphBuilder(state, model.graph, root, "", []).build()
    return root

