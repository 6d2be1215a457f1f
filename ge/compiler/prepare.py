"""Graph preparation: shape inference, constant folding, Identity/Dropout removal, attributes
resolved from the inferred shapes (`OpDef.resolve`)."""
from __future__ import annotations

import logging

import numpy as np

from ge.graph.attr_names import ATTR_PARENT_INDEX
from ge import ops
from ge.ops import Role
from ge.errors import GeError
from ge.graph import Graph, Node
from ge.graph.lowprec import call_lowprec
from ge.graph.types import DataType, dtype_size, from_numpy_dtype

from ge.passes.runner import blame_pass
from .branches import inline_constant_ifs, push_constants
from .formats import insert_layout_transposes
from .graph_utils import (CONST_TYPES, bypass, const_value, has_const_value, make_const,
                          remove_dead_nodes)

log = logging.getLogger(__name__)

# Ops that are never folded: graph structure, and ops whose value is not a pure function of
# constant inputs.
NO_FOLD_ROLES = frozenset({Role.DATA, Role.CONST, Role.OUTPUT, Role.CONTROL})
# Do not fold into constants larger than this many bytes (keeps the OM small when a cheap op
# would blow up a weight, e.g. Expand of a scalar).
FOLD_LIMIT_BYTES = 64 << 20
# Ops that only replicate their input (`OpDef.replicates`): folded only while the result stays
# small or close to the input's size (a LayerNorm gamma broadcast to [N, S, H] would add
# megabytes of weights).
EXPAND_FOLD_BYTES, EXPAND_FOLD_RATIO = 64 << 10, 4
# Values known at compile time are carried through inference (Shape of a static tensor and the
# small shape arithmetic after it) so that ops reading a shape input infer; only this small.
VALUE_LIMIT_ELEMENTS = 1024
# Folding, pushing constants into subgraphs and inlining Ifs feed one another (a folded
# condition inlines a branch whose shape arithmetic then folds): repeated until nothing
# changes, at most this many rounds.
PREPARE_ROUNDS = 8


def infer_shapes(graph: Graph, known: dict | None = None) -> None:
    """Infer output descs of every node in topological order, subgraphs included.  Small
    values computable at compile time (see `_infer_value`) feed the inference of their
    consumers, inside subgraphs too (`known`: the values of a subgraph's Data nodes); the
    graph itself is not changed (folding is `fold_constants`)."""
    values: dict = dict(known or {})
    for node in graph.topo_order():
        if ops.role_of(node.type) == Role.DATA:
            _sync_data(graph, node)
            _check_sizes(node)
            continue
        opdef = ops.get(node.type)
        if opdef is None:
            raise GeError("E10501", {"opname": node.name, "optype": node.type})
        # Input descs mirror the producers' output descs.
        for i, edge in enumerate(node.inputs()):
            if edge is not None:
                node.update_input_desc(i, edge[0].out_desc(edge[1]))
        for name in ops.live_subgraphs(node, opdef, values):  # not a branch never taken
            sub = graph.get_subgraph(node.subgraphs.get(name, ""))
            if sub is None:
                continue
            _bind_subgraph_inputs(node, sub)
            infer_shapes(sub, _subgraph_values(node, sub, values))
        if node.type != "NetOutput":
            try:
                ops.infer_node(node, values)
            except GeError as error:
                raise blame_pass(node, error) from None
            _check_sizes(node)
            _infer_value(node, opdef, values)


# An OM addresses memory with signed 64-bit offsets: a tensor beyond them cannot be planned.
_MAX_TENSOR_BYTES = (1 << 63) - 1


def _check_sizes(node: Node) -> None:
    """EP0301 naming the tensor whose shape needs more bytes than an OM can address (dims from
    the model, or their products, that overflow int64)."""
    for idx in range(node.num_outputs):
        desc = node.out_desc(idx)
        count = 1
        for d in desc.shape:
            count *= max(int(d), 1)
        size = count * dtype_size(desc.data_type)
        if size > _MAX_TENSOR_BYTES:
            raise GeError("EP0301", {"reason": f"output {idx} of {node.type} {node.name} has "
                                               f"shape {list(desc.shape)}: {size} bytes, more "
                                               f"than a 64-bit offset can address"})


