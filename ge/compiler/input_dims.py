"""Refuse a graph whose inputs keep unknown dimensions (spec/atc-cli.md §6.12): dynamic shapes
are not supported, so a model with symbolic input dims needs `--input_shape`.

CANN refuses up front with E10001 (parameter `--input_shape`, value `NULL`); before that we
warn once per such input (WP0140) with its unknown dims and an `--input_shape` that would
make every input static (unknown dims taken as 1: the user knows the real sizes).
"""
from __future__ import annotations

from ge.errors import GeError, warn
from ge.graph import Graph
from ge.ops import Role, types_with_role

__all__ = ["refuse_unknown_input_dims"]

UNKNOWN_RANK = [-2]
REASON = ("The shapes of inputs contain -1 in the model. You may need to set input shape to "
          "specify its shape.")


def _suggestion(shape: list) -> str:
    if list(shape) == UNKNOWN_RANK:
        return "<d0,d1,...>"
    return ",".join(str(d if d >= 0 else 1) for d in shape)


def refuse_unknown_input_dims(graph: Graph, options: dict) -> None:
    data_types = types_with_role(Role.DATA)
    inputs = [n for n in graph.nodes if n.type in data_types]
    inputs.sort(key=lambda n: int(n.attr("index") or 0))
    shapes = [(n.name, list(n.out_desc(0).shape)) for n in inputs]
    unknown = [(name, shape) for name, shape in shapes
               if shape == UNKNOWN_RANK or any(d < 0 for d in shape)]
    if not unknown:
        return
    fix = ";".join(f"{name}:{_suggestion(shape)}" for name, shape in shapes)
    for name, shape in unknown:
        dims = ("rank unknown" if shape == UNKNOWN_RANK else
                ", ".join(str(i) for i, d in enumerate(shape) if d < 0))
        warn("WP0140", {"input": name, "shape": str(shape), "dims": dims,
                        "suggestion": f'--input_shape="{fix}"'})
    given = str(options.get("input_shape") or options.get("ge.inputShape") or "")
    raise GeError("E10001", {"value": given or "NULL", "parameter": "--input_shape",
                             "reason": REASON})
