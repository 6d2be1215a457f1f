"""Running the passes of one stage: `run_stage(graph, stage, options, report)`
(spec/python-passes.md §3.14-3.15, §6.1-6.6).

Enabled passes of the stage run in ascending (byte-wise) name order, each with one new
instance that serves the root graph and then every live subgraph.  A pass that raises, returns
a failure status or a wrong type, or leaves the graph malformed (Graph.verify runs after every
pass), fails the stage with E13028 naming the pass, its file and line, the graph and the
reason.  Soft problems (patterns() errors, invalid patterns,
meet_requirements errors) are logged and, when tracing, recorded in the report.
"""
from __future__ import annotations

import difflib
import inspect
import logging
import os
import time
import traceback
from typing import Optional

from ge import collector, ops
from ge.errors import GeError, warn
from ge.graph import Graph, GraphCycleError, GraphInvariantError

from ._native import _ENGINE, MatchResult, PassContext, PatternMatcherConfig
from .base import (DecomposePass, PassStage, PatternFusionPass,
                   expression_result_to_graph)
from .bootstrap import PASS_LOAD_ERROR
from .boundary import ATTR_PASS_NAME, SpliceError, splice
from .deadline import PassTimeout, deadline, pass_timeout
from .infer import boundary_producers_of_node, infer_nodes
from .matcher import (CompiledPattern, Matcher, PatternError, compile_pattern, creates_cycle,
                      norm_type)
from .pattern import Pattern, PatternInputs
from .registry import (PASS_KIND_DECOMPOSE, PASS_KIND_FUSION_BASE, PASS_KIND_PATTERN_FUSION,
                       PassDescriptor, all_passes)
from .report import FusionReport, PatternTrace
from .switches import PassSwitches

__all__ = ["run_stage", "PASS_RUN_ERROR", "UNKNOWN_PASS_WARNING", "TRACE_ENV", "TRACE_OPTION",
           "register_known_pass_names", "blame_pass"]

_log = logging.getLogger(__name__)
_trace_log = logging.getLogger("ge.passes.trace")

PASS_RUN_ERROR = "E13028"          # Failed to run custom fusion pass %s. Return code: %s. ...
UNKNOWN_PASS_WARNING = "WP0010"    # a switch names a pass nobody registered
TRACE_ENV = "GE_PASS_MATCH_TRACE"  # "1": trace pattern failures (log + fusion_result.json)
TRACE_OPTION = "ge.passMatchTrace"
STATUS_FAILED = 0xFFFFFFFF
_RUNAWAY_FACTOR = 4                # effects allowed per pattern run: 4 x graph size + 16

_known_names: set = set()


def register_known_pass_names(names) -> None:
    """Pass names owned by the compiler (graph passes) that switches may name without a
    warning although they are not registered here."""
    _known_names.update(names)


class PassFailure(Exception):
    def __init__(self, reason: str, retcode: int = STATUS_FAILED, tb=None, hook: str = ""):
        super().__init__(reason)
        self.reason, self.retcode, self.tb, self.hook = reason, retcode, tb, hook


def _hook_line(desc: PassDescriptor, hook: str, path: str) -> Optional[int]:
    """Line of the `def` of the pass's hook (e.g. the run() that returned a failure)."""
    fn = getattr(desc.cls, hook, None) if hook else None
    if fn is None:
        return None
    fn = inspect.unwrap(fn)
    try:
        if os.path.abspath(inspect.getsourcefile(fn) or "") != os.path.abspath(path):
            return None
        return inspect.getsourcelines(fn)[1]
    except (OSError, TypeError):
        return None


def _where(desc: PassDescriptor, tb=None, hook: str = "") -> str:
    """file:line of the pass: the deepest frame in its file, else the def of the hook that
    returned the failure, else the class statement."""
    try:
        path = inspect.getsourcefile(desc.cls) or "<unknown>"
        line = inspect.getsourcelines(desc.cls)[1]
    except (OSError, TypeError):
        path, line = getattr(inspect.getmodule(desc.cls), "__file__", "<unknown>"), 0
    line = _hook_line(desc, hook, path) or line
    if tb is not None:
        for frame in traceback.extract_tb(tb):
            if os.path.abspath(frame.filename) == os.path.abspath(path):
                line = frame.lineno
    return f"{path}:{line}"


