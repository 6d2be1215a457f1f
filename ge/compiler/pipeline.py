"""The compile pipeline: one table of stages, run in order on a parsed graph.

Stage order follows ARCHITECTURE.md and spec/python-passes.md §6.1.  Each stage is a plain
function (graph, ctx) -> None; user and built-in passes run through ge.passes at the four
pass stages.  Graph dumps (DUMP_GE_GRAPH) are written after every stage, and the graph's
invariants (Graph.verify) are checked before the first stage and after every stage, so a stage
that breaks the IR is named at once (EP0005) instead of failing somewhere downstream.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Callable

from ge import ops
from ge.errors import GeError
from ge.graph import Graph, GraphInvariantError
from ge.graph.graph import INVARIANT_ERROR

from . import fusion, prepare  # fusion: registers built-in pass names for the switches

log = logging.getLogger(__name__)


@dataclass
class BuildContext:
    options: dict
    report: object = None                          # ge.passes.report.FusionReport
    kernels: object = None                         # set by the op-compile stage
    memory: object = None                          # set by the memory-planning stage
    precision: object = None                       # set by the dtype-assignment stage
    stage_times: dict = field(default_factory=dict)


def _pass_stage(stage_name: str) -> Callable:
    def run(graph: Graph, ctx: BuildContext) -> None:
        from ge.passes.runner import run_stage
        from ge.passes import PassStage
        run_stage(graph, PassStage(stage_name), ctx.options, ctx.report)
    run.__name__ = f"passes_{stage_name}"
    return run


def _infer(graph: Graph, ctx: BuildContext) -> None:
    prepare.infer_shapes(graph)
    prepare.resolve_attrs(graph)


def _prepare(graph: Graph, ctx: BuildContext) -> None:
    prepare.prepare(graph, ctx.options)


def _builtin_fusion(graph: Graph, ctx: BuildContext) -> None:
    fusion.run_builtin(graph, ctx.options, ctx.report)


def _origin_optimize(graph: Graph, ctx: BuildContext) -> None:
    for g in [graph] + graph.get_all_subgraphs():
        prepare.remove_bypass_ops(g)
    prepare.infer_shapes(graph)
    if prepare.switched_off(ctx.options, "ge.oo.constantFolding"):
        return
    dce = not prepare.switched_off(ctx.options, "ge.oo.deadCodeElimination")
    for g in [graph] + graph.get_all_subgraphs():
        prepare.fold_constants(g, dce)


def _output_type(graph: Graph, ctx: BuildContext) -> None:
    from .io_types import apply_output_5hd, apply_output_type
    apply_output_type(graph, ctx.options)
    apply_output_5hd(graph, ctx.options)


def _insert_aipp(graph: Graph, ctx: BuildContext) -> None:
    from .aipp import insert_aipp
    insert_aipp(graph, ctx.options)


def _input_fp16(graph: Graph, ctx: BuildContext) -> None:
    from .io_types import apply_input_fp16
    apply_input_fp16(graph, ctx.options)


def _assign_dtypes(graph: Graph, ctx: BuildContext) -> None:
    from .precision import assign_dtypes
    ctx.precision = assign_dtypes(graph, ctx.options)


def _place(graph: Graph, ctx: BuildContext) -> None:
    from .engines import place_engines
    for g in [graph] + graph.get_all_subgraphs():
        place_engines(g, ctx.options)


def _op_compile(graph: Graph, ctx: BuildContext) -> None:
    from .opcompile import compile_ops
    ctx.kernels = compile_ops(graph, ctx.options)


def _memory(graph: Graph, ctx: BuildContext) -> None:
    from .memory import plan_memory
    # The OM lists ops in node-table order and the runtime runs them in that order; lifetimes
    # are planned in topological order: make the two the same (folding appends Consts and
    # inlined branches after their consumers).
    for g in [graph] + graph.get_all_subgraphs():
        g.sort()
    ctx.memory = plan_memory(graph, ctx.kernels)


# (name used in dumps, function).  The dump names of the pass stages are CANN's.
STAGES: tuple = (
    ("RunCustomPassBeforeInfershape", _pass_stage("BeforeInferShape")),
    ("InsertAipp", _insert_aipp),
    ("InputFp16Nodes", _input_fp16),
    ("PrepareInferShape", _prepare),
    ("RunCustomPass_AfterInferShape", _pass_stage("AfterInferShape")),
    ("BuiltinFusion", _builtin_fusion),
    ("RunCustomPassAfterBuiltinFusionPass", _pass_stage("AfterBuiltinFusionPass")),
    ("OriginGraphOptimize", _origin_optimize),
    ("RunCustomPassAfterOriginGraphOptimize", _pass_stage("AfterOriginGraphOptimize")),
    ("OutputType", _output_type),
    ("InferShapeFinal", _infer),
    ("DtypeAssignment", _assign_dtypes),
    ("EnginePlacement", _place),
    ("OpCompile", _op_compile),
    ("MemoryPlanning", _memory),
)


def verify_graph(graph: Graph, where: str) -> None:
    """Graph.verify with the registry's required inputs; EP0005 naming `where` on failure."""
    try:
        graph.verify(ops.required_slots)
    except GraphInvariantError as exc:
        raise GeError(INVARIANT_ERROR, {"graph": exc.graph_name, "where": where,
                                        "reason": f"{exc.rule}: {exc.detail}"}) from None


def run_pipeline(graph: Graph, options: dict, stages: tuple | None = None,
                 ctx: BuildContext | None = None) -> BuildContext:
    """Run `stages` (all of them by default) on `graph`.  The gear build (ge.compiler.gears)
    runs the stages before OpCompile once per gear, then the rest once on the Case root."""
    from .dump import GraphDumper
    from ge.passes.report import FusionReport
    stages = STAGES if stages is None else stages
    if ctx is None:
        ctx = BuildContext(options=dict(options), report=FusionReport())
    dumper = GraphDumper.from_env(graph.name)
    if stages and stages[0] is STAGES[0]:
        dumper.dump(graph, "PreRunBegin")
        verify_graph(graph, "the input of the compile (the parsed graph)")
    for name, stage in stages:
        start = time.perf_counter()
        stage(graph, ctx)
        ctx.stage_times[name] = ctx.stage_times.get(name, 0.0) + time.perf_counter() - start
        log.info("stage %s done in %.3f s", name, time.perf_counter() - start)
        dumper.dump(graph, name)
        verify_graph(graph, f"stage {name}")
    return ctx