def _infer_value(node: Node, opdef, values: dict) -> None:
    """Record the outputs of `node` in `values` when they are known at compile time: Shape
    of a tensor with a static shape, or a registry kernel over small constant inputs."""
    if opdef.role in NO_FOLD_ROLES or opdef.kernel is None:
        return
    if opdef.shape_only:
        value = static_shape_value(node, opdef)
        if value is not None:
            values[(node.name, 0)] = value
        return
    inputs = []
    for i, edge in enumerate(node.inputs()):
        if edge is None:
            inputs.append(None)
            continue
        value = _known_value(edge, values)
        if value is None:
            return
        inputs.append(value)
    if not any(v is not None for v in inputs):
        return
    try:
        outputs = _run_kernel(opdef, node, inputs)
    except Exception:  # noqa: BLE001 - a value we cannot compute is simply unknown
        log.debug("no compile-time value for %s (%s)", node.name, node.type, exc_info=True)
        return
    for idx, out in enumerate(outputs):
        arr = np.asarray(out)
        if arr.size <= VALUE_LIMIT_ELEMENTS:
            values[(node.name, idx)] = arr


def _run_kernel(opdef, node: Node, inputs: list) -> list:
    """The registry kernel of `node` on `inputs`, float16/bfloat16 slots computed in float32
    and rounded as the compiled kernels do (ge.graph.lowprec)."""
    return call_lowprec(opdef.kernel, inputs, ops.resolved_attrs(opdef, node),
                        [node.in_desc(i).data_type for i in range(node.num_inputs)],
                        [node.out_desc(i).data_type for i in range(node.num_outputs)])


def _known_value(edge, values: dict):
    """The small compile-time value of a producer output, else None."""
    value = values.get((edge[0].name, edge[1]))
    if value is None and edge[1] == 0:
        value = const_value(edge[0])
    return None if value is None or value.size > VALUE_LIMIT_ELEMENTS else value


def _subgraph_values(parent: Node, sub: Graph, values: dict) -> dict:
    """The known values of the subgraph's Data nodes: those of the parent inputs they read."""
    known = {}
    for data in sub.data_nodes():
        idx = data.attr(ATTR_PARENT_INDEX)
        edge = parent.input(idx) if idx is not None and idx < parent.num_inputs else None
        value = None if edge is None else _known_value(edge, values)
        if value is not None:
            known[(data.name, 0)] = value
    return known


def static_shape_value(node: Node, opdef):
    """The output of a `shape_only` op (Shape, Size) whose input has a static shape, else
    None: its kernel run on a stand-in of that shape (a broadcast scalar: no memory)."""
    shape = list(node.in_desc(0).shape)
    if any(d < 0 for d in shape):  # unknown dim or unknown rank ([-2])
        return None
    stand_in = np.broadcast_to(np.zeros((), np.float32), shape)
    return np.asarray(opdef.kernel([stand_in], ops.resolved_attrs(opdef, node))[0])


def _sync_data(graph: Graph, node: Node) -> None:
    """A Data node's output desc is its input desc (set by the parser or a parent If)."""
    if node.num_inputs:
        node.update_output_desc(0, node.in_desc(0))


def _bind_subgraph_inputs(parent: Node, sub: Graph) -> None:
    for data in sub.data_nodes():
        idx = data.attr(ATTR_PARENT_INDEX)
        if idx is None or idx >= parent.num_inputs:
            continue
        desc = parent.in_desc(idx)
        if data.num_inputs:
            data.update_input_desc(0, desc)
        data.update_output_desc(0, desc)