def _fail(desc: PassDescriptor, stage: PassStage, graph: Graph, exc: PassFailure,
          context: PassContext) -> GeError:
    reason = context.get_error_message() or exc.reason
    where = _where(desc, exc.tb, exc.hook)
    full = f"{reason} (pass {desc.pass_name} at {where}, stage {stage.value}, graph {graph.name})"
    return GeError(PASS_RUN_ERROR, {"passname": desc.pass_name, "retcode": str(exc.retcode),
                                    "reason": full})


# -- switches ---------------------------------------------------------------------------------
def _check_unknown_names(switches: PassSwitches, report: FusionReport) -> None:
    registered = [d.pass_name for d in all_passes()] + sorted(_known_names)
    for name in switches.named():
        if name in registered or ("unknown", name) in report.warned:
            continue
        report.warned.add(("unknown", name))
        close = difflib.get_close_matches(name, registered, n=3, cutoff=0.6)
        warn(UNKNOWN_PASS_WARNING, {"name": name, "closest": ", ".join(close) or "none"})


def _check_name_clashes() -> None:
    """A user pass may not take a built-in pass's name: switches, fusion_result.json and the
    logs name passes, and one name would then mean two passes (E13029 names its file)."""
    for desc in all_passes():
        if not desc.builtin and desc.pass_name in _known_names:
            reason = (f"ValueError: pass name {desc.pass_name} is the name of a built-in "
                      "pass; choose another")
            raise GeError(PASS_LOAD_ERROR, {"passlibname": _where(desc).rsplit(":", 1)[0],
                                            "reason": reason})


def blame_pass(node, error: GeError) -> GeError:
    """Shape inference failed at `node`: when a user pass created it or one of its producers
    (ATTR_PASS_NAME marks), E13028 naming the most recent such pass, its file and line, and the
    op; otherwise `error` unchanged (a built-in pass failing is a compiler defect)."""
    users = {d.pass_name: d for d in all_passes() if not d.builtin}
    suspects = [node] + [edge[0] for edge in node.inputs() if edge is not None]
    for suspect in suspects:
        for name in reversed(list(suspect.attr(ATTR_PASS_NAME, []) or [])):
            desc = users.get(name)
            if desc is not None:
                reason = (f"{error.message} (the graph the pass left: {suspect.type} "
                          f"{suspect.name} was made by pass {name} at {_where(desc)})")
                return GeError(PASS_RUN_ERROR, {"passname": name, "retcode": str(STATUS_FAILED),
                                                "reason": reason})
    return error


# -- instances --------------------------------------------------------------------------------
def _instantiate(desc: PassDescriptor):
    try:
        instance = desc.cls()
    except KeyboardInterrupt:        # Ctrl-C / SIGTERM: the run ends as EP0004
        raise
    except BaseException as exc:     # sys.exit, GeneratorExit, ...: the pass failed
        raise PassFailure(f"creating {desc.class_name}() failed: {type(exc).__name__}: {exc}",
                          tb=exc.__traceback__) from None
    if desc.kind == PASS_KIND_PATTERN_FUSION:
        config = getattr(instance, "_ge_matcher_config", None)
        if config is not None and not isinstance(config, PatternMatcherConfig):
            raise PassFailure("matcher_config must be a PatternMatcherConfig or None, got "
                              f"{type(config).__name__}")
    return instance


def _graphs_of(root: Graph) -> list[Graph]:
    subs = [g for g in root.get_all_subgraphs()
            if g.parent_node is None or g.parent_node.graph is not None]
    return [root] + subs


# -- fusion_base ------------------------------------------------------------------------------
def _run_fusion_base(instance, graph: Graph, context: PassContext) -> None:
    try:
        result = instance.run(graph, context)
    except KeyboardInterrupt:        # Ctrl-C / SIGTERM: the run ends as EP0004
        raise
    except BaseException as exc:     # sys.exit, GeneratorExit, ...: the pass failed
        raise PassFailure(f"{type(exc).__name__}: {exc}", tb=exc.__traceback__) from None
    if result is None or result is True:
        return
    if result is False:
        raise PassFailure("run() returned False", hook="run")
    if isinstance(result, int) and not isinstance(result, bool):
        if result != 0:
            raise PassFailure(f"run() returned status {result}", retcode=result, hook="run")
        return
    text = f"python pass returned unsupported type: {type(result).__name__}"
    context.set_error_message(text)
    raise PassFailure(text, hook="run")


