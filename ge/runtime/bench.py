"""What ais_bench users measure, as plain functions over a loaded Model (docs/runtime.md,
"Benchmarking"): input sets from directories, timed runs, the latency summary, per-op
profiles.  No printing here: `python3 -m ge.runtime` and `InferSession` render the results.

Input directories follow ais_bench: every regular file of a directory is one inference's value
of that input; the files of the inputs are matched by their position in name order, so every
directory must hold the same number of files.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

from ge.errors import GeError

from ._errors import BAD_INPUT, FILE_OPEN

__all__ = ["InputSet", "input_sets", "LatencySummary", "summarize", "OpProfile",
           "profile_runs", "op_type_table", "timed_runs"]


@dataclass(frozen=True)
class InputSet:
    name: str            # the stem of the first input's file ("" for zeros)
    files: tuple         # one path per model input (empty = zeros)


def _dir_files(path: str) -> list:
    try:
        names = sorted(os.listdir(path))
    except OSError as e:
        raise GeError(FILE_OPEN, {"file": path, "reason": e.strerror}) from None
    return [os.path.join(path, n) for n in names if os.path.isfile(os.path.join(path, n))]


def input_sets(entries: list, num_inputs: int) -> list:
    """--input entries (all files, or all directories) -> [InputSet]."""
    if not entries:
        return [InputSet("", ())]
    if len(entries) != num_inputs:
        raise GeError(BAD_INPUT, {"reason": f"the model has {num_inputs} input(s); "
                                            f"{len(entries)} --input entries given"})
    dirs = [os.path.isdir(e) for e in entries]
    if not any(dirs):
        return [InputSet(_stem(entries[0]), tuple(entries))]
    if not all(dirs):
        raise GeError(BAD_INPUT, {"reason": "--input mixes files and directories; give a "
                                            "directory for every input or a file for every one"})
    listed = [_dir_files(d) for d in entries]
    counts = {len(files) for files in listed}
    if len(counts) != 1 or 0 in counts:
        raise GeError(BAD_INPUT, {"reason": "input directories must hold the same, non-zero "
                                  "number of files: " + ", ".join(
                                      f"{d} has {len(f)}" for d, f in zip(entries, listed))})
    return [InputSet(_stem(files[0]), tuple(files)) for files in zip(*listed)]


def _stem(path: str) -> str:
    return os.path.splitext(os.path.basename(path))[0]


@dataclass(frozen=True)
class LatencySummary:
    count: int
    mean: float          # milliseconds
    median: float
    p99: float
    min: float
    max: float
    throughput: float    # inferences per second (count / total latency)

    def as_dict(self) -> dict:
        return {"count": self.count, "latency_ms": {"mean": self.mean, "median": self.median,
                "p99": self.p99, "min": self.min, "max": self.max},
                "throughput_per_s": self.throughput}


def summarize(latencies_ms: list) -> LatencySummary:
    a = np.asarray(latencies_ms, dtype=np.float64)
    if a.size == 0:
        return LatencySummary(0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    total_s = float(a.sum()) / 1000.0
    return LatencySummary(int(a.size), float(a.mean()), float(np.median(a)),
                          float(np.percentile(a, 99)), float(a.min()), float(a.max()),
                          a.size / total_s if total_s > 0 else 0.0)


def timed_runs(model, feeds_of: Callable, count: int, loop: int = 1,
               on_result: Optional[Callable] = None,
               on_progress: Optional[Callable] = None) -> list:
    """Run input sets 0..count-1, `loop` times over; returns every latency in ms.
    `feeds_of(i)` gives set i's arrays; `on_result(i, outputs)` sees each set's outputs
    in the first pass; `on_progress(done, total)` after every run."""
    latencies, total, done = [], count * loop, 0
    for rep in range(loop):
        for i in range(count):
            feeds = feeds_of(i)
            start = time.perf_counter()
            outputs = model.run(feeds)
            latencies.append((time.perf_counter() - start) * 1000.0)
            if rep == 0 and on_result is not None:
                on_result(i, outputs)
            done += 1
            if on_progress is not None:
                on_progress(done, total)
    return latencies


@dataclass
class OpProfile:
    """Mean time per op of the root graph over `runs` profiled runs."""
    runs: int = 0
    ops: list = field(default_factory=list)    # [(name, type, engine, mean ms)], run order

    def as_dict(self, top: int = 0) -> dict:
        types = op_type_table(self)
        total = sum(ms for _, _, _, ms in self.ops) or 1.0
        ranked = sorted(self.ops, key=lambda o: -o[3])
        return {"runs": self.runs, "total_ms": sum(ms for *_, ms in self.ops),
                "op_types": [{"type": t, "nodes": n, "ms": ms, "share": ms / total}
                             for t, n, ms in types],
                "ops": [{"name": name, "type": t, "engine": engine, "ms": ms,
                         "share": ms / total}
                        for name, t, engine, ms in (ranked[:top] if top else ranked)]}


def profile_runs(model, feeds_list: list) -> OpProfile:
    """Each feed set run once through Model.profile; times averaged over the runs."""
    sums: dict = {}
    meta: dict = {}
    for feeds in feeds_list:
        for name, op_type, engine, seconds in model.profile(feeds, 1):
            sums[name] = sums.get(name, 0.0) + seconds
            meta[name] = (op_type, engine)
    runs = max(len(feeds_list), 1)
    return OpProfile(len(feeds_list), [(name, *meta[name], sums[name] * 1000.0 / runs)
                                       for name in sums])


def op_type_table(profile: OpProfile) -> list:
    """[(op type, nodes, mean ms per run)], slowest first."""
    table: dict = {}
    for _, op_type, _, ms in profile.ops:
        nodes, total = table.get(op_type, (0, 0.0))
        table[op_type] = (nodes + 1, total + ms)
    return sorted(((t, n, ms) for t, (n, ms) in table.items()), key=lambda r: (-r[2], r[0]))
