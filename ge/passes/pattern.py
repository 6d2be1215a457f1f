"""Patterns: `Pattern`, `NodeIo`, the `@pattern` decorator, `create_pattern`, `PatternInputs`
(spec/python-passes.md §3.4.1, §3.7).

A pattern is a small `ge.graph.Graph` built with `ge.es` (Data nodes are wildcards, the
NetOutput inputs are the pattern outputs) plus an ordered list of captured tensors.
"""
from __future__ import annotations

from dataclasses import dataclass

from ge.graph import Graph, Node

__all__ = ["Pattern", "NodeIo", "pattern", "create_pattern", "PatternInputs"]

_PATTERN_MARK = "__ge_pattern_method__"


@dataclass(frozen=True)
class NodeIo:
    """Output `index` of `node`."""
    node: Node
    index: int = 0


class Pattern:
    """A pattern graph plus its captured tensors (referenced later by position)."""

    def __init__(self, graph: Graph):
        if not isinstance(graph, Graph):
            raise TypeError(f"Pattern expects a ge.graph.Graph, got {type(graph).__name__}")
        self._graph = graph
        self._captures: list[tuple] = []
        self._released = False

    def _check(self) -> None:
        if self._released:
            raise RuntimeError("Pattern handle has been released")

    @property
    def graph_name(self) -> str:
        return self._graph.name

    def capture_tensor(self, source, index=None) -> "Pattern":
        self._check()
        from ge.es.tensor_holder import TensorHolder
        if isinstance(source, TensorHolder):
            node, idx = source._get_node_snapshot(), 0 if index is None else index
        elif isinstance(source, Node):
            node, idx = source, 0 if index is None else index
        elif index is None and hasattr(source, "node") and hasattr(source, "index"):
            node, idx = source.node, source.index
        else:
            raise TypeError("capture_tensor expects a NodeIo, TensorHolder or Node")
        if node is None or node.graph is not self._graph:
            raise RuntimeError("captured tensor does not belong to the pattern graph")
        if not isinstance(idx, int) or not 0 <= idx < node.num_outputs:
            raise RuntimeError(f"output index {idx} is out of range for {node.name}")
        self._captures.append((node, idx))
        return self

    def get_captured_tensors(self) -> list[NodeIo]:
        self._check()
        return [NodeIo(n, i) for n, i in self._captures]

    def is_valid(self) -> bool:
        return not self._released

    def release(self) -> int:
        """Hand the pattern to the engine; the Python object is dead afterwards."""
        self._check()
        self._released = True
        return id(self)

    def _take(self) -> tuple:
        """(graph, captures) for the engine, releasing the handle."""
        self._check()
        self._released = True
        return self._graph, list(self._captures)


def create_pattern(graph: Graph) -> Pattern:
    return Pattern(graph)


def pattern(method):
    """Mark a `(self, inputs)` method as one expression pattern of a PatternFusionPass."""
    setattr(method, _PATTERN_MARK, True)
    return method


def is_pattern_method(obj) -> bool:
    return callable(obj) and getattr(obj, _PATTERN_MARK, False) is True


class PatternInputs:
    """The `inputs` argument of expression hooks: graph inputs created on demand."""

    def __init__(self, builder):
        self._builder = builder
        self._created: list = []

    def _ensure(self, upto: int) -> None:
        while len(self._created) <= upto:
            self._created.append(self._builder.create_input(len(self._created)))

    def __getitem__(self, key):
        if isinstance(key, slice):
            if key.stop is None:
                raise ValueError("inputs[a:b] needs an explicit stop (the count is unknown)")
            if key.step not in (None, 1):
                raise ValueError("inputs[a:b] supports step 1 only")
            start = 0 if key.start is None else key.start
            if not isinstance(start, int) or not isinstance(key.stop, int) \
                    or start < 0 or key.stop < start:
                raise ValueError("inputs[a:b] needs 0 <= a <= b")
            if key.stop > 0:
                self._ensure(key.stop - 1)
            return list(self._created[start:key.stop])
        if isinstance(key, bool) or not isinstance(key, int):
            raise TypeError("inputs index must be an int or a slice")
        if key < 0:
            raise ValueError("inputs index must be >= 0")
        self._ensure(key)
        return self._created[key]

    def __iter__(self):
        raise TypeError("inputs cannot be iterated (the count is unknown); use inputs[:N]")

    def __len__(self):
        return len(self._created)

    @property
    def created(self) -> list:
        return list(self._created)