# -- pattern_fusion ---------------------------------------------------------------------------
def _collect_patterns(instance, desc, stats, trace: bool) -> list[CompiledPattern]:
    try:
        returned = instance.patterns()
        if returned is None:
            returned = []
        if isinstance(returned, (str, bytes)) or not hasattr(returned, "__iter__"):
            raise TypeError("patterns() must return an iterable of Pattern or Graph objects")
        items = list(returned)
        for item in items:
            if not isinstance(item, (Pattern, Graph)):
                raise TypeError("patterns() must return Pattern or Graph objects, got "
                                f"{type(item).__name__}")
    except KeyboardInterrupt:        # Ctrl-C / SIGTERM: the run ends as EP0004
        raise
    except BaseException as exc:     # sys.exit, GeneratorExit, ...: the pass failed
        _log.warning("pass %s: patterns() failed, the pass has no patterns: %s: %s",
                     desc.pass_name, type(exc).__name__, exc)
        if trace:
            stats.traces.append(PatternTrace("<patterns()>", note=f"{type(exc).__name__}: "
                                                                  f"{exc}"))
        return []
    compiled = []
    for item in items:
        if isinstance(item, Graph):
            item = Pattern(item)
        if not item.is_valid():
            _log.warning("pass %s: patterns() returned a released Pattern (cached on self?); "
                         "it matches nothing", desc.pass_name)
            if trace:
                stats.traces.append(PatternTrace("<released>", note="released Pattern"))
            continue
        graph, captures = item._take()
        try:
            compiled.append(compile_pattern(graph, captures))
        except PatternError as exc:
            _log.error("pass %s: pattern %s is invalid and never matches: %s",
                       desc.pass_name, graph.name, exc)
            if trace:
                stats.traces.append(PatternTrace(graph.name, note=f"invalid pattern: {exc}"))
    return compiled


def _positions(graph: Graph) -> tuple[dict, dict]:
    """(topological position per node id, normalised type -> nodes in that order)."""
    order, index = {}, {}
    for i, node in enumerate(graph.topo_order()):
        order[id(node)] = (i,)
        index.setdefault(norm_type(node.type), []).append(node)
    return order, index


def _replacement_graph(instance, match_result_factory, context) -> Graph:
    cls = type(instance)
    if cls._ge_replacement_style == "expression":
        from ge.es.graph_builder import GraphBuilder
        builder = GraphBuilder(f"{cls.__name__}_replacement")
        inputs = PatternInputs(builder)
        returned = _call_replacement(lambda: _with_result(
            match_result_factory, lambda mr: instance.replacement(inputs, mr, context)))
        return _call_replacement(lambda: expression_result_to_graph(returned, builder))
    return _checked_replacement(_call_replacement(lambda: _with_result(
        match_result_factory, lambda mr: instance.replacement(mr, context))))


def _call_replacement(call):
    """A pass's replacement(): anything it raises is the pass's failure (Ctrl-C and SIGTERM,
    KeyboardInterrupt, end the run as EP0004 instead)."""
    try:
        return call()
    except KeyboardInterrupt:
        raise
    except BaseException as exc:     # sys.exit, GeneratorExit, ...: the pass failed
        raise PassFailure(f"Call python replacement failed: {type(exc).__name__}: {exc}",
                          tb=exc.__traceback__) from None


def _checked_replacement(rep) -> Graph:
    if not isinstance(rep, Graph):
        raise PassFailure(f"replacement must return ge.graph.Graph, got {type(rep).__name__}",
                          hook="replacement")
    return rep


def _with_result(factory, fn):
    result = factory()
    try:
        return fn(result)
    finally:
        result._invalidate()


def _meets(instance, value, context, desc) -> tuple[bool, str]:
    try:
        return bool(instance.meet_requirements(value, context)), ""
    except KeyboardInterrupt:        # Ctrl-C / SIGTERM: the run ends as EP0004
        raise
    except BaseException as exc:     # sys.exit, GeneratorExit, ...: the pass failed
        _log.warning("pass %s: meet_requirements raised %s: %s; treated as False",
                     desc.pass_name, type(exc).__name__, exc)
        return False, f"raised {type(exc).__name__}: {exc}"
    finally:
        if isinstance(value, MatchResult):
            value._invalidate()


