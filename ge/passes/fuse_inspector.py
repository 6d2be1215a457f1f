"""`can_fuse` / `report_fuse` for hand-written graph edits (spec/python-passes.md §3.13)."""
from __future__ import annotations

from dataclasses import dataclass

from ge.graph import Node

from ge.graph.attr_names import ATTR_PASS_NAME
from .matcher import creates_cycle

__all__ = ["FuseCheckResult", "can_fuse", "report_fuse", "record_fusion", "fusion_creates_cycle"]

_STREAM_LABEL = "_user_stream_label"
_SCOPE_ATTRS = ("_super_kernel_scope", "_super_kernel_options", "_op_aicore_num",
                "_op_vectorcore_num")


@dataclass(frozen=True)
class FuseCheckResult:
    ok: bool
    reason: str = ""


def fusion_creates_cycle(nodes: list[Node]) -> bool:
    """True if some path leaves the node set and comes back into it."""
    return creates_cycle(nodes)


def can_fuse(nodes) -> FuseCheckResult:
    items = list(nodes)
    for n in items:
        if not isinstance(n, Node):
            raise TypeError(f"can_fuse expects ge.graph.Node items, got {type(n).__name__}")
    if not items:
        return FuseCheckResult(False, "node set is empty")
    graph = items[0].graph
    if graph is None:
        return FuseCheckResult(False, f"owner graph of node {items[0].name} is missing")
    for n in items:
        if n.graph is None:
            return FuseCheckResult(False, f"owner graph of node {n.name} is missing")
        if n.graph is not graph:
            return FuseCheckResult(False, f"nodes {items[0].name} and {n.name} are in "
                                          "different graphs")
    for key in (_STREAM_LABEL,) + _SCOPE_ATTRS:
        values = {}
        for n in items:
            if n.has_attr(key):
                values.setdefault(str(n.get_attr(key)), n.name)
        if len(values) > 1:
            labels = ", ".join(f"{v} ({k})" for k, v in values.items())
            return FuseCheckResult(False, f"conflicting {key} values: {labels}")
    if fusion_creates_cycle(items):
        return FuseCheckResult(False, "it will create cycle after fuse")
    return FuseCheckResult(True, "")


def record_fusion(context, before: list, after: list) -> None:
    """Mark the pass on new nodes, carry original names, count one match and one effect."""
    pass_name = context.get_pass_name()
    origin: list[str] = []
    for n in before:
        origin += [o for o in (n.origin or [n.name]) if o not in origin]
    for n in after:
        n.merge_origin(origin)
        marks = list(n.attr(ATTR_PASS_NAME, []) or [])
        if pass_name not in marks:
            n.set_attr(ATTR_PASS_NAME, marks + [pass_name])
    stats = getattr(context, "_ge_stats", None)
    if stats is not None:
        stats["match"] += 1
        stats["effect"] += 1


def report_fuse(nodes_before, nodes_after, context) -> None:
    before, after = list(nodes_before), list(nodes_after)
    for n in before + after:
        if not isinstance(n, Node):
            raise TypeError(f"report_fuse expects ge.graph.Node items, got {type(n).__name__}")
    pass_name = context.get_pass_name() if context is not None else ""
    graphs = {id(n.graph) for n in before + after}
    problem = ""
    if not pass_name:
        problem = "pass name in context is empty"
    elif len(graphs) > 1:
        problem = "nodes are not all in one graph"
    if problem:
        text = f"Failed to report fusion result, pass_name={pass_name}, status=4294967295: " \
               f"{problem}"
        if context is not None:
            context.set_error_message(text)
        raise RuntimeError(text)
    record_fusion(context, before, after)
