"""GraphDef → ge.graph.Graph: pre-check, Data / Const / node / NetOutput construction, the
walk over a body (root graph, function, cond branch); control flow itself is _control's.
Knows no op beyond the builder ops of _mappings.BUILDER_OPS: every other fact comes from the
mapping table and the op registry.  Every emitted node gets its shape inferred at once (ge.ops.infer_node) so that
converters can read static shapes and small parse-time values (axes, sizes, predicates).
"""
from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from ge import ops
from ge.errors import GeError
from ge.graph import Graph, Node, TensorDesc
from ge.graph.attr_names import ATTR_PARENT_INDEX
from ge.graph.types import AttrValueType as VT
from ge.ops.registry import Role
from ge.parser._emit import add_node, make_tensor

from ._context import ConvertError, TfCtx, decode_attr
from ._custom import row_for
from ._mappings import BUILDER_OPS, PASS_THROUGH, VARIABLE_OPS
from ._model import ge_dtype, invalid_model, tensor_to_array
from ._control import (BUILDER_OUTPUTS, DEAD, PENDING, Body, control_flow_error, convert_if,
                       convert_while, find_frames, split_ref, unroll_frame, v1_cond_outputs)
from ._options import ParseOptions
from ._v1_cond import find_cond_groups

__all__ = ["build_graph", "default_outputs"]

NET_OUTPUT = "Node_Output"
_VALUE_LIMIT = 1 << 16        # elements of a computed parse-time value
_NO_VALUE_ROLES = {Role.DATA, Role.OUTPUT, Role.CONTROL}


@dataclass
class _State:
    root: Graph
    options: ParseOptions
    functions: dict                 # name -> FunctionDef
    values: dict = field(default_factory=dict)    # (node name, index) -> np.ndarray
    lazy: dict = field(default_factory=dict)      # root Const name -> bytes left in the file
    counter: int = 0                # PartitionedCall_<name>_<suffix>_<counter>