def _run_pattern(instance, desc, cp: CompiledPattern, graph: Graph, context, stats,
                 stage: PassStage, trace: bool) -> None:
    config = instance.matcher_config
    order, index = _positions(graph)
    matcher = Matcher(cp, config.is_enable_const_value_match() if config else False,
                      config.is_enable_ir_attr_match() if config else False,
                      candidates=lambda t: index.get(t, []))
    tracer = PatternTrace(cp.graph_name) if trace else None
    anchor_type = norm_type(cp.outputs[0][0].type)
    cands = index.setdefault(anchor_type, [])
    limit = _RUNAWAY_FACTOR * len(order) + 16
    effects, i = 0, 0
    while i < len(cands):
        anchor = cands[i]
        i += 1
        if anchor.graph is not graph:
            continue
        if tracer:
            tracer.candidates += 1
        found = matcher.match_at(anchor)
        if not found:
            if tracer:
                tracer.record(found)
            continue
        found.order = order
        stats.match_times += 1
        if tracer:
            tracer.matches += 1
        ok, why = _meets(instance, MatchResult(_ENGINE, found), context, desc)
        if not ok:
            if tracer:
                tracer.record(_skip("meet_requirements", anchor, why or "returned False",
                                    cp.size))
            continue
        matched = found.matched_nodes()
        if creates_cycle(matched, order):
            _log.info("pass %s: match at %s skipped, fusing would create a cycle",
                      desc.pass_name, anchor.name)
            if tracer:
                tracer.record(_skip("cycle", anchor, "fusing would create a cycle", cp.size))
            continue
        rep = _replacement_graph(instance, lambda: MatchResult(_ENGINE, found), context)
        new = _splice(graph, found.input_anchors, found.output_anchors, rep, desc, order)
        _after_splice(new, stage, index)
        effects += 1
        stats.effect_times += 1
        if effects > limit:
            raise PassFailure(f"pattern {cp.graph_name} keeps matching its own replacement "
                              f"({effects} rewrites)")
    if tracer:
        stats.traces.append(tracer)
        for failure in tracer.closest:
            _trace_log.info("pass %s pattern %s: candidate %s failed at %s: %s (%s)",
                            desc.pass_name, cp.graph_name, failure["candidate"],
                            failure["pattern_node"], failure["rule"], failure["detail"])


def _skip(rule: str, anchor, detail: str, depth: int):
    from .matcher import Failure
    return Failure(rule, "-", anchor.name, detail, depth)


def _splice(graph, inputs, outputs, rep, desc, order) -> list:
    try:
        old, new = splice(graph, inputs, outputs, rep, desc.pass_name)
    except SpliceError as exc:
        raise PassFailure(f"replacing the match failed: {exc}") from None
    base = max((order[id(n)] for n in old if id(n) in order), default=(len(order),))
    for k, node in enumerate(new):
        order[id(node)] = base + (k,)
    return new


def _after_splice(new: list, stage: PassStage, index: dict) -> None:
    for node in new:
        index.setdefault(norm_type(node.type), []).append(node)
    if stage != PassStage.BEFORE_INFER_SHAPE and new:
        try:
            infer_nodes(new)
        except Exception as exc:  # descs the replacement carries stay as they are
            _log.info("shape inference after replacement skipped: %s", exc)


# -- decompose --------------------------------------------------------------------------------
def _run_decompose(instance, desc, graph: Graph, context, stats, stage) -> None:
    types = set(desc.op_types)
    snapshot = [n for n in graph.nodes if n.type in types]
    order, index = {}, {}
    if snapshot:
        order = {id(n): (i,) for i, n in enumerate(graph.topo_order())}
    for node in snapshot:
        if node.graph is not graph:
            continue
        stats.match_times += 1
        ok, _ = _meets(instance, node, context, desc)
        if not ok:
            continue
        rep = _checked_replacement(_call_replacement(
            lambda: instance.replacement(node, context)))
        producers = boundary_producers_of_node(node)
        inputs = [[(node, i) for i, e in enumerate(node.inputs()) if e == p] for p in producers]
        outputs = [(node, j) for j in range(node.num_outputs)]
        new = _splice(graph, inputs, outputs, rep, desc, order)
        _after_splice(new, stage, index)
        stats.effect_times += 1


