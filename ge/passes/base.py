"""Pass base classes and hook signature adaptation (spec/python-passes.md §3.2-3.5).

Hook signatures are inspected once, when a subclass is created (`__init_subclass__`), and the
hook is replaced by a wrapper with one calling convention for the engine:

    meet_requirements(value, context=None)        value = MatchResult (pattern) or Node
    replacement(value, context=None)              graph style
    replacement(inputs, match_result, context)    expression style (2nd param named `inputs`)
"""
from __future__ import annotations

import functools
import inspect
from enum import Enum
from typing import Optional, Union

from ge.graph import Graph

from ._native import (MatchResult, PassContext, PatternMatcherConfig,
                      PatternMatcherConfigBuilder)
from .boundary import SubgraphBoundary, SubgraphInput, SubgraphOutput, SubgraphRewriter
from .infer import infer_shape
from .pattern import Pattern, PatternInputs, is_pattern_method

__all__ = ["PassStage", "FusionBasePass", "PatternFusionPass", "DecomposePass", "infer_shape",
           "PassContext", "MatchResult", "PatternMatcherConfig", "PatternMatcherConfigBuilder",
           "SubgraphInput", "SubgraphOutput", "SubgraphBoundary", "SubgraphRewriter",
           "PatternOrGraph", "StatusLike"]

PatternOrGraph = Union[Pattern, Graph]
StatusLike = Union[None, bool, int]


class PassStage(str, Enum):
    BEFORE_INFER_SHAPE = "BeforeInferShape"
    AFTER_INFER_SHAPE = "AfterInferShape"
    AFTER_BUILTIN_FUSION_PASS = "AfterBuiltinFusionPass"
    AFTER_ORIGIN_GRAPH_OPTIMIZE = "AfterOriginGraphOptimize"


