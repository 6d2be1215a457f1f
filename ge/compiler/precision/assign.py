"""The dtype-assignment stage (docs/precision.md): after the graph passes and before engine
placement, every float op gets the dtype its precision mode, its mixed-precision list and the
user's files give it; Cast nodes are inserted where a value changes dtype, Casts of constants
are folded into the constants, and back-to-back Casts that cancel are removed.

Each decided node carries ATTR_PRECISION ("dtype=float16 list=white by=force_fp16") and, as
CANN's FE does, `_precision_mode_enum`; pinned nodes carry `_keep_dtype`; nodes with a chosen
implementation variant carry `_op_impl_mode_enum`.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Mapping, Optional

import numpy as np

from ge import ops
from ge.graph import DataType, Graph
from ge.graph.attr_names import (ATTR_IMPL_MODE, ATTR_KEEP_DTYPE, ATTR_PRECISION,
                                 ATTR_PRECISION_MODE_ENUM)
from ge.graph.types import to_numpy_dtype
from ge.ops import Role
from ge.ops.precision import BLACK, WHITE, is_cube, precision_list

from . import modes
from .config import PrecisionConfig, read_config

__all__ = ["FLOATS", "assign_dtypes", "PrecisionSummary", "dtype_name"]

log = logging.getLogger(__name__)

FLOATS = frozenset({DataType.DT_FLOAT, DataType.DT_FLOAT16, DataType.DT_BF16})
_F32 = DataType.DT_FLOAT
_F16_MAX = float(np.finfo(np.float16).max)
# Families whose dtypes are fixed by what they do (quantisation, image preprocessing,
# detection post-processing): the precision mode never changes them.
_FIXED_FAMILIES = frozenset({"quant", "aipp", "detection"})
_DTYPE_NAMES = {DataType.DT_FLOAT: "float32", DataType.DT_FLOAT16: "float16",
                DataType.DT_BF16: "bfloat16"}
# CANN FE's PrecisionMode enum values (fe_context_utils.h), recorded per node as CANN does.
_MODE_ENUM = {"force_fp16": 0, "allow_fp32_to_fp16": 1, "allow_mix_precision": 2,
              "allow_mix_precision_fp16": 2, "must_keep_origin_dtype": 3, "force_fp32": 4,
              "cube_fp16in_fp32out": 4, "allow_fp32_to_bf16": 6, "allow_mix_precision_bf16": 8}


def dtype_name(dt) -> str:
    return _DTYPE_NAMES.get(dt, DataType(dt).name)


@dataclass
class PrecisionSummary:
    """What the stage decided, for the OM's model attributes and the reports."""
    mode: str = ""
    counts: dict = field(default_factory=dict)    # dtype name -> number of float ops
    casts: int = 0                                # Cast nodes left in the graph by the stage
    folded: int = 0                               # constants converted in place


def _eligible(node) -> bool:
    opdef = ops.get(node.type)
    if opdef is None or opdef.role is not Role.COMPUTE or node.type == "Cast":
        return False
    if opdef.family in _FIXED_FAMILIES or opdef.shape_only:
        return False
    return any(node.in_desc(i).data_type in FLOATS for i in range(node.num_inputs)
               if node.input(i) is not None) or \
        any(node.out_desc(i).data_type in FLOATS for i in range(node.num_outputs))


@dataclass(frozen=True)
class Decision:
    ins: tuple             # wanted dtype per input slot (None = leave)
    outs: tuple            # wanted dtype per output slot (None = leave)
    dtype: DataType        # the op's compute dtype, for reports
    why: str               # mode name, keep_dtype, customize_dtypes


def _float_slots(descs) -> list:
    return [d.data_type in FLOATS for d in descs]