def fold_constants(graph: Graph, dead_code: bool = True) -> int:
    """Replace every node whose inputs are all constants by Const nodes (then remove what no
    longer reaches an output, unless `dead_code` is False).  Returns count."""
    folded = 0
    for node in graph.topo_order():
        opdef = ops.get(node.type)
        if opdef is None or opdef.role in NO_FOLD_ROLES or opdef.kernel is None:
            continue
        if node.graph is None:
            continue
        edges = node.inputs()
        if not any(e is not None for e in edges):
            continue
        # Shape or Size of a statically shaped tensor folds although its input is computed (the
        # parser's LayerNorm expansion feeds Shape(x) into BroadcastTo).
        shape_value = static_shape_value(node, opdef) if opdef.shape_only else None
        if shape_value is None and any(e is not None and not has_const_value(e[0])
                                       for e in edges):
            continue            # asked before the values: a derived one is not computed
        values = [None if e is None else const_value(e[0]) for e in edges]
        try:
            outputs = ([shape_value] if shape_value is not None
                       else _run_kernel(opdef, node, values))
        except Exception:  # noqa: BLE001 - e.g. in a branch never taken (not inferred either)
            log.debug("not folded: %s (%s)", node.name, node.type, exc_info=True)
            continue
        out_bytes = sum(np.asarray(o).nbytes for o in outputs)
        if out_bytes > FOLD_LIMIT_BYTES:
            continue
        if opdef.replicates and out_bytes > EXPAND_FOLD_BYTES and \
                out_bytes > EXPAND_FOLD_RATIO * sum(v.nbytes for v in values if v is not None):
            continue
        for idx, out in enumerate(outputs):
            if not node.consumers(idx):
                continue
            arr = np.asarray(out)
            if arr.dtype == np.float64 and node.out_desc(idx).data_type != from_numpy_dtype(arr.dtype):
                arr = arr.astype(np.float32)
            bf16 = node.out_desc(idx).data_type == DataType.DT_BF16
            const = make_const(graph, f"{node.name}_folded" if idx == 0 else
                               f"{node.name}_folded_{idx}", arr, origin=node.origin,
                               data_type=DataType.DT_BF16 if bf16 else None)
            graph.replace_uses((node, idx), (const, 0))
        graph.erase_node(node)
        folded += 1
    if dead_code:
        remove_dead_nodes(graph)
    return folded


def remove_bypass_ops(graph: Graph) -> int:
    removed = 0
    for node in graph.topo_order():
        if ops.role_of(node.type) == Role.BYPASS and node.input(0) is not None:
            if node.type == "Dropout" and any(node.consumers(i) for i in range(1, node.num_outputs)):
                continue  # the mask is used: keep the op
            bypass(graph, node)
            removed += 1
    return removed


def resolve_attrs(graph: Graph) -> int:
    """Apply every op's `OpDef.resolve` (attributes fixed by the now-known input shapes, e.g.
    ONNX auto_pad into explicit pads), subgraphs included.  Returns the nodes changed."""
    changed = 0
    for g in [graph] + graph.get_all_subgraphs():
        for node in g.topo_order():
            opdef = ops.get(node.type)
            if opdef is None or opdef.resolve is None:
                continue
            updates = opdef.resolve(ops.infer_ctx(node, opdef=opdef))
            for key, value in updates.items():
                spec = opdef.attr_spec(key)
                if spec is not None:
                    node.set_attr_kind(key, spec.kind, value)
                else:
                    node.set_attr(key, value)
            changed += bool(updates)
    return changed


def switched_off(options: dict | None, key: str) -> bool:
    """The registered optimisation switches (--oo_constant_folding=false,
    --oo_dead_code_elimination=false) turn a default-on optimisation off."""
    return (options or {}).get(key, "").strip().lower() == "false"


def prepare(graph: Graph, options: dict | None = None) -> None:
    """Every model needs this: shapes, folding (light models build weights with
    ConstantOfShape; shape arithmetic, inside subgraphs too), If with a constant condition
    replaced by its branch, no-op removal, dead code."""
    fold = not switched_off(options, "ge.oo.constantFolding")
    dce = not switched_off(options, "ge.oo.deadCodeElimination")
    for g in [graph] + graph.get_all_subgraphs():
        remove_bypass_ops(g)
        insert_layout_transposes(g)
    infer_shapes(graph)
    for _ in range(PREPARE_ROUNDS):
        changed = 0
        for g in [graph] + graph.get_all_subgraphs():
            if g is not graph and graph.get_subgraph(g.name) is not g:
                continue  # removed this round with the If it belonged to
            if fold:
                changed += fold_constants(g, dce) + push_constants(g) + inline_constant_ifs(g)
            changed += remove_dead_nodes(g) if dce else 0
        if not changed:
            break
        infer_shapes(graph)  # new Consts and inlined branches: their consumers infer again
    resolve_attrs(graph)


__all__ = ["infer_shapes", "fold_constants", "remove_bypass_ops", "resolve_attrs", "prepare",
           "CONST_TYPES"]
