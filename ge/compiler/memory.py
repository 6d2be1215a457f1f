"""Memory planning: offsets of every feature-map tensor and workspace in one arena.

Tensors whose lifetimes (topological positions from producer to last consumer) do not overlap
share bytes; graph inputs are live from the start and graph outputs to the end.  The encoding
in the OM is described in docs/memory-plan.md.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ge.om.plan import MEMORY_ALIGN
from ge.graph import Graph, Node
from ge.graph.types import dtype_size
from ge.ops import Role, role_of

NO_MEMORY_ROLES = frozenset({Role.CONST, Role.OUTPUT})  # weights, or no output at all


def _align(n: int) -> int:
    return (n + MEMORY_ALIGN - 1) // MEMORY_ALIGN * MEMORY_ALIGN


def tensor_bytes(node: Node, idx: int) -> int:
    desc = node.out_desc(idx)
    count = 1
    for d in desc.shape:
        count *= max(int(d), 0)
    return count * dtype_size(desc.data_type)


@dataclass
class NodeMemory:
    output_offsets: list = field(default_factory=list)   # -1 = no feature-map memory
    workspace_offsets: list = field(default_factory=list)
    workspace_bytes: list = field(default_factory=list)


@dataclass
class MemoryPlan:
    memory_size: int = 0
    nodes: dict = field(default_factory=dict)            # (graph name, node name) -> NodeMemory

    def output_offset(self, graph_name: str, node: Node, idx: int) -> int:
        mem = self.nodes.get((graph_name, node.name))
        return -1 if mem is None else mem.output_offsets[idx]


@dataclass
class _Block:
    key: tuple
    size: int
    start: int
    end: int
    offset: int = -1


def _assign(blocks: list, reuse: bool, base: int) -> int:
    """Greedy by size: place each block at the lowest offset not overlapping a placed block
    with an intersecting lifetime."""
    placed: list[_Block] = []
    top = base
    for b in sorted(blocks, key=lambda b: (-b.size, b.start, b.key)):
        busy = sorted((p.offset, p.offset + p.size) for p in placed
                      if not reuse or (p.start <= b.end and b.start <= p.end))
        offset = base
        for lo, hi in busy:
            if offset + b.size <= lo:
                break
            offset = max(offset, hi)
        b.offset = offset
        placed.append(b)
        top = max(top, offset + b.size)
    return top


def _plan_graph(graph: Graph, plan: MemoryPlan, workspaces: dict, reuse: bool,
                base: int) -> int:
    order = graph.topo_order()
    pos = {id(n): i for i, n in enumerate(order)}
    last = len(order)
    blocks = []
    for node in order:
        mem = NodeMemory(output_offsets=[-1] * node.num_outputs)
        plan.nodes[(graph.name, node.name)] = mem
        role = role_of(node.type)
        if role in NO_MEMORY_ROLES:
            continue
        for idx in range(node.num_outputs):
            users = node.consumers(idx)
            end = max((pos[id(d)] for d, _ in users), default=pos[id(node)])
            if any(d.type == "NetOutput" for d, _ in users) or role == Role.DATA:
                end = last
            start = 0 if role == Role.DATA else pos[id(node)]
            blocks.append(_Block(("o", node.name, idx), _align(max(tensor_bytes(node, idx), 1)),
                                 start, end))
        for w, size in enumerate(workspaces.get(node.name, ())):
            mem.workspace_bytes.append(int(size))
            blocks.append(_Block(("w", node.name, w), _align(max(int(size), 1)),
                                 pos[id(node)], pos[id(node)]))
    top = _assign(blocks, reuse, base)
    for b in blocks:
        mem = plan.nodes[(graph.name, b.key[1])]
        if b.key[0] == "o":
            mem.output_offsets[b.key[2]] = b.offset
        else:
            mem.workspace_offsets.append(b.offset)
    return top


def plan_memory(graph: Graph, kernels=None, reuse: bool = True) -> MemoryPlan:
    """Plan the root graph, then each subgraph in its own region after it.  The branches of a
    root-graph Case (the gears of a model, docs/om.md) run one at a time: they share one
    region, as large as the largest branch."""
    workspaces = getattr(kernels, "workspace_bytes", None) or {}
    plan = MemoryPlan()
    top = _plan_graph(graph, plan, workspaces, reuse, 0)
    exclusive = [sub for sub in graph.get_all_subgraphs()
                 if sub.parent_node is not None and sub.parent_node.type == "Case"
                 and sub.parent_graph is graph] if reuse else []
    base = _align(top)
    for sub in exclusive:
        top = max(top, _plan_graph(sub, plan, workspaces, reuse, base))
    for sub in graph.get_all_subgraphs():
        if sub not in exclusive:
            top = _plan_graph(sub, plan, workspaces, reuse, _align(top))
    plan.memory_size = _align(top)
    return plan