def _decide(node, policy: modes.Policy, cfg: PrecisionConfig, lists: Mapping,
            produced_low) -> Decision:
    ins = [node.in_desc(i) for i in range(node.num_inputs)]
    outs = [node.out_desc(i) for i in range(node.num_outputs)]
    fin, fout = _float_slots(ins), _float_slots(outs)
    origin = next((d.data_type for d, f in zip(ins + outs, fin + fout) if f), _F32)

    def uniform(dt: DataType, why: str) -> Decision:
        return Decision(tuple(dt if f else None for f in fin),
                        tuple(dt if f else None for f in fout), dt, why)

    def keep(why: str) -> Decision:
        return Decision(tuple(None for _ in fin), tuple(None for _ in fout), origin, why)

    custom = cfg.custom_for(node)
    if custom is not None:
        cin = tuple(custom.inputs[i] if i < len(custom.inputs) else None
                    for i in range(len(ins)))
        cout = tuple(custom.outputs[i] if i < len(custom.outputs) else None
                     for i in range(len(outs)))
        main = next((d for d in cout + cin if d is not None), origin)
        return Decision(cin, cout, main, "customize_dtypes")
    if cfg.keeps(node) and policy.rule != modes.ORIGIN:
        node.set_attr(ATTR_KEEP_DTYPE, 1)
        return keep("keep_dtype")
    low, rule, cube = policy.low, policy.rule, is_cube(node.type)
    if rule == modes.ORIGIN:
        return keep(policy.name)
    if rule == modes.FORCE_LOW:
        return uniform(low, policy.name)
    if rule == modes.FP32:
        return uniform(_F32, policy.name)
    if rule == modes.CUBE_IN_LOW:
        if not cube:
            return uniform(_F32, policy.name)
        # x and the weight in the low dtype, bias and outputs in float32 (fp16 in, fp32 out)
        cin = tuple((low if i < 2 else _F32) if f else None for i, f in enumerate(fin))
        return Decision(cin, tuple(_F32 if f else None for f in fout), low, policy.name)
    if rule == modes.CUBE_LOW:
        return uniform(low, policy.name) if cube else keep(policy.name)
    # MIXED
    member = lists.get(node.type, precision_list(node.type))
    if member == WHITE:
        return uniform(low, policy.name)
    if member == BLACK:
        return uniform(_F32 if origin in FLOATS else origin, policy.name)
    # gray: follow the dtype its float inputs arrive in (origin without float producers)
    return uniform(low, policy.name) if produced_low(node) else keep(policy.name)


class _Rewriter:
    """Inserts, reuses, cancels and folds Casts in one graph."""

    def __init__(self, graph: Graph, clip: bool = True):
        self.graph = graph
        self.clip = clip            # --is_weight_clip: float16 weights saturate, never inf
        self.casts: dict = {}       # (producer name, port, dtype) -> (node, port)
        self.folded = 0
        self.superseded: set = set()   # constants and Casts whose readers may have moved away

    def feed(self, dst, slot: int, want: DataType) -> None:
        edge = dst.input(slot)
        if edge is None:
            return
        src, port = edge
        have = src.out_desc(port).data_type
        if have == want:
            return
        new = self.converted(src, port, want)
        self.graph.connect(new[0], new[1], dst, slot)

    def converted(self, src, port: int, want: DataType) -> tuple:
        key = (src.name, port, int(want))
        if key in self.casts:
            return self.casts[key]
        result = self._fold(src, port, want) or self._cancel(src, want) or \
            self._cast(src, port, want)
        self.casts[key] = result
        return result

    def _fold(self, src, port: int, want: DataType) -> Optional[tuple]:
        from ge.compiler.graph_utils import const_value, make_const
        from ge.graph.lowprec import bf16_to_f32, f32_to_bf16
        value = const_value(src)
        have = src.out_desc(port).data_type
        if value is None or have not in FLOATS:
            return None
        wide = bf16_to_f32(value) if have == DataType.DT_BF16 else \
            value.astype(np.float32, copy=False)
        if want == DataType.DT_BF16:
            array, data_type = f32_to_bf16(wide), DataType.DT_BF16
        else:
            with np.errstate(over="ignore"):    # out of range: inf, as on the device ...
                array, data_type = wide.astype(to_numpy_dtype(want)), None
            if want == DataType.DT_FLOAT16 and self.clip and wide.size and \
                    (wide.max() > _F16_MAX or wide.min() < -_F16_MAX):  # ... unless clipped
                over = np.isinf(array) & np.isfinite(wide)
                array[over] = np.copysign(_F16_MAX, wide[over])
        const = make_const(self.graph, f"{src.name}_{dtype_name(want)}", array,
                           origin=src.origin, data_type=data_type)
        self.folded += 1
        self.superseded.add(src.name)
        return const, 0

    def _cancel(self, src, want: DataType) -> Optional[tuple]:
        """src is a Cast from `want`: read its input instead of casting back."""
        if src.type != "Cast" or src.input(0) is None:
            return None
        inner = src.input(0)
        if inner[0].out_desc(inner[1]).data_type != want:
            return None
        self.superseded.add(src.name)
        return inner

    def _cast(self, src, port: int, want: DataType) -> tuple:
        desc = src.out_desc(port)
        cast = self.graph.add_node("Cast", self.graph.unique_name(
            f"{src.name}_cast_{dtype_name(want)}"), inputs=[(src, port)], input_names=["x"],
            output_names=["y"], attrs={"dst_type": int(want)}, origin=src.origin)
        cast.update_input_desc(0, desc)
        cast.update_output_desc(0, desc.clone().set_data_type(want))
        return cast, 0