# -- signature inspection --------------------------------------------------------------------
def _positional(fn) -> tuple[list[str], bool]:
    """(positional parameter names, has required keyword-only parameters)."""
    sig = inspect.signature(fn)
    names = [p.name for p in sig.parameters.values()
             if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    req_kw = any(p.kind == p.KEYWORD_ONLY and p.default is p.empty
                 for p in sig.parameters.values())
    return names, req_kw


def _adapt_two_three(fn, hook: str, value_name: str):
    names, req_kw = _positional(fn)
    if not 2 <= len(names) <= 3 or req_kw:
        raise TypeError(f"{hook} only supports {hook}(self, {value_name}) or "
                        f"{hook}(self, {value_name}, context)")
    with_ctx = len(names) == 3

    @functools.wraps(fn)
    def adapted(self, value, context=None):
        return fn(self, value, context) if with_ctx else fn(self, value)
    adapted.__ge_adapted__ = "graph"
    return adapted


def _adapt_expression(fn):
    names, req_kw = _positional(fn)
    if not 2 <= len(names) <= 4 or req_kw:
        raise TypeError("Expression-style replacement only supports replacement(self, inputs), "
                        "replacement(self, inputs, match_result), "
                        "replacement(self, inputs, context) or "
                        "replacement(self, inputs, match_result, context)")
    if len(names) == 4 and names[3] != "context":
        raise TypeError("Expression-style replacement with four arguments must be "
                        "replacement(self, inputs, match_result, context)")
    if len(names) == 2:
        form = "inputs"
    elif len(names) == 3:
        form = "context" if names[2] == "context" else "match"
    else:
        form = "both"

    @functools.wraps(fn)
    def adapted(self, inputs, match_result=None, context=None):
        if form == "inputs":
            return fn(self, inputs)
        if form == "context":
            return fn(self, inputs, context)
        if form == "match":
            return fn(self, inputs, match_result)
        return fn(self, inputs, match_result, context)
    adapted.__ge_adapted__ = "expression"
    return adapted


def _is_expression(fn) -> bool:
    names, _ = _positional(fn)
    return len(names) >= 2 and names[1] == "inputs"


# -- base classes ----------------------------------------------------------------------------
class FusionBasePass:
    """A pass with one hook, `run(graph, context)`, free to edit the graph."""

    def run(self, graph: Graph, context: PassContext) -> StatusLike:
        raise NotImplementedError(f"{type(self).__name__}.run() is not implemented")


class PatternFusionPass(FusionBasePass):
    """Patterns + meet_requirements + replacement; the engine matches and splices."""

    _ge_pattern_methods: tuple = ()
    _ge_replacement_style = "graph"

    def __init__(self, matcher_config: Optional[PatternMatcherConfig] = None):
        self._ge_matcher_config = matcher_config

    @property
    def matcher_config(self) -> Optional[PatternMatcherConfig]:
        return getattr(self, "_ge_matcher_config", None)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        body = cls.__dict__
        if "run" in body:
            raise TypeError(f"{cls.__name__} overrides run(); a PatternFusionPass is driven by "
                            "patterns(), meet_requirements() and replacement()")
        marked = [v for v in body.values() if is_pattern_method(v)]
        if marked and "patterns" in body:
            raise TypeError(f"{cls.__name__} cannot combine @pattern methods with patterns()")
        for method in marked:
            names, req_kw = _positional(method)
            if len(names) != 2 or req_kw:
                raise TypeError(f"{cls.__name__}.{method.__name__}: @pattern methods only "
                                "support method(self, inputs)")
        if marked:
            cls._ge_pattern_methods = tuple(marked)
            cls.patterns = _synthesized_patterns
        if "meet_requirements" in body:
            cls.meet_requirements = _adapt_two_three(body["meet_requirements"],
                                                     "meet_requirements", "match_result")
        if "replacement" in body:
            fn = body["replacement"]
            if _is_expression(fn):
                cls.replacement = _adapt_expression(fn)
                cls._ge_replacement_style = "expression"
            else:
                cls.replacement = _adapt_two_three(fn, "replacement", "match_result")
                cls._ge_replacement_style = "graph"

    def patterns(self):
        raise NotImplementedError(f"{type(self).__name__} defines neither patterns() "
                                  "nor @pattern methods")

    def meet_requirements(self, match_result, context=None) -> bool:
        return True

    def replacement(self, match_result, context=None) -> Graph:
        raise NotImplementedError(f"{type(self).__name__}.replacement() is not implemented")


def _synthesized_patterns(self) -> list:
    """patterns() of a class with @pattern methods: one Pattern per method, fresh each call."""
    from ge.es.graph_builder import GraphBuilder
    out = []
    for method in type(self)._ge_pattern_methods:
        builder = GraphBuilder(f"{type(self).__name__}_{method.__name__}_pattern")
        inputs = PatternInputs(builder)
        returned = method(self, inputs)
        out.append(expression_result_to_pattern(returned, builder, inputs))
    return out


def expression_result_to_pattern(returned, builder, inputs: PatternInputs) -> Pattern:
    from ge.es.tensor_holder import TensorHolder
    if isinstance(returned, Pattern):
        return returned
    if isinstance(returned, Graph):
        return Pattern(returned)
    if isinstance(returned, (list, tuple)) and returned and all(
            isinstance(r, (Pattern, Graph)) for r in returned):
        raise TypeError("@pattern method supports a single pattern only; "
                        "define one @pattern method per pattern")
    outputs = _holders(returned, "Expression-style patterns must return a TensorHolder, a "
                                 "non-empty list/tuple of TensorHolder, a Pattern or a Graph")
    created = inputs.created
    graph = builder.build_and_reset(outputs)
    pat = Pattern(graph)
    for t in created:
        pat.capture_tensor(t)
    for t in outputs:
        pat.capture_tensor(t._get_node_snapshot(), t._index)
    return pat


def _holders(returned, message: str) -> list:
    from ge.es.tensor_holder import TensorHolder
    if isinstance(returned, TensorHolder):
        return [returned]
    if isinstance(returned, (list, tuple)) and returned and all(
            isinstance(r, TensorHolder) for r in returned):
        return list(returned)
    raise TypeError(f"{message}, got {type(returned).__name__}")


def expression_result_to_graph(returned, builder) -> Graph:
    if isinstance(returned, Graph):
        return returned
    outputs = _holders(returned, "Expression-style replacement must return a Graph, a "
                                 "TensorHolder or a non-empty list/tuple of TensorHolder")
    return builder.build_and_reset(outputs)


class DecomposePass(FusionBasePass):
    """Replace every node of `op_types` that meets the requirements by a graph."""

    op_types: Optional[list] = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        body = cls.__dict__
        if "run" in body:
            raise TypeError(f"{cls.__name__} overrides run(); a DecomposePass is driven by "
                            "meet_requirements() and replacement()")
        if "meet_requirements" in body:
            cls.meet_requirements = _adapt_two_three(body["meet_requirements"],
                                                     "meet_requirements", "node")
        if "replacement" in body:
            cls.replacement = _adapt_two_three(body["replacement"], "replacement", "node")

    def meet_requirements(self, node, context=None) -> bool:
        return True

    def replacement(self, node, context=None) -> Graph:
        raise NotImplementedError(f"{type(self).__name__}.replacement() is not implemented")
