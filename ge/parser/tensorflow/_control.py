"""Control flow of TensorFlow graphs, for the builder (_build._Builder, passed as `b`).

TF2: If / StatelessIf with a function library (a constant predicate inlines the taken
function, otherwise the IR If with the two functions as subgraphs) and While / StatelessWhile
(unrolled while the cond function's value is known at compile time).  TF1: Switch / Merge
groups (constant: the untaken side is dead; data-dependent: one IR If whose branches are the
nodes between Switch and Merge, _v1_cond) and while frames (Enter ... Exit, unrolled while
LoopCond is known).  Anything else is refused with EP0503 naming the node.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ge.errors import GeError
from ge.graph import Graph, Node
from ge.graph.attr_names import ATTR_PARENT_INDEX
from ge.graph.types import AttrValueType as VT

from ._context import decode_attr
from ._v1_cond import merge_inputs

__all__ = ["DEAD", "PENDING", "MAX_UNROLL", "Body", "function_body", "split_ref",
           "control_flow_error", "find_frames", "call", "convert_if", "convert_while",
           "v1_cond_outputs", "unroll_frame"]

DEAD = object()               # an untaken Switch branch (TF's dead tensors)
PENDING = object()            # inside a data-dependent TF1 cond: computed by its If
MAX_UNROLL = 1000             # loop iterations unrolled at parse time
# output arg names of the builder ops, for `node:arg:index` references in function bodies
BUILDER_OUTPUTS = {"Switch": ("output_false", "output_true"), "Merge": ("output", "value_index")}


def control_flow_error(name: str, op: str, reason: str) -> GeError:
    return GeError("EP0503", {"opname": name, "optype": op, "reason": reason})


@dataclass
class Body:
    """What is built into one Graph: the root GraphDef, a function body, a TF1 cond branch."""
    nodes: list                     # NodeDef
    args: list = field(default_factory=list)      # function arg names (bodies only)
    rets: list = field(default_factory=list)      # function output refs (bodies only)


def function_body(fdef) -> Body:
    sig = fdef.signature
    return Body(list(fdef.node_def), [a.name for a in sig.input_arg],
                [fdef.ret[a.name] for a in sig.output_arg])


def split_ref(ref: str, in_function: bool, outputs_of) -> tuple:
    """(node name, output index) of an input reference; ('', name) for a function arg.
    `outputs_of(node name)` gives the op's output arg names (function bodies name edges
    `node:arg:index`)."""
    parts = ref.split(":")
    if in_function:
        if len(parts) == 1:
            return "", parts[0]
        name, arg, idx = parts[0], parts[1], int(parts[2]) if len(parts) > 2 else 0
        names = outputs_of(name)
        return name, (names.index(arg) if arg in names else 0) + idx
    if len(parts) == 2 and parts[1].isdigit():
        return parts[0], int(parts[1])
    return ref, 0


def find_frames(b) -> tuple:
    """TF1 while loops: {node: frame name} for every node from a frame's Enter nodes
    forward (data and control edges) up to its Exit nodes, and {frame: Enter names}."""
    enters: dict = {}
    for n in b.body.nodes:
        if n.op == "Enter":
            enters.setdefault(decode_attr(n.attr["frame_name"], n.name), []).append(n.name)
    if not enters:
        return {}, {}
    users: dict = {}
    for n in b.body.nodes:
        for ref in n.input:
            src = split_ref(ref.lstrip("^"), b.in_function, b.outputs_of)[0]
            users.setdefault(src, []).append(n.name)
    frame_of: dict = {}
    for frame, names in enters.items():
        stack = list(names)
        while stack:
            name = stack.pop()
            if name in frame_of:
                continue
            node = b.by_name[name]
            if node.op == "Enter" and name not in names:
                raise control_flow_error(b.full_name(name), "Enter", "nested TF1 while "
                                          "loops are not supported")
            frame_of[name] = frame
            if node.op != "Exit":
                stack += users.get(name, [])
    return frame_of, enters


def call(b, fname: str, name: str, arg_edges: list) -> list:
    """Inline a function body into this graph; returns its output edges."""
    body = function_body(b.state.functions[fname])
    inner = b.nested(body, b.graph, name, arg_edges)
    return inner.build_outputs()


def convert_if(b, node, name: str, ins: list) -> list:
    then_f, else_f = node.attr["then_branch"].func.name, node.attr["else_branch"].func.name
    pred = b.value_of(ins[0])
    if pred is not None:                       # a constant predicate: inline the branch
        taken = then_f if bool(np.asarray(pred).reshape(-1)[0]) else else_f
        return call(b, taken, name, ins[1:])
    ctx = b.new_ctx(node, name, ins)
    n_out = len(b.state.functions[then_f].signature.output_arg)
    if_node = ctx.emit("If", ins, num_outputs=n_out)
    if_node.subgraphs = {"then_branch": branch(b, if_node, name, then_f, 0,
                                                    "then_branch"),
                         "else_branch": branch(b, if_node, name, else_f, 1,
                                                    "else_branch")}
    b.finish(ctx)
    return [(if_node, i) for i in range(n_out)]


def branch(b, if_node: Node, name: str, fname: str, index: int, attr: str) -> str:
    sub_name = f"{name}_{index}_{attr}"
    sub = Graph(sub_name)
    body = function_body(b.state.functions[fname])
    inner = b.nested(body, sub, sub_name, [])
    inner.add_function_args()
    inner.add_net_output([(r, e) for r, e in zip(body.rets, inner.build_outputs())],
                         parent_index=True)
    b.state.root.add_subgraph(sub, parent_node=if_node)
    return sub_name


def v1_cond_outputs(b, merge) -> list:
    """The outputs of a Merge of a data-dependent TF1 cond: the group becomes one If
    (built at its first Merge) whose branches are the nodes between Switch and Merge."""
    if merge.name not in b.cond_outputs:
        group = b.cond_groups[merge.name]
        name = b.full_name(merge.name)
        if group.error:
            raise control_flow_error(b.full_name(group.switches[0]), "Switch",
                                      f"its predicate depends on the model inputs and "
                                      f"the conditional cannot become an If: {group.error}")
        outside = [b.input_edges(b.by_name[sw])[0] for sw in group.switches] + \
            [b.edges[src][idx] for src, idx in group.captures]
        pred = b.edges[group.pred[0]][group.pred[1]]
        ctx = b.new_ctx(merge, name, [pred] + outside)
        if_node = ctx.emit("If", ctx.ins, num_outputs=len(group.merges))
        if_node.subgraphs = {attr: v1_branch(b, if_node, group, name, branch, attr)
                             for branch, attr in ((True, "then_branch"),
                                                  (False, "else_branch"))}
        b.finish(ctx)
        for k, m in enumerate(group.merges):
            b.cond_outputs[m] = [(if_node, k), None]
    return b.cond_outputs[merge.name]


def v1_branch(b, if_node: Node, group, name: str, branch: bool, attr: str) -> str:
    sub_name = f"{name}_{0 if branch else 1}_{attr}"
    sub = Graph(sub_name)
    inner = b.nested(Body([b.by_name[n] for n in group.branches[branch]]), sub,
                     sub_name)
    for index, (src, idx) in enumerate([(sw, None) for sw in group.switches] +
                                       group.captures):
        data = inner.add_node("Data", f"{sub_name}/{src}", 1, 1, [src])
        data.set_attr_kind("index", VT.VT_INT, index)
        data.set_attr_kind(ATTR_PARENT_INDEX, VT.VT_INT, index + 1)
        if idx is None:            # a Switch: both ports are the branch's input
            inner.edges[src] = [(data, 0), (data, 0)]
        else:
            inner.edges.setdefault(src, [None] * (idx + 1))
            inner.edges[src] += [None] * (idx + 1 - len(inner.edges[src]))
            inner.edges[src][idx] = (data, 0)
    outs = [merge_inputs(group, b.refs(b.by_name[m]))[branch] for m in group.merges]
    order = inner.needed([o for o in outs if o[0] in inner.by_name])
    inner.precheck(order)
    inner.run(order)
    inner.add_net_output([(f"{m}:0", inner.edges[src][idx])
                          for m, (src, idx) in zip(group.merges, outs)], parent_index=True)
    b.state.root.add_subgraph(sub, parent_node=if_node)
    return sub_name


def convert_while(b, node, name: str, ins: list) -> list:
    """Unrolled while the predicate is known at parse time (a loop whose trip count
    does not depend on the inputs); otherwise refused (the IR has no While op)."""
    cond_f, body_f = node.attr["cond"].func.name, node.attr["body"].func.name
    loop = list(ins)
    for it in range(MAX_UNROLL + 1):
        pred_edge = call(b, cond_f, f"{name}/cond_{it}", loop)[0]
        pred = b.value_of(pred_edge)
        if pred is None:
            raise control_flow_error(name, node.op, "its loop condition depends on the "
                                      "model inputs (the IR has no While op; only loops "
                                      "with a trip count known at compile time unroll)")
        if not bool(np.asarray(pred).reshape(-1)[0]):
            return loop
        loop = call(b, body_f, f"{name}/body_{it}", loop)
    raise control_flow_error(name, node.op, f"it runs more than {MAX_UNROLL} iterations")


def unroll_frame(b, frame: str, order: list) -> None:
    """A TF1 while loop unrolled while its LoopCond is known at parse time: each
    iteration converts the frame's nodes again (Merge takes the Enter value, then the
    NextIteration value); the Exits take the values of the last iteration."""
    members = [n for n in order if b.frame_of.get(n.name) == frame]
    step = [n for n in members if n.op not in ("Enter", "Merge", "NextIteration", "Exit")]
    conds = [n for n in members if n.op == "LoopCond"]
    for node in members:
        if node.op == "Enter":
            b.edges[node.name] = b.input_edges(node)
    for it in range(MAX_UNROLL + 1):
        for merge in (n for n in members if n.op == "Merge"):
            wanted = "NextIteration" if it else "Enter"
            picked = [(k, src, idx) for k, (src, idx) in enumerate(b.refs(merge))
                      if b.op_of(src) == wanted]
            k, src, idx = picked[0]
            b.edges[merge.name] = [b.edges[src][idx],
                                      b.const_edge(b.full_name(merge.name),
                                                      np.array(k, np.int32))]
        for node in step:
            b.edges[node.name] = b.convert(node)
        preds = [b.value_of(b.edges[c.name][0]) for c in conds]
        if not conds or any(p is None for p in preds):
            where = conds[0] if conds else members[0]
            raise control_flow_error(b.full_name(where.name), where.op, "its loop "
                                      "condition depends on the model inputs (the IR has "
                                      "no While op; only loops with a trip count known at "
                                      "compile time unroll)")
        if not bool(np.asarray(preds[0]).reshape(-1)[0]):
            break
        for node in (n for n in members if n.op == "NextIteration"):
            b.edges[node.name] = b.input_edges(node)
    else:
        raise control_flow_error(b.full_name(conds[0].name), "LoopCond",
                                  f"it runs more than {MAX_UNROLL} iterations")
    for node in (n for n in members if n.op == "Exit"):
        b.edges[node.name] = b.input_edges(node)
