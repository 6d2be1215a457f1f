"""What the fusion tests look at: the compiled graph's op types and a pass's effect count."""
from __future__ import annotations

from ge.compiler.api import build_graph
from ge.parser.onnx import parse_onnx


def compile_types(model, options, **extra):
    """The compiled graph of an ONNX model and its op types in order."""
    compiled = build_graph(parse_onnx(model, {}), dict(options, **extra))
    return compiled, [n.type for n in compiled.graph.nodes]


def fusion_effects(compiled, name):
    """How many times the fusion pass `name` rewrote the graph (the fusion report)."""
    return sum(int(r["graph_fusion"].get(name, {}).get("effect_times", 0))
               for r in compiled.context.report.to_records())
