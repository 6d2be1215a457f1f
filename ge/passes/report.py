"""Fusion statistics and match traces; `fusion_result.json` (docs/passes.md §Report).

`FusionReport` collects, per compiled root graph and per pass: match times, effect times,
wall time (always), whether a switch turned the pass off, and (when tracing) why each pattern
failed at its closest candidates.  It only collects; `write_fusion_result` publishes the file
(temp name + rename).
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Optional

from ge.fsutil import make_dirs, publish

__all__ = ["FusionReport", "PassStats", "PatternTrace", "write_fusion_result",
           "fusion_result_path"]

TRACE_KEEP = 3          # closest failures kept per pattern


@dataclass
class PatternTrace:
    pattern: str
    candidates: int = 0
    matches: int = 0
    closest: list = field(default_factory=list)   # [Failure-like dicts], deepest first
    note: str = ""

    def record(self, failure) -> None:
        entry = {"candidate": failure.target_node, "pattern_node": failure.pattern_node,
                 "rule": failure.rule, "detail": failure.detail, "depth": failure.depth}
        self.closest.append(entry)
        self.closest.sort(key=lambda e: -e["depth"])
        del self.closest[TRACE_KEEP:]

    def to_dict(self) -> dict:
        out = {"pattern": self.pattern, "candidates": self.candidates, "matches": self.matches,
               "closest_failures": list(self.closest)}
        if self.note:
            out["note"] = self.note
        return out


@dataclass
class PassStats:
    match_times: int = 0
    effect_times: int = 0
    wall_time_us: int = 0
    stage: str = ""
    switched_off: bool = False                     # a switch disabled it; it never ran
    traces: list = field(default_factory=list)     # [PatternTrace]


class FusionReport:
    """Statistics of one compile (one or more root graphs)."""

    def __init__(self, trace: bool = False):
        self.trace = trace
        self.graphs: dict[str, dict[str, PassStats]] = {}
        self.warned: set = set()            # warnings already given in this compile

    def stats(self, graph_name: str, pass_name: str) -> PassStats:
        per_graph = self.graphs.setdefault(graph_name, {})
        return per_graph.setdefault(pass_name, PassStats())

    def switched_off(self, graph_name: str, pass_name: str, stage: str) -> None:
        """Record that a switch kept `pass_name` from running on this graph."""
        stats = self.stats(graph_name, pass_name)
        stats.stage, stats.switched_off = stage, True

    def to_records(self) -> list[dict]:
        records = []
        for n, (graph_name, passes) in enumerate(self.graphs.items()):
            graph_fusion = {}
            for name in sorted(passes):
                s = passes[name]
                # CANN's two counters first; wall time is ours and always there.
                entry = {"effect_times": str(s.effect_times), "match_times": str(s.match_times),
                         "wall_time_us": str(s.wall_time_us)}
                if s.switched_off:
                    entry["switch"] = "off"
                if self.trace and not s.switched_off:
                    entry["match_trace"] = [t.to_dict() for t in s.traces]
                graph_fusion[name] = entry
            records.append({"graph_fusion": graph_fusion, "graph_name": graph_name,
                            "session_and_graph_id": f"0_{n}", "ub_fusion": {}})
        return records


def fusion_result_path(work_path: Optional[str] = None) -> str:
    """`$ASCEND_WORK_PATH/FE/<pid>/fusion_result.json`, else `./fusion_result.json`."""
    base = work_path if work_path is not None else os.environ.get("ASCEND_WORK_PATH", "")
    if base:
        return os.path.join(base, "FE", str(os.getpid()), "fusion_result.json")
    return os.path.join(os.getcwd(), "fusion_result.json")


def write_fusion_result(report: FusionReport, work_path: Optional[str] = None) -> str:
    """Publish the report as fusion_result.json; returns the path written."""
    path = fusion_result_path(work_path)
    directory = os.path.dirname(path)
    make_dirs(directory)
    text = json.dumps(report.to_records(), indent=4, sort_keys=True) + "\n"
    publish(path, text)
    return path
