"""The operator registry: one OpDef per IR op (ge/ops/defs/<family>.py) and the functions every
other package uses to read it: slot naming, attributes with defaults, node-level inference.

    opdef = ge.ops.get("Conv2D")          # None for an unknown type; lookup() raises instead
    ge.ops.slot_names(opdef, 3)           # ['x', 'filter', 'bias']
    ge.ops.resolved_attrs(opdef, node)    # node attrs over the registry defaults
    ge.ops.infer_node(node, consts)       # writes the node's output descs

See docs/ops-registry.md.  This package knows nothing of the compiler or the runtime.
"""
from __future__ import annotations

from typing import Mapping, Optional

import numpy as np

from ge.errors import GeError
from ge.graph import CONST_TYPES
from ge.graph.types import DataType

from .registry import (REQUIRED, AttrSpec, InferCtx, OpDef, Port, Role, TensorInfo, all_ops,
                       get, lookup, register, role_of, types_with_role)

__all__ = ["get", "lookup", "all_ops", "register", "OpDef", "Port", "AttrSpec", "TensorInfo",
           "InferCtx", "REQUIRED", "Role", "role_of", "types_with_role", "resolved_attrs",
           "infer_node", "slot_names", "slot_ports", "required_slots",
           "infer_ctx", "live_subgraphs"]

UNKNOWN_RANK = [-2]  # desc shape of an unknown-rank tensor


def slot_ports(opdef: OpDef, n: int, *, outputs: bool = False) -> list:
    """(Port, k) per slot for a node with n input (or output) slots; k is the index inside a
    dynamic port, None for a plain port.  Plain ports before the dynamic one take the first
    slots, plain ports after it the last ones, the dynamic port everything in between."""
    ports = opdef.outputs if outputs else opdef.inputs
    dyn = [i for i, p in enumerate(ports) if p.kind == "dynamic"]
    if not dyn:
        if n > len(ports):
            raise GeError("EZ9999", {"what": f"op type {opdef.type}", "reason": f"it has "
                                     f"{len(ports)} {'outputs' if outputs else 'inputs'}, "
                                     f"not {n}"})
        return [(p, None) for p in ports[:n]]
    d = dyn[0]
    before, after = ports[:d], ports[d + 1:]
    count = n - len(before) - len(after)
    if count < 0:
        raise GeError("EZ9999", {"what": f"op type {opdef.type}", "reason": f"it needs at "
                                 f"least {len(before) + len(after)} "
                                 f"{'outputs' if outputs else 'inputs'}, got {n}"})
    return ([(p, None) for p in before] + [(ports[d], k) for k in range(count)]
            + [(p, None) for p in after])


_required_cache: dict = {}   # (op type, input count) -> required slots; entries never change


def required_slots(node) -> tuple:
    """Input slots of `node` that must be connected (its op's required ports), for
    Graph.verify.  A graph input's own slot is fed by the caller, not by an edge; an unknown op
    or a slot count its op cannot have is left to inference to report."""
    key = (node.type, node.num_inputs)
    slots = _required_cache.get(key)
    if slots is None:
        opdef = get(node.type)
        if opdef is None:
            return ()                   # not cached: the type may be registered later
        slots = _required_cache[key] = _required(opdef, node.num_inputs)
    return slots


def _required(opdef: OpDef, n: int) -> tuple:
    ports = opdef.inputs
    if opdef.role == Role.DATA or (not any(p.kind == "dynamic" for p in ports)
                                   and n > len(ports)):
        return ()
    try:
        slots = slot_ports(opdef, n)
    except GeError:
        return ()
    return tuple(i for i, (port, _) in enumerate(slots) if port.kind == "required")


def slot_names(opdef: OpDef, n: int, *, outputs: bool = False) -> list[str]:
    """CANN slot names: a dynamic port `x` expands to x0, x1, ..."""
    return [p.name if k is None else f"{p.name}{k}"
            for p, k in slot_ports(opdef, n, outputs=outputs)]