def _set_dtype(desc_of, n: int, wanted) -> None:
    for i in range(n):
        if wanted[i] is not None:
            desc_of(i).set_data_type(wanted[i])


def _assign_graph(graph: Graph, policy: modes.Policy, cfg: PrecisionConfig,
                  summary: PrecisionSummary) -> None:
    rw = _Rewriter(graph, cfg.weight_clip)
    lists = cfg.lists
    low = policy.low

    def produced_low(node) -> bool:
        return any(e is not None and e[0].out_desc(e[1]).data_type == low
                   and node.in_desc(i).data_type in FLOATS
                   for i, e in enumerate(node.inputs()))

    for node in graph.topo_order():
        if node.graph is None:
            continue
        opdef = ops.get(node.type)
        if _eligible(node):
            d = _decide(node, policy, cfg, lists, produced_low)
            _set_dtype(node.in_desc, node.num_inputs, d.ins)
            _set_dtype(node.out_desc, node.num_outputs, d.outs)
            _record(node, policy, d, lists)
            summary.counts[dtype_name(d.dtype)] = summary.counts.get(dtype_name(d.dtype), 0) + 1
        elif opdef is not None and opdef.role is Role.ALIAS and node.input(0) is not None:
            _follow_input(node)                # the reshape family carries bytes as they are
        elif node.type == "Cast" and node.input(0) is not None:
            src, port = node.input(0)
            node.in_desc(0).set_data_type(src.out_desc(port).data_type)
            continue
        for i in range(node.num_inputs):
            rw.feed(node, i, node.in_desc(i).data_type)
    _drop_identity_casts(graph)
    _drop_dead(graph, rw.superseded)
    summary.folded += rw.folded
    summary.casts += sum(1 for n in graph.nodes if n.type == "Cast")


def _follow_input(node) -> None:
    src, port = node.input(0)
    have = src.out_desc(port).data_type
    if node.in_desc(0).data_type in FLOATS and have in FLOATS:
        node.in_desc(0).set_data_type(have)
        node.out_desc(0).set_data_type(have)


def _record(node, policy: modes.Policy, d: Decision, lists: Mapping) -> None:
    member = lists.get(node.type, precision_list(node.type))
    node.set_attr(ATTR_PRECISION, f"dtype={dtype_name(d.dtype)} list={member} by={d.why}")
    node.set_attr(ATTR_PRECISION_MODE_ENUM, _MODE_ENUM[policy.mode])


def _drop_identity_casts(graph: Graph) -> None:
    from ge.compiler.graph_utils import bypass
    for node in list(graph.nodes):
        if node.type != "Cast" or node.input(0) is None or node.graph is None:
            continue
        src, port = node.input(0)
        if src.out_desc(port).data_type == node.out_desc(0).data_type:
            bypass(graph, node)


def _drop_dead(graph: Graph, superseded: set) -> None:
    """Constants and Casts the stage left without readers (replaced by a converted constant,
    or a Cast read through); what the graph had unread before stays."""
    for name in sorted(superseded):
        node = graph.node(name)
        if node is None or any(node.consumers(i) for i in range(node.num_outputs)) or \
                node.get_out_control_nodes():
            continue
        graph.erase_node(node)


def _apply_impl_modes(graph: Graph, cfg: PrecisionConfig) -> None:
    for node in graph.nodes:
        mode = cfg.impl_mode_for(node)
        if mode is not None:
            node.set_attr(ATTR_IMPL_MODE, mode)


def assign_dtypes(graph: Graph, options: Mapping[str, str]) -> PrecisionSummary:
    """Run the stage on the graph and its subgraphs; returns what it decided."""
    policy = modes.resolve_policy(options)
    cfg = read_config(options, policy)
    summary = PrecisionSummary(mode=policy.name)
    graphs = [graph] + graph.get_all_subgraphs()
    for g in graphs:
        _assign_graph(g, policy, cfg, summary)
        _apply_impl_modes(g, cfg)
    cfg.warn_unmatched(graphs)
    graph.sort()
    for g in graph.get_all_subgraphs():
        g.sort()
    log.info("precision %s: %s, %d casts, %d constants converted", policy.name,
             ", ".join(f"{k}={v}" for k, v in sorted(summary.counts.items())), summary.casts,
             summary.folded)
    return summary