# -- one pass, one stage ----------------------------------------------------------------------
def _run_pass(desc: PassDescriptor, root: Graph, stage: PassStage, options: dict,
              report: FusionReport, seconds: float = 0.0) -> None:
    context = PassContext._create(desc.pass_name, options)
    stats = report.stats(root.name, desc.pass_name)
    stats.stage = stage.value
    context._ge_stats = {"match": 0, "effect": 0}
    start = time.perf_counter()
    try:
        with deadline(seconds):
            _run_instance(desc, root, stage, context, stats, report)
    except PassTimeout as exc:          # expired outside the pass's own code
        raise _fail(desc, stage, root, PassFailure(str(exc)), context) from None
    finally:
        stats.match_times += context._ge_stats["match"]
        stats.effect_times += context._ge_stats["effect"]
        context._ge_stats = {"match": 0, "effect": 0}
        stats.wall_time_us += int((time.perf_counter() - start) * 1e6)


def _run_instance(desc: PassDescriptor, root: Graph, stage: PassStage, context, stats,
                  report: FusionReport) -> None:
    graph = root
    try:
        instance = _instantiate(desc)
        kind = desc.kind
        if kind == PASS_KIND_PATTERN_FUSION and not isinstance(instance, PatternFusionPass):
            raise PassFailure(f"kind {kind} needs a PatternFusionPass subclass")
        if kind == PASS_KIND_DECOMPOSE and not isinstance(instance, DecomposePass):
            raise PassFailure(f"kind {kind} needs a DecomposePass subclass")
        if kind == PASS_KIND_FUSION_BASE and isinstance(instance,
                                                        (PatternFusionPass, DecomposePass)):
            raise PassFailure(f"{desc.class_name} is registered as fusion_base but defines "
                              "no run()")
        if kind not in (PASS_KIND_FUSION_BASE, PASS_KIND_PATTERN_FUSION, PASS_KIND_DECOMPOSE):
            raise PassFailure(f"unknown pass kind {kind!r}")
        for graph in _graphs_of(root):
            context.set_pass_name(desc.pass_name)
            effects_before = stats.effect_times + context._ge_stats["effect"]
            if kind == PASS_KIND_FUSION_BASE:
                _run_fusion_base(instance, graph, context)
            elif kind == PASS_KIND_PATTERN_FUSION:
                for cp in _collect_patterns(instance, desc, stats, report.trace):
                    _run_pattern(instance, desc, cp, graph, context, stats, stage,
                                 report.trace)
            else:
                _run_decompose(instance, desc, graph, context, stats, stage)
            if stats.effect_times + context._ge_stats["effect"] != effects_before:
                _sort(graph, desc)
        graph = root
        _verify(root)
    except PassFailure as exc:
        _log.error("[%s][Run] failed on graph %s: %s", desc.pass_name, graph.name, exc.reason)
        raise _fail(desc, stage, graph, exc, context) from None


def _sort(graph: Graph, desc: PassDescriptor) -> None:
    """Keep the node table topological after a rewrite; a cycle fails the pass."""
    try:
        graph.sort()
    except GraphCycleError as exc:
        raise PassFailure(f"[CycleGuard] graph has a cycle after the pass: {exc}") from None


def _verify(root: Graph) -> None:
    """Every pass, in every compile, leaves a well-formed graph (Graph.verify) or fails."""
    try:
        root.verify(ops.required_slots)
    except GraphInvariantError as exc:
        raise PassFailure(f"the pass left the graph malformed: {exc}") from None


def _trace_enabled(options: dict) -> bool:
    value = options.get(TRACE_OPTION) or os.environ.get(TRACE_ENV, "")
    return value not in ("", "0", "false", "False")


def run_stage(graph: Graph, stage: PassStage, options: dict, report: Optional[FusionReport]
              ) -> None:
    """Run the enabled passes of `stage` on `graph` (a root graph) and its subgraphs."""
    stage = PassStage(stage)
    if report is None:
        report = FusionReport()
    if _trace_enabled(options):
        report.trace = True
    switches = PassSwitches.from_options(options)
    _check_unknown_names(switches, report)
    _check_name_clashes()
    passes = sorted((d for d in all_passes() if d.stage == stage),
                    key=lambda d: d.pass_name.encode())
    seconds = pass_timeout(options) if passes else 0.0
    with collector.paused():        # nothing a pass creates needs collecting before the end
        for desc in passes:
            forbidden = bool(getattr(desc.cls, "__ge_forbidden_close__", False))
            if not switches.enabled(desc.pass_name, desc.builtin, forbidden):
                _log.info("pass %s is switched off", desc.pass_name)
                report.switched_off(graph.name, desc.pass_name, stage.value)
                continue
            _run_pass(desc, graph, stage, options, report, seconds)
