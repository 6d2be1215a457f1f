"""`create_replacement`: the identity helper of graph-style replacements (spec §3.11)."""
from __future__ import annotations

from ge.graph import Graph

__all__ = ["create_replacement"]


def create_replacement(graph: Graph) -> Graph:
    if not isinstance(graph, Graph):
        raise TypeError(f"create_replacement expects a ge.graph.Graph, got {type(graph).__name__}")
    return graph