class _Builder:
    """Converts one body (root graph or function) into `graph`."""

    def __init__(self, state: _State, body: Body, graph: Graph, prefix: str,
                 arg_edges: Optional[list] = None, edges: Optional[dict] = None):
        self.state, self.body, self.graph, self.prefix = state, body, graph, prefix
        self.in_function = arg_edges is not None
        self.by_name = {n.name: n for n in body.nodes}
        # TF node name -> [Edge | DEAD | PENDING | None]; `edges` seeds values from outside
        self.edges: dict = dict(edges or {})
        self.args = dict(zip(body.args, arg_edges or []))
        self.placeholders: list = []          # the needed ones, in GraphDef order
        self.frame_of, self.frame_enters = find_frames(self)
        self.cond_groups = find_cond_groups(body.nodes, self.all_refs, set(self.frame_of)) \
            if any(n.op == "Switch" for n in body.nodes) else {}
        self.cond_outputs: dict = {}            # Merge name -> [Edge, None] of a built If

    def full_name(self, name: str) -> str:
        return f"{self.prefix}/{name}" if self.prefix else name

    def op_of(self, name: str) -> str:
        node = self.by_name.get(name)
        return node.op if node is not None else ""

    def outputs_of(self, name: str) -> tuple:
        """Output arg names of a node's op (function bodies name edges node:arg:index)."""
        op = self.op_of(name)
        row = row_for(op)
        return BUILDER_OUTPUTS.get(op) or (row.outputs if row is not None else ("output",))

    def nested(self, body: Body, graph: Graph, prefix: str,
               arg_edges: Optional[list] = None) -> "_Builder":
        """A builder of another body (function, branch) sharing this parse's state."""
        return _Builder(self.state, body, graph, prefix, arg_edges)

    def refs(self, node) -> list:
        return [split_ref(r, self.in_function, self.outputs_of) for r in node.input
                if not r.startswith("^")]

    def all_refs(self, node) -> list:
        """[(src, index, is_control)] of a node's inputs, function args left out."""
        out = []
        for ref in node.input:
            src, idx = split_ref(ref.lstrip("^"), self.in_function, self.outputs_of)
            if src:
                out.append((src, idx, ref.startswith("^")))
        return out

    # -- pre-check ----------------------------------------------------------------------------
    def needed(self, outputs: list) -> list:
        """The nodes the outputs depend on (data inputs), in a stable topological order.
        TF1 loops are made acyclic: a Merge does not wait for its NextIteration, and an Exit
        waits for every Enter of its frame (the whole loop is unrolled at its first Exit)."""
        order, seen, stack = [], set(), [n for n, _ in outputs if n]
        preds: dict = {}
        while stack:
            name = stack.pop()
            if name in seen:
                continue
            seen.add(name)
            node = self.by_name[name]
            deps = []
            for ref in node.input:
                src, _ = split_ref(ref.lstrip("^"), self.in_function, self.outputs_of)
                if not src or src in self.edges:      # an arg, or a value seeded from outside
                    continue
                if src not in self.by_name:
                    raise GeError("E12009", {"opname": ref.lstrip("^"),
                                             "inputopname": self.full_name(name)})
                if not ref.startswith("^"):
                    stack.append(src)
                    if not (node.op == "Merge" and self.by_name[src].op == "NextIteration"):
                        deps.append(src)
            if node.op == "Exit":
                enters = self.frame_enters.get(self.frame_of.get(name), [])
                deps += enters
                stack += enters
            group = self.cond_groups.get(name) if node.op == "Merge" else None
            if group is not None:      # a TF1 cond's If is built at its first Merge
                outside = [group.pred[0]] + group.switches + [c for c, _ in group.captures]
                outside = [n for n in outside if n in self.by_name]
                deps += outside
                stack += outside
            preds[name] = deps
        index = {n.name: i for i, n in enumerate(self.body.nodes)}
        users: dict = {n: [] for n in preds}
        pending = {n: len(set(d)) for n, d in preds.items()}
        for n, deps in preds.items():
            for d in set(deps):
                users[d].append(n)
        ready = [(index[n], n) for n, c in pending.items() if c == 0]
        heapq.heapify(ready)
        while ready:
            _, n = heapq.heappop(ready)
            order.append(self.by_name[n])
            for u in users[n]:
                pending[u] -= 1
                if pending[u] == 0:
                    heapq.heappush(ready, (index[u], u))
        if len(order) != len(preds):
            stuck = sorted(n for n, c in pending.items() if c > 0)
            raise invalid_model(f"the graph has a cycle through nodes {', '.join(stuck[:8])}")
        return order

    def precheck(self, nodes: list) -> None:
        """Unfrozen graphs first (EP0502), then every unsupported node in one E13010."""
        variables = [n for n in nodes if n.op in VARIABLE_OPS]
        if variables:
            raise GeError("EP0502", {"nodes": ", ".join(f"{self.full_name(n.name)} ({n.op})"
                                                        for n in variables[:10])})
        unsupported = [n for n in nodes if row_for(n.op) is None and n.op not in BUILDER_OPS]
        if unsupported:
            first = unsupported[0]
            raise GeError("E13010", {"opname": self.full_name(first.name), "optype": first.op,
                                     "nodes": ", ".join(f"{self.full_name(n.name)} ({n.op})"
                                                        for n in unsupported),
                                     "opsets": ""})
        for n in nodes:
            for attr in ("then_branch", "else_branch", "cond", "body"):
                if attr in n.attr and n.op in ("If", "StatelessIf", "While", "StatelessWhile"):
                    fname = n.attr[attr].func.name
                    if fname not in self.state.functions:
                        if not self.state.functions:
                            raise GeError("E12029", {})
                        raise GeError("E12013", {"functionname": fname})

    # -- values and shapes --------------------------------------------------------------------
    def value_of(self, edge) -> Optional[np.ndarray]:
        if edge is None or edge is DEAD:
            return None
        node, idx = edge
        if node.type == "Const":
            return node.attr("value").numpy()
        return self.state.values.get((node.name, idx))

    def infer(self, node: Node) -> None:
        for i, edge in enumerate(node.inputs()):
            if edge is not None:
                node.update_input_desc(i, edge[0].out_desc(edge[1]))
        if node.type == "Data" or node.type == "NetOutput":
            return
        opdef = ops.get(node.type)
        if opdef.infer is None and not opdef.subgraphs:
            return
        results = ops.infer_node(node, self.state.values)
        if opdef.role in _NO_VALUE_ROLES or opdef.role == Role.CONST or opdef.kernel is None:
            return
        if node.type == "Shape":
            shape = list(node.in_desc(0).shape)
            if shape != [-2] and all(d >= 0 for d in shape):
                dtype = np.int64 if node.attr("dtype") == 9 else np.int32
                self.state.values[(node.name, 0)] = np.array(shape, dtype=dtype)
            return
        inputs = [self.value_of(e) for e in node.inputs()]
        if any(v is None for v, e in zip(inputs, node.inputs()) if e is not None):
            return
        if any(s is None or any(d < 0 for d in s) or math.prod(s) > _VALUE_LIMIT
               for s, _ in results):
            return
        outs = opdef.kernel(inputs, ops.resolved_attrs(opdef, node))
        for i, out in enumerate(outs):
            self.state.values[(node.name, i)] = np.asarray(out)

    # -- building -----------------------------------------------------------------------------
    def add_node(self, op_type: str, name: str, n_in: int, n_out: int, origin: list) -> Node:
        return add_node(self.graph, op_type, name, n_in, n_out, origin)

    def add_placeholder(self, node, index: int) -> list:
        name = self.full_name(node.name)
        dtype = ge_dtype(node.attr["dtype"].type, f"Placeholder {name}")
        shape = decode_attr(node.attr["shape"], name) if "shape" in node.attr else None
        user = self.state.options.input_shapes.get(node.name)
        if user is not None:
            if shape is not None and len(shape) != len(user):
                raise GeError("E10001", {"value": f"{node.name}:{','.join(map(str, user))}",
                                         "parameter": "--input_shape",
                                         "reason": f"the model gives input {node.name} rank "
                                         f"{len(shape)}, the option rank {len(user)}."})
            shape = user
        desc = TensorDesc(shape if shape is not None else [-2], self.state.options.input_format,
                          dtype)
        data = self.add_node("Data", name, 1, 1, [node.name])
        data.set_attr_kind("index", VT.VT_INT, index)
        data.set_attr_kind("data_type", VT.VT_INT, int(dtype))
        data.update_input_desc(0, desc)
        data.update_output_desc(0, desc)
        return [(data, 0)]

    def add_const(self, node) -> list:
        name = self.full_name(node.name)
        content = None if self.in_function else self.state.lazy.get(node.name)
        value = tensor_to_array(node.attr["value"].tensor, name, content)
        const = self.add_node("Const", name, 0, 1, [node.name])
        const.set_attr_kind("value", VT.VT_TENSOR, make_tensor(value))
        ops.infer_node(const)
        return [(const, 0)]

    def add_function_args(self) -> None:
        """A branch body: one Data per function arg, bound to If input index + 1."""
        for index, arg in enumerate(self.body.args):
            data = self.add_node("Data", self.full_name(arg), 1, 1, [arg])
            data.set_attr_kind("index", VT.VT_INT, index)
            data.set_attr_kind(ATTR_PARENT_INDEX, VT.VT_INT, index + 1)
            self.args[arg] = (data, 0)

    def input_edges(self, node) -> list:
        edges = []
        for src, idx in self.refs(node):
            if not src:
                edges.append(self.args[idx])
                continue
            outs = self.edges[src]
            if idx >= len(outs) or outs[idx] is None:
                raise GeError("E12009", {"opname": f"{src}:{idx}",
                                         "inputopname": self.full_name(node.name)})
            edges.append(outs[idx])
        return edges

    def convert(self, node) -> list:
        ins = self.input_edges(node)
        op = node.op
        name = self.full_name(node.name)
        if op == "Merge":
            if any(e is PENDING for e in ins):
                return v1_cond_outputs(self, node)
            alive = [(i, e) for i, e in enumerate(ins) if e is not DEAD]
            if not alive:
                return [DEAD, DEAD]
            return [alive[0][1], self.const_edge(name, np.array(alive[0][0], np.int32))]
        for marker in (DEAD, PENDING):
            if any(e is marker for e in ins):
                return [marker] * 8
        if op == "Placeholder":
            if self.in_function:
                raise invalid_model(f"function body node {name} is a Placeholder")
            return self.add_placeholder(node, self.placeholders.index(node.name))
        if op == "Const":
            return self.add_const(node)
        if op in PASS_THROUGH:
            return ins
        if op == "NoOp":
            return []
        if op == "Switch":
            pred = self.value_of(ins[1])
            if pred is None and node.name in self.cond_groups:
                return [PENDING, PENDING]      # inside a data-dependent cond: an If branch
            if pred is None:
                raise control_flow_error(name, op, "its predicate depends on the model "
                                          "inputs; TF1 control flow (Switch / Merge) is folded "
                                          "only when the predicate is known at compile time")
            return [DEAD, ins[0]] if bool(np.asarray(pred).reshape(-1)[0]) else [ins[0], DEAD]
        if op == "LoopCond":
            return ins
        if op in ("If", "StatelessIf"):
            return convert_if(self, node, name, ins)
        if op in ("While", "StatelessWhile"):
            return convert_while(self, node, name, ins)
        return self.convert_mapped(node, name, ins)

    def const_edge(self, name: str, value: np.ndarray):
        const = self.add_node("Const", name + "_value_index", 0, 1, [name])
        const.set_attr_kind("value", VT.VT_TENSOR, make_tensor(value))
        ops.infer_node(const)
        return (const, 0)

    def new_ctx(self, node, name: str, ins: list) -> TfCtx:
        return TfCtx(self.graph, node, name, ins, self.value_of)

    def convert_mapped(self, node, name: str, ins: list) -> list:
        ctx = self.new_ctx(node, name, ins)
        try:
            outs = row_for(node.op).convert(ctx)
        except ConvertError as exc:
            raise GeError("E11010", {"opname": name, "optype": node.op,
                                     "reason": str(exc)}) from None
        self.finish(ctx)
        return outs

    def finish(self, ctx: TfCtx) -> None:
        """Name the emitted nodes (one keeps the TF name; several become
        PartitionedCall_<name>_<suffix>_<n>) and infer their shapes in creation order."""
        if len(ctx.emitted) == 1:
            node = ctx.emitted[0][0]
            self.graph.rename_node(node, self.graph.unique_name(ctx.name))
        else:
            for node, suffix in ctx.emitted:
                final = f"PartitionedCall_{ctx.name}_{suffix}_{self.state.counter}"
                self.state.counter += 1
                self.graph.rename_node(node, self.graph.unique_name(final))
        for node, _ in ctx.emitted:
            self.infer(node)

    # -- functions and control flow -----------------------------------------------------------
    # -- whole body ---------------------------------------------------------------------------
    def build_outputs(self) -> list:
        """Convert every node the body's outputs need; return the output edges."""
        refs = [split_ref(r, True, self.op_of) for r in self.body.rets]
        order = self.needed([(n, i) for n, i in refs if n])
        self.precheck(order)
        self.run(order)
        out = []
        for src, idx in refs:
            out.append(self.args[idx] if not src else self.edges[src][idx])
        return out

    def run(self, order: list) -> None:
        unrolled = set()
        for node in order:
            frame = self.frame_of.get(node.name)
            if frame is None:
                self.edges[node.name] = self.convert(node)
            elif node.op == "Exit" and frame not in unrolled:
                unroll_frame(self, frame, order)
                unrolled.add(frame)

    def add_net_output(self, named_edges: list, parent_index: bool = False) -> None:
        name = NET_OUTPUT if not self.prefix else f"{self.graph.name}_{NET_OUTPUT}"
        out = self.add_node("NetOutput", name, len(named_edges), 0, [])
        for k, (tensor_name, edge) in enumerate(named_edges):
            if edge is DEAD or edge is None:
                raise control_flow_error(tensor_name, "NetOutput", "this output lies on a "
                                          "branch that the constant predicates never take")
            self.graph.connect(edge[0], edge[1], out, k)
            out.in_desc(k).name = tensor_name
            if parent_index:
                out.set_input_attr(ATTR_PARENT_INDEX, k, k)

    def default_outputs(self) -> list:
        return default_outputs(self.body.nodes)

    def build_root(self) -> None:
        wanted = self.state.options.out_nodes
        for name, _ in wanted:
            if name not in self.by_name:
                raise GeError("E10016", {"opname": name, "parameter": "out_nodes"})
        for name in list(self.state.options.input_shapes):
            node = self.by_name.get(name)
            base, _, index = name.rpartition(":")
            if node is None and index == "0" and base in self.by_name:
                node = self.by_name[base]      # the tensor form "name:0" of a Placeholder
                self.state.options.input_shapes[base] = self.state.options.input_shapes[name]
            if node is None or node.op != "Placeholder":
                raise GeError("E10016", {"opname": name, "parameter": "input_shape"})
        sinks = [] if wanted else self.default_outputs()
        order = self.needed(list(wanted) or [(n, 0) for n in sinks])
        # the Placeholders the outputs need are the model inputs, indexed in GraphDef order
        needed = {n.name for n in order}
        self.placeholders = [n.name for n in self.body.nodes
                             if n.op == "Placeholder" and n.name in needed]
        self.precheck(order)
        self.run(order)
        named = []
        if wanted:
            for name, index in wanted:
                outs = self.edges[name]
                if index >= len(outs) or outs[index] is None:
                    raise GeError("E10003", {"value": f"{name}:{index}", "parameter": "out_nodes",
                                             "reason": f"node {name} has {len(outs)} outputs."})
                named.append((f"{name}:{index}", outs[index]))
        else:
            for name in sinks:
                named += [(f"{name}:{i}", e) for i, e in enumerate(self.edges[name])
                          if e is not None and e is not DEAD]
        if not named:
            raise invalid_model("the graph has no output (no sink node and no --out_nodes)")
        self.add_net_output(named)


def default_outputs(nodes) -> list:
    """The graph's sinks (nodes no node reads, by a data or a control edge), NoOps and
    Placeholders excluded, in GraphDef order: the model outputs without --out_nodes."""
    consumed = set()
    for node in nodes:
        consumed |= {split_ref(r.lstrip("^"), False, None)[0] for r in node.input}
    return [n.name for n in nodes
            if n.name not in consumed and n.op not in ("NoOp", "Placeholder")]


def build_graph(graph_def, options: ParseOptions, graph_name: str,
                lazy: Optional[dict] = None) -> Graph:
    """`lazy`: the root Const bytes left in the model file (`load_graph_file`)."""
    functions = {f.signature.name: f for f in graph_def.library.function}
    root = Graph(graph_name)
    state = _State(root, options, functions, lazy=dict(lazy or {}))
    _Builder(state, Body(list(graph_def.node)), root, "").build_root()
    return root
