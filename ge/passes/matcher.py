"""Pattern matching (spec/python-passes.md §6.4).

`compile_pattern` checks a pattern graph once; `Matcher.match_at(anchor)` tries one candidate
for pattern output 0 and returns a `Match` or a falsy `Failure` carrying the rule, the pattern
node and the target node where it failed (the tracer keeps the deepest failures).

Cost: candidates for output 0 are looked up by op type from an index the runner keeps, and the
structural walk is bounded by the pattern size, so a pass over a graph is linear in its size.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ge.graph import CONST_TYPES, ATTR_ORIGIN, Graph, GraphCycleError, Node, Tensor
from ge.ops import Role, get as _opdef, role_of

from .boundary import escaping_use

__all__ = ["CompiledPattern", "PatternError", "compile_pattern", "Match", "Failure", "Matcher",
           "norm_type", "creates_cycle"]

_IO_ROLES = frozenset({Role.DATA, Role.OUTPUT})  # a pattern's inputs and its output node


def norm_type(op_type: str) -> str:
    """Const and Constant match each other: both hold their value in the attr `value`."""
    return "Const" if op_type in CONST_TYPES else op_type


class PatternError(Exception):
    """The pattern graph is invalid: it never matches."""


@dataclass
class CompiledPattern:
    graph_name: str
    graph: Graph
    data_index: dict            # id(Data node) -> index attr
    outputs: list               # [(pattern node, out index)]
    captures: list              # [(pattern node, out index)]
    size: int                   # number of non-Data pattern nodes


def compile_pattern(graph: Graph, captures: list, name: Optional[str] = None) -> CompiledPattern:
    if graph.get_all_subgraphs() or any(n.subgraphs for n in graph.nodes):
        raise PatternError("pattern graph has subgraphs")
    for n in graph.nodes:
        if role_of(n.type) in _IO_ROLES:
            continue
        if n.get_in_control_nodes() or n.get_out_control_nodes():
            raise PatternError(f"pattern node {n.name} has control edges")
        opdef = _opdef(n.type)
        if opdef is not None and any(p.kind == "dynamic"
                                     for p in tuple(opdef.inputs) + tuple(opdef.outputs)):
            raise PatternError(f"pattern node {n.name}: {n.type} has dynamic inputs or outputs")
    try:
        graph.topo_order()
    except GraphCycleError as exc:
        raise PatternError(str(exc)) from None
    net = graph.output_node()
    outputs = [e for e in (net.inputs() if net is not None else []) if e is not None]
    if not outputs:
        raise PatternError("pattern graph has no outputs")
    data_index = {id(n): n.attr("index", 0) for n in graph.nodes if n.type == "Data"}
    size = sum(1 for n in graph.nodes if role_of(n.type) not in _IO_ROLES)
    return CompiledPattern(name or graph.name, graph, data_index, outputs, list(captures), size)


@dataclass
class Failure:
    rule: str
    pattern_node: str
    target_node: str
    detail: str
    depth: int = 0

    def __bool__(self):
        return False

    def __str__(self):
        return (f"pattern node {self.pattern_node} vs {self.target_node}: "
                f"{self.rule} ({self.detail})")


@dataclass
class Match:
    pattern: CompiledPattern
    node_map: dict = field(default_factory=dict)     # id(pattern node) -> target node
    pnodes: dict = field(default_factory=dict)       # id(pattern node) -> pattern node
    bind: dict = field(default_factory=dict)         # id(Data) -> (target producer, index)
    input_anchors: list = field(default_factory=list)   # per pattern input: [(node, idx)]
    input_producers: list = field(default_factory=list)
    output_anchors: list = field(default_factory=list)
    captures: list = field(default_factory=list)

    def copy(self) -> "Match":
        return Match(self.pattern, dict(self.node_map), dict(self.pnodes), dict(self.bind))

    def matched_nodes(self) -> list[Node]:
        nodes = list(self.node_map.values())
        order = getattr(self, "order", None)
        if order is not None:
            nodes.sort(key=lambda n: order.get(id(n), (1 << 62,)))
        return nodes

    def pairs(self):
        return [(self.pnodes[k], t) for k, t in self.node_map.items()]


def _value_equal(a, b) -> bool:
    """Byte-wise equality of attribute values (no float tolerance, no dtype normalisation)."""
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        if not (isinstance(a, Tensor) and isinstance(b, Tensor)):
            return False
        return (a.data_type == b.data_type and list(a.shape) == list(b.shape)
                and a.numpy().tobytes() == b.numpy().tobytes())
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_value_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, bool) != isinstance(b, bool):
        return False
    return a == b


def _ir_attrs(node: Node) -> dict:
    opdef = _opdef(node.type)
    if opdef is None:
        return {k: v for k, _kind, v in node.attr_items()
                if not k.startswith("_") and k != ATTR_ORIGIN}
    out = {}
    for spec in opdef.attrs:
        out[spec.name] = node.attr(spec.name, None if spec.required else spec.default)
    return out


class Matcher:
    """Matches one compiled pattern against one graph under a matcher config."""

    def __init__(self, pattern: CompiledPattern, const_value: bool = False,
                 ir_attr: bool = False, candidates=None):
        self.p = pattern
        self.const_value, self.ir_attr = const_value, ir_attr
        self.candidates = candidates      # callable: normalised type -> list of target nodes
        self._attr_cache: dict = {}

    # -- node rules ----------------------------------------------------------------------
    def _node_rule(self, p: Node, t: Node) -> Optional[tuple]:
        if norm_type(p.type) != norm_type(t.type):
            return "op_type", f"pattern wants {p.type}, target is {t.type}"
        if p.type in CONST_TYPES:
            if self.const_value and p.has_attr("value"):
                pv = p.get_attr("value")
                tv = t.attr("value")
                if not _value_equal(pv, tv):
                    return "const_value", "constant value, shape or dtype differs"
            return None
        if self.ir_attr:
            pa = self._attr_cache.setdefault(id(p), _ir_attrs(p))
            ta = _ir_attrs(t)
            if set(pa) != set(ta):
                return "ir_attr", f"attribute names differ: {sorted(pa)} vs {sorted(ta)}"
            for k in pa:
                if not _value_equal(pa[k], ta[k]):
                    return "ir_attr", f"attribute {k}: pattern {pa[k]!r}, target {ta[k]!r}"
        return None

    # -- structural walk -----------------------------------------------------------------
    def _walk(self, m: Match, p: Node, t: Node) -> Optional[Failure]:
        queue = [(p, t)]
        used = {id(v): k for k, v in m.node_map.items()}
        while queue:
            p, t = queue.pop()
            mapped = m.node_map.get(id(p))
            if mapped is not None:
                if mapped is not t:
                    return Failure("shared_node", p.name, t.name,
                                   f"pattern node already bound to {mapped.name}",
                                   len(m.node_map))
                continue
            if id(t) in used:
                return Failure("overlap", p.name, t.name,
                               "target node already bound to another pattern node",
                               len(m.node_map))
            bad = self._node_rule(p, t)
            if bad is not None:
                return Failure(bad[0], p.name, t.name, bad[1], len(m.node_map))
            p_in = [(i, e) for i, e in enumerate(p.inputs()) if e is not None]
            t_in = [(i, e) for i, e in enumerate(t.inputs()) if e is not None]
            if len(p_in) != len(t_in):
                return Failure("input_count", p.name, t.name,
                               f"pattern has {len(p_in)} connected inputs, target has "
                               f"{len(t_in)}", len(m.node_map))
            m.node_map[id(p)] = t
            m.pnodes[id(p)] = p
            used[id(t)] = id(p)
            for (_, (pp, pidx)), (_, (tp, tidx)) in zip(p_in, t_in):
                if pp.type == "Data":
                    prev = m.bind.get(id(pp))
                    if prev is None:
                        m.bind[id(pp)] = (tp, tidx)
                    elif prev[0] is not tp:
                        return Failure("input_binding", pp.name, tp.name,
                                       f"pattern input already bound to {prev[0].name}",
                                       len(m.node_map))
                    continue
                if pidx != tidx:
                    return Failure("output_index", pp.name, tp.name,
                                   f"pattern uses output {pidx}, target uses {tidx}",
                                   len(m.node_map))
                queue.append((pp, tp))
        return None

    def _finish(self, m: Match) -> Optional[Failure]:
        mapped_ids = {id(t) for t in m.node_map.values()}
        for did, (tp, _) in m.bind.items():
            if id(tp) in mapped_ids:
                return Failure("input_binding", "Data", tp.name,
                               "a pattern input is bound to a matched node", len(m.node_map))
        out_anchors = []
        for p, idx in self.p.outputs:
            if p.type == "Data":
                if id(p) not in m.bind:
                    return Failure("unbound_output", p.name, "-",
                                   "pattern output is an unbound input", len(m.node_map))
                out_anchors.append(m.bind[id(p)])
            else:
                out_anchors.append((m.node_map[id(p)], idx))
        escape = escaping_use(m.node_map.values(), mapped_ids, out_anchors)
        if escape is not None:
            t, j, dst = escape
            return Failure("boundary", t.name, dst.name,
                           f"{t.name}:{j} is used outside the match by {dst.name}",
                           len(m.node_map))
        # boundary inputs: one per pattern input (by index), anchors = matched consumers
        datas = sorted((n for n in self.p.graph.nodes if n.type == "Data"),
                       key=lambda n: self.p.data_index[id(n)])
        for d in datas:
            if id(d) not in m.bind:
                m.input_anchors.append([])
                m.input_producers.append(None)
                continue
            anchors = []
            for dst, k in d.consumers(0):
                if dst.type == "NetOutput":
                    continue
                t = m.node_map[id(dst)]
                anchors.append(self._target_slot(dst, k, t))
            m.input_anchors.append(anchors)
            m.input_producers.append(m.bind[id(d)])
        m.output_anchors = out_anchors
        m.captures = []
        for p, idx in self.p.captures:
            if p.type == "Data":
                m.captures.append(m.bind.get(id(p)))
            elif id(p) in m.node_map:
                m.captures.append((m.node_map[id(p)], idx))
            else:
                m.captures.append(None)
        return None

    @staticmethod
    def _target_slot(p: Node, k: int, t: Node) -> tuple:
        """The target input anchor paired with pattern input slot k (connected inputs align)."""
        p_slots = [i for i, e in enumerate(p.inputs()) if e is not None]
        t_slots = [i for i, e in enumerate(t.inputs()) if e is not None]
        return t, t_slots[p_slots.index(k)]

    def _assign(self, m: Match, k: int):
        if k == len(self.p.outputs):
            fail = self._finish(m)
            return fail if fail is not None else m
        p, idx = self.p.outputs[k]
        if p.type == "Data" or id(p) in m.node_map:
            return self._assign(m, k + 1)
        best: Failure = Failure("no_candidate", p.name, "-", f"no {p.type} node for output {k}")
        for cand in self.candidates(norm_type(p.type)):
            if cand.graph is None or idx >= cand.num_outputs:
                continue
            trial = m.copy()
            fail = self._walk(trial, p, cand)
            if fail is None:
                result = self._assign(trial, k + 1)
                if result:
                    return result
                fail = result
            if fail.depth >= best.depth:
                best = fail
        return best

    def match_at(self, anchor: Node):
        """Match with pattern output 0 on `anchor`: a Match, or a falsy Failure."""
        p, idx = self.p.outputs[0]
        if idx >= anchor.num_outputs:
            return Failure("output_index", p.name, anchor.name,
                           f"target has no output {idx}")
        m = Match(self.p)
        fail = self._walk(m, p, anchor)
        if fail is not None:
            return fail
        return self._assign(m, 1)


def creates_cycle(nodes: list[Node], order: dict | None = None) -> bool:
    """Would fusing `nodes` into one node make a cycle (a path that leaves the set and comes
    back into it)?

    `order`, when given, maps id(node) to a sortable topological position; such a path can only
    pass nodes positioned before the last node of the set, so the search stops there.
    """
    inside = {id(n) for n in nodes}
    last = max(order[id(n)] for n in nodes) if order is not None else None
    stack, seen = [], set()
    for n in nodes:
        for dst in n.all_consumers() + n.get_out_control_nodes():
            if id(dst) not in inside:
                stack.append(dst)
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if order is not None:
            pos = order.get(id(node))
            if pos is None or pos > last:
                continue
        for dst in node.all_consumers() + node.get_out_control_nodes():
            if id(dst) in inside:
                return True
            stack.append(dst)
    return False
