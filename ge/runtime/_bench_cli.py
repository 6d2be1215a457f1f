"""The ais_bench mode of `python3 -m ge.runtime` (docs/runtime.md, "Benchmarking"): input
directories, warm-up runs, --loop, the latency summary (--summary FILE as JSON), outputs per
inference (--outfmt), --profiler (per op and per op type, --profiler_json FILE) and a progress
bar on a terminal.  Returns the report text; the entry point prints it."""
from __future__ import annotations

import json
import os
import sys
import time

import numpy as np

from ge.errors import GeError
from ge.fsutil import publish
from ge.stdio import write

from .bench import input_sets, op_type_table, profile_runs, summarize, timed_runs

__all__ = ["wants_bench", "run_bench", "DEFAULT_WARMUP"]

DEFAULT_WARMUP = 1          # ais_bench's default --warmup_count
PROGRESS_MIN_RUNS = 100     # fewer timed runs than this show no bar


def wants_bench(args: dict, entries: list) -> bool:
    return (any(os.path.isdir(e) for e in entries) or args["warmup_count"] is not None
            or bool(args["summary"]) or args["profiler"])


class _Progress:
    """`[#####-----] 45/100 inferences` on stderr, redrawn at most 10 times a second, only
    when stdout and stderr are terminals (a redirected run gets none) and the run has at
    least PROGRESS_MIN_RUNS timed runs."""

    def __init__(self):
        self.enabled = sys.stdout.isatty() and sys.stderr.isatty()
        self.last = 0.0
        self.shown = False

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if not self.enabled or total < PROGRESS_MIN_RUNS:
            return
        if done < total and now - self.last < 0.1:
            return
        self.last, self.shown = now, True
        filled = 30 * done // total
        write("stderr", f"\r[{'#' * filled}{'-' * (30 - filled)}] {done}/{total} inferences")

    def finish(self) -> None:
        if self.shown:
            write("stderr", "\n")


def _write_json(path: str, doc: dict) -> None:
    try:
        publish(path, (json.dumps(doc, indent=2) + "\n").encode(), mode=0o644)
    except OSError as e:
        raise GeError("E13004", {"file": path, "reason": e.strerror}) from None


def _profile_lines(profile, top: int) -> list:
    total = sum(ms for *_, ms in profile.ops) or 1.0
    lines = [f"profiler: mean time per inference over {profile.runs} profiled run(s), "
             f"{sum(ms for *_, ms in profile.ops):.3f} ms in ops",
             f"{'op type':<24}{'nodes':>6}{'ms':>11}{'share':>8}"]
    for op_type, nodes, ms in op_type_table(profile)[:top]:
        lines.append(f"{op_type:<24}{nodes:>6}{ms:>11.4f}{ms / total:>8.1%}")
    lines.append(f"{'op':<32}{'op type':<20}{'engine':<8}{'ms':>10}{'share':>8}")
    for name, op_type, engine, ms in sorted(profile.ops, key=lambda o: -o[3])[:top]:
        lines.append(f"{name[:31]:<32}{op_type[:19]:<20}{engine:<8}{ms:>10.4f}"
                     f"{ms / total:>8.1%}")
    return lines


def run_bench(model, args: dict, entries: list, fmt: str) -> list:
    from ._io import read_inputs, write_outputs
    sets = input_sets(entries, len(model.inputs))
    warmup = DEFAULT_WARMUP if args["warmup_count"] is None else args["warmup_count"]
    for name, value in (("warmup_count", warmup), ("profiler_top", args["profiler_top"])):
        low = 1 if name == "profiler_top" else 0
        if not low <= value <= 1_000_000:
            raise GeError("E10001", {"value": value, "parameter": f"--{name}",
                                     "reason": f"it must be between {low} and 1000000"})

    def feeds_of(i: int) -> list:
        files = sets[i].files
        if not files:
            return [np.zeros(s.shape, s.dtype) for s in model.inputs]
        return read_inputs(files, model.inputs)

    cached = [feeds_of(i) for i in range(len(sets))]     # files are read before timing
    for _ in range(warmup):
        model.run(cached[0])
    written: list = []

    def on_result(i: int, outputs: list) -> None:
        if args["output"]:
            prefix = f"{sets[i].name}_output" if sets[i].name else "output"
            written.extend(write_outputs(args["output"], outputs, fmt, prefix=prefix,
                                         specs=model.outputs))
    progress = _Progress()
    try:
        latencies = timed_runs(model, cached.__getitem__, len(sets), args["loop"], on_result,
                               progress)
    finally:
        progress.finish()
    summary = summarize(latencies)
    lines = [f"inferences: {summary.count} ({len(sets)} input set(s) x loop {args['loop']}), "
             f"warm-up runs: {warmup}",
             f"latency ms: mean {summary.mean:.3f}  median {summary.median:.3f}  "
             f"p99 {summary.p99:.3f}  min {summary.min:.3f}  max {summary.max:.3f}",
             f"throughput: {summary.throughput:.1f} inferences/s"]
    if written:
        lines.append(f"outputs: {len(written)} file(s) in {args['output']}")
    doc = dict(summary.as_dict(), model=args["model"], input_sets=len(sets), loop=args["loop"],
               warmup=warmup, latencies_ms=latencies)
    if args["profiler"]:
        profile = profile_runs(model, cached)
        lines += _profile_lines(profile, args["profiler_top"])
        doc["profile"] = profile.as_dict()
        if args["profiler_json"]:
            _write_json(args["profiler_json"], profile.as_dict())
    if args["summary"]:
        _write_json(args["summary"], doc)
    lines.append(f"Inference average time: {summary.mean:.3f} ms")
    return lines