def resolved_attrs(opdef: OpDef, node) -> dict:
    """Every attribute of the node over the registry defaults (extra node attrs included)."""
    out = {}
    for spec in opdef.attrs:
        if node.has_attr(spec.name):
            out[spec.name] = node.attr(spec.name)
        elif spec.required:
            raise GeError("EZ9999", {"what": f"op {node.name} ({opdef.type})",
                                     "reason": f"required attribute {spec.name} is missing"})
        else:
            default = spec.default
            out[spec.name] = list(default) if isinstance(default, list) else default
    for name, _kind, value in node.attr_items():
        out.setdefault(name, value)
    return out


def _info_from_desc(desc, value=None, source: str = "") -> TensorInfo:
    shape = list(desc.shape)
    return TensorInfo(None if shape == UNKNOWN_RANK else tuple(shape), desc.data_type, value,
                      source)


def _source_of(src, idx: int) -> str:
    """Where an input comes from, as an error names it."""
    if src.type == "Data":
        return f"input {src.name} of graph {src.graph.name if src.graph else ''}".rstrip()
    return f"output {idx} of op {src.name} ({src.type})"


def _const_value(src, idx: int, const_values: Optional[Mapping]):
    if const_values:
        if (src.name, idx) in const_values:
            return np.asarray(const_values[(src.name, idx)])
        if idx == 0 and src.name in const_values:
            return np.asarray(const_values[src.name])
    if src.type in CONST_TYPES and idx == 0:
        value = src.attr("value")
        if value is not None:
            # a derived constant stays uncomputed: np.asarray computes it for the rare rule
            # that reads a filter's values (ge.graph.derived)
            return value.stored() if hasattr(value, "stored") else np.asarray(value)
    return None


def infer_ctx(node, const_values: Optional[Mapping] = None, opdef: Optional[OpDef] = None):
    """The InferCtx of a node: producer descs (and constant values) per input slot.  An
    unconnected slot of a required port (a graph input's own slot) uses the node's own input
    desc; an unconnected optional slot is None."""
    opdef = opdef or lookup(node.type)
    ports = slot_ports(opdef, node.num_inputs)
    ins = []
    for i, edge in enumerate(node.inputs()):
        if edge is None:
            required = i < len(ports) and ports[i][0].kind == "required"
            ins.append(_info_from_desc(node.in_desc(i)) if required else None)
            continue
        src, idx = edge
        ins.append(_info_from_desc(src.out_desc(idx), _const_value(src, idx, const_values),
                                   _source_of(src, idx)))
    return InferCtx(ins=ins, attrs=resolved_attrs(opdef, node), num_outputs=node.num_outputs,
                    op_name=node.name, op_type=node.type)


def live_subgraphs(node, opdef: OpDef, const_values: Optional[Mapping] = None) -> tuple:
    """The IR names of the subgraphs that can run: all of them, or of a two-branch op with a
    `cond` input (If) only the branch its condition picks when the condition is known at
    compile time (exporters guard a branch that would not even infer, e.g. a Squeeze of a
    dim that is not 1, behind such a condition)."""
    if opdef.subgraphs == ("branches",):        # Case: one dynamic subgraph per branch
        return tuple(k for k in node.subgraphs if k.startswith("branches"))
    if len(opdef.subgraphs) == 2 and opdef.inputs and opdef.inputs[0].name == "cond":
        edge = node.input(0) if node.num_inputs else None
        value = None if edge is None else _const_value(edge[0], edge[1], const_values)
        if value is not None and value.size == 1:
            return (opdef.subgraphs[0 if bool(value.reshape(-1)[0]) else 1],)
    return opdef.subgraphs


def _infer_from_subgraphs(node, opdef: OpDef, const_values: Optional[Mapping]) -> list:
    """If / PartitionedCall: output k is what every live subgraph's NetOutput input k agrees
    on (dims that differ between branches become -1)."""
    root = node.graph.root()
    branch_outs = []
    for ir_name in live_subgraphs(node, opdef, const_values):
        sub = root.get_subgraph(node.subgraphs.get(ir_name, ""))
        if sub is None or sub.output_node() is None:
            continue
        net = sub.output_node()
        descs = []
        for edge in net.inputs():
            descs.append(None if edge is None else edge[0].out_desc(edge[1]))
        branch_outs.append(descs)
    if not branch_outs:
        raise GeError("EZ9999", {"what": f"op {node.name} ({node.type})", "reason": "shape "
                                 "inference failed: no subgraph with a NetOutput is attached"})
    results = []
    for k in range(node.num_outputs):
        cands = [b[k] for b in branch_outs if k < len(b) and b[k] is not None]
        if not cands:
            results.append((None, DataType.DT_FLOAT))
            continue
        shapes = [list(d.shape) for d in cands]
        dt = cands[0].data_type
        if any(len(s) != len(shapes[0]) or s == UNKNOWN_RANK for s in shapes):
            results.append((None, dt))
            continue
        merged = tuple(d if all(s[j] == d for s in shapes) else -1
                       for j, d in enumerate(shapes[0]))
        results.append((merged, dt))
    return results


def _check_port_dtypes(opdef: OpDef, ctx: InferCtx) -> None:
    """Port.dtypes (the dtype rules of an OpDef, docs/custom-ops.md): EP0906 naming the slot."""
    if not any(p.dtypes for p in opdef.inputs):
        return
    names = slot_names(opdef, len(ctx.ins))
    for (port, _), name, info in zip(slot_ports(opdef, len(ctx.ins)), names, ctx.ins):
        if info is not None and port.dtypes and DataType(info.dtype) not in port.dtypes:
            raise GeError("EP0906", {"input": name, "opname": ctx.op_name, "optype": ctx.op_type,
                                     "dtype": DataType(info.dtype).name, "allowed": ", ".join(
                                         DataType(t).name for t in port.dtypes)})


def infer_node(node, const_values: Optional[Mapping] = None) -> list:
    """Infer the node's outputs and write them into its output descs (shape, origin shape and
    dtype; formats kept) and into its consumers' input descs.  `const_values` maps
    (producer name, output index) -- or a producer name for output 0 -- to a numpy array;
    Const/Constant producers are read from their `value` attr.  Returns [(shape, dtype)]."""
    opdef = lookup(node.type)
    if opdef.infer is None:
        if not opdef.subgraphs:
            raise GeError("EZ9999", {"what": f"op {node.name} ({node.type})",
                                     "reason": "it has no shape inference"})
        results = _infer_from_subgraphs(node, opdef, const_values)
    else:
        ctx = infer_ctx(node, const_values, opdef)
        _check_port_dtypes(opdef, ctx)
        results = opdef.infer(ctx)
    if len(results) != node.num_outputs:
        raise GeError("EZ9999", {"what": f"op {node.name} ({node.type})", "reason": f"shape "
                                 f"inference failed: {len(results)} outputs inferred, node has "
                                 f"{node.num_outputs}"})
    for i, (shape, dtype) in enumerate(results):
        dims = UNKNOWN_RANK if shape is None else [int(d) for d in shape]
        desc = node.out_desc(i)
        desc.set_shape(dims).set_origin_shape(dims).set_data_type(DataType(dtype))
        for dst, j in node.consumers(i):
            dst.in_desc(j).set_shape(dims).set_origin_shape(dims).set_data_type(DataType(dtype))
    return [(None if s is None else tuple(int(d) for d in s), DataType(t)) for s, t in results]

# custom operator packages (docs/custom-ops.md): declared with these, loaded by ge.ops.custom
from .custom import CKernel, CustomOp, CustomPackage, FrameworkMapping  # noqa: E402

__all__ += ["CKernel", "CustomOp", "CustomPackage", "FrameworkMapping"]
