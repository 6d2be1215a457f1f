"""Models larger than memory (issue #17 part 2): a generated decoder-only transformer with its
fp32 weights in ONNX external data (bench/large_model.py), compiled with and without
--external_weight, measured against `cp --reflink=never` of its files and against
onnxruntime's offline optimisation, plus a short prompt run on the host.

    python3 bench/bench_large_model.py [--sizes 10M,100M,1G,6.7G] [--ort-max 1.5G]
                                       [--work DIR] [--plot bench/large_model.png] [--runs 2]
                                       [--results rows.jsonl] [--no-prompt]

For each size (weight bytes; the largest is d_model 4096, 8 layers, vocab 8192 = 6.7 GB):
  cp     `cp --reflink=never` of model.onnx + model.onnx.data, warm page cache (median)
  ours   `python3 -m ge.atc` to an OM with the weights inside (median), and with
         --external_weight=2, wall time and peak RSS (ru_maxrss of a small parent's child),
         after one unmeasured compile of the same model (kernel cache, byte code)
  ort    onnxruntime offline optimisation to a model with external initializers, sizes up to
         --ort-max (it holds every weight in memory)
Every run is preceded by `sync`, so one run's dirty pages do not throttle the next; neither
ours nor cp fsyncs what it writes (cp followed by sync is printed too: the disk's time).  Disk
space is checked first: the largest size needs about 3x its weights free at a time (its data,
one copy or OM, and the next artefact); files are deleted as soon as they are measured.  For the
largest OM the partition table is read back (WEIGHTS_DATA past 4 GiB) and its checksum
verified.  The prompt check compiles a small instance (d_model 512, 2 layers) both ways and
compares the host runtime's logits with onnxruntime's.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))
sys.path.insert(0, str(REPO_ROOT / "bench"))

from large_model import DATA_NAME, Shape, shape_for_bytes, weight_bytes, write_decoder  # noqa

SOC = "--soc_version=Ascend310P3"
F32 = "--precision_mode=must_keep_origin_dtype"
FULL = Shape(4096, 8, 32, 8192)             # 6.7 GB of fp32 weights
# runs argv[1:] as a child; prints its wall time and peak RSS (KiB) on the last line.  A child
# forked from this small parent starts with a small high-water mark (ru_maxrss survives exec).
PEAK = ("import resource, subprocess, sys, time\n"
        "t = time.perf_counter()\n"
        "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "t = time.perf_counter() - t\n"
        "sys.stderr.write(done.stdout[-3000:] + done.stderr[-3000:])\n"
        "print(t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
        "sys.exit(done.returncode)\n")
ORT = ("import onnxruntime as ort, sys\n"
       "o = ort.SessionOptions()\n"
       "o.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL\n"
       "o.optimized_model_filepath = sys.argv[2]\n"
       "o.add_session_config_entry("
       "'session.optimized_model_external_initializers_file_name', 'opt.data')\n"
       "o.add_session_config_entry("
       "'session.optimized_model_external_initializers_min_size_in_bytes', '1024')\n"
       "ort.InferenceSession(sys.argv[1], o, providers=['CPUExecutionProvider'])\n")


def parse_size(text: str) -> int:
    units = {"K": 1e3, "M": 1e6, "G": 1e9}
    text = text.strip().upper()
    return int(float(text[:-1]) * units[text[-1]]) if text[-1] in units else int(text)


def env() -> dict:
    out = dict(os.environ)
    out["PYTHONPATH"] = os.pathsep.join(
        [str(REPO_ROOT)] + [p for p in out.get("PYTHONPATH", "").split(os.pathsep) if p])
    out.pop("PYTHONDONTWRITEBYTECODE", None)
    return out


def measured(argv: list, cwd: Path) -> tuple[float, int]:
    """(wall seconds, peak RSS bytes) of one process, after a sync."""
    os.sync()
    done = subprocess.run([sys.executable, "-c", PEAK, *argv], cwd=cwd, env=env(),
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, argv))} failed:\n{done.stderr[-4000:]}")
    wall, peak = done.stdout.split()[-2:]
    return float(wall), int(peak) << 10


def fresh(directory: Path) -> Path:
    """An empty `directory`: every measured run writes new files, as cp does (replacing a
    large file frees its blocks first: seconds on ext4 for 6.7 GB, outside cp's timing too)."""
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir()
    return directory


def ours(model: Path, out: Path, *extra) -> list:
    return [sys.executable, "-m", "ge.atc", f"--model={model}", "--framework=5",
            f"--output={out}", SOC, F32, *extra]


def du(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def check_disk(work: Path, largest: int) -> None:
    need = 3 * largest + (1 << 30)
    free = shutil.disk_usage(work).free
    print(f"disk: the largest size needs about {need / 1e9:.1f} GB free in {work} "
          f"(its data, one copy or OM, the next artefact); {free / 1e9:.1f} GB are free")
    if free < need:
        raise SystemExit("not enough free disk space; pass smaller --sizes or another --work")


def om_past_4gib(om: Path) -> str:
    """Read the header and partition table of a large OM (mapped, not read) and verify its
    checksum streaming; returns a line describing WEIGHTS_DATA."""
    import mmap
    from ge.fsutil import FileRange
    from ge.om.container import (HEADER_SIZE, PartitionType, body_checksum, unpack_header,
                                 unpack_tables)
    with open(om, "rb") as f:
        data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    header = unpack_header(data, str(om))
    parts = unpack_tables(data, header, str(om))
    weights = next(p for p in parts if p.type == PartitionType.WEIGHTS_DATA)
    size = len(data)
    data.close()
    digest = body_checksum([FileRange(str(om), HEADER_SIZE, size - HEADER_SIZE)])
    ok = digest == header.checksum
    return (f"WEIGHTS_DATA at offset {weights.offset}, {weights.size} bytes (ends at "
            f"{(weights.offset + weights.size) / (1 << 30):.2f} GiB); checksum "
            f"{'verified' if ok else 'MISMATCH'}")


def bench_size(target: int, work: Path, runs: int, ort_max: int, full: bool) -> dict:
    shape = FULL if full else shape_for_bytes(target)
    size = weight_bytes(shape)
    model_dir = work / f"model_{shape.label}"
    t = time.perf_counter()
    model = Path(write_decoder(str(model_dir), shape))
    print(f"\n{shape} : {size / 1e9:.3f} GB of weights (generated in "
          f"{time.perf_counter() - t:.1f} s)", flush=True)
    row = {"bytes": size, "shape": shape.label}
    subprocess.run(["cat", str(model), str(model_dir / DATA_NAME)], stdout=subprocess.DEVNULL)
    copy_dir = work / "copy"
    cp_times, cp_sync = [], []
    for _ in range(max(runs, 2)):
        fresh(copy_dir)
        os.sync()
        t = time.perf_counter()
        subprocess.run(["cp", "--reflink=never", str(model), str(model_dir / DATA_NAME),
                        str(copy_dir)], check=True)
        cp_times.append(time.perf_counter() - t)
        os.sync()
        cp_sync.append(time.perf_counter() - t)
    shutil.rmtree(copy_dir)
    row["cp"], row["cp_sync"] = statistics.median(cp_times), statistics.median(cp_sync)
    warm = work / "out_warmup"                 # one unmeasured compile: kernels, byte code
    warm.mkdir(exist_ok=True)
    row["first_compile"] = measured(ours(model, warm / "net", "--external_weight=2"), warm)[0]
    shutil.rmtree(warm)
    for label, extra in (("ours", ()), ("ours_ext2", ("--external_weight=2",))):
        out_dir = work / f"out_{label}"
        figures = [measured(ours(model, out_dir / "net", *extra), fresh(out_dir))
                   for _ in range(runs)]
        row[label] = statistics.median(f[0] for f in figures)
        row[label + "_rss"] = max(f[1] for f in figures)
        row[label + "_out"] = du(out_dir)
        if full and label == "ours":
            row["om_check"] = om_past_4gib(out_dir / "net.om")
        shutil.rmtree(out_dir)
    if size <= ort_max:
        out_dir = work / "out_ort"
        figures = [measured([sys.executable, "-c", ORT, str(model), str(out_dir / "opt.onnx")],
                            fresh(out_dir)) for _ in range(runs)]
        row["ort"] = statistics.median(f[0] for f in figures)
        row["ort_rss"] = max(f[1] for f in figures)
        shutil.rmtree(out_dir)
    shutil.rmtree(model_dir)
    print(json.dumps(row), flush=True)
    print(f"  cp {row['cp']:.2f} s (+sync {row['cp_sync']:.2f} s); ours {row['ours']:.2f} s "
          f"= {row['ours'] / row['cp']:.2f}x cp, {row['ours'] / row['cp_sync']:.2f}x cp+sync, "
          f"peak RSS {row['ours_rss'] / 2**20:.0f} MiB; --external_weight=2 "
          f"{row['ours_ext2']:.2f} s = {row['ours_ext2'] / row['cp']:.2f}x cp, peak RSS "
          f"{row['ours_ext2_rss'] / 2**20:.0f} MiB"
          + (f"; ort {row['ort']:.2f} s, peak RSS {row['ort_rss'] / 2**20:.0f} MiB"
             if "ort" in row else ""), flush=True)
    if "om_check" in row:
        print("  OM: " + row["om_check"], flush=True)
    return row


def prompt_check(work: Path) -> str:
    """A small instance compiled both ways; logits of a short prompt vs onnxruntime."""
    import numpy as np
    import onnxruntime as ort
    shape = Shape(512, 2, 8, 1024)
    model = Path(write_decoder(str(work / "prompt"), shape))
    ids = np.array([[17, 4, 912, 33, 5, 250, 1000, 8]], dtype=np.int64)
    want = ort.InferenceSession(str(model)).run(None, {"input_ids": ids})[0]
    lines = []
    for label, extra in (("weights in OM", ()), ("--external_weight=2", ("--external_weight=2",)),
                         ("--external_weight=1", ("--external_weight=1",))):
        out = work / "prompt" / f"mode{extra[0][-1] if extra else 0}"
        out.mkdir()
        done = subprocess.run(ours(model, out / "net", *extra), cwd=out, env=env(),
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"compile failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
        got = subprocess.run([sys.executable, "-c", (
            "import sys, numpy as np, ge.runtime\n"
            "ids = np.array([[17, 4, 912, 33, 5, 250, 1000, 8]], dtype=np.int64)\n"
            "np.save(sys.argv[2], ge.runtime.load(sys.argv[1]).run([ids])[0])\n"),
            str(out / "net.om"), str(out / "logits.npy")], env=env(), check=True)
        logits = np.load(out / "logits.npy")
        diff = float(np.abs(logits - want).max())
        same = bool((logits.argmax(-1) == want.argmax(-1)).all())
        lines.append(f"  {label}: max |logits - onnxruntime| = {diff:.2e} (|logits| up to "
                     f"{float(np.abs(want).max()):.2f}), greedy next tokens "
                     f"{'identical' if same else 'DIFFER'}")
    shutil.rmtree(work / "prompt")
    return f"prompt check on {shape} ({weight_bytes(shape) / 1e6:.0f} MB):\n" + "\n".join(lines)


def plot(rows: list, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    gb = [r["bytes"] / 1e9 for r in rows]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    series = (("ours", "pyatc (weights in OM)", "o-"),
              ("ours_ext2", "pyatc --external_weight=2", "s-"),
              ("ort", "onnxruntime offline optimisation", "^-"),
              ("cp", "cp --reflink=never", "k--"),
              ("cp_sync", "cp, then sync (the disk's time)", "k:"))
    for key, label, style in series:
        xs = [g for g, r in zip(gb, rows) if key in r]
        if xs:
            left.plot(xs, [r[key] for r in rows if key in r], style, label=label)
        if not key.startswith("cp") and xs:
            right.plot(xs, [r[key + "_rss"] / 2**20 for r in rows if key in r], style,
                       label=label)
    for ax, title, unit in ((left, "compile time", "seconds"),
                            (right, "peak memory (RSS)", "MiB")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("fp32 weights (GB)")
        ax.set_ylabel(unit)
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("generated decoder-only transformer, ONNX external data, warm page cache")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"plot: {path}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10M,100M,1G,6.7G",
                    help="weight sizes; the largest >= 6G uses the full 6.7 GB shape")
    ap.add_argument("--ort-max", default="1.5G")
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--work", default="")
    ap.add_argument("--plot", default=str(REPO_ROOT / "bench" / "large_model.png"))
    ap.add_argument("--no-prompt", action="store_true")
    ap.add_argument("--results", default="",
                    help="JSON-lines file: rows are appended; the plot shows every row in it")
    args = ap.parse_args()
    sizes = sorted(parse_size(s) for s in args.sizes.split(","))
    work = Path(args.work or tempfile.mkdtemp(prefix="bench_large_", dir="/tmp"))
    work.mkdir(parents=True, exist_ok=True)
    check_disk(work, max(weight_bytes(FULL) if s >= 6e9 else s for s in sizes))
    try:
        if not args.no_prompt:
            print(prompt_check(work), flush=True)
        rows = []
        for size in sizes:
            rows.append(bench_size(size, work, args.runs, parse_size(args.ort_max), size >= 6e9))
            if args.results:
                with open(args.results, "a") as f:
                    f.write(json.dumps(rows[-1]) + "\n")
        if args.results:
            rows = [json.loads(line) for line in open(args.results) if line.strip()]
            rows = sorted({r["bytes"]: r for r in rows}.values(), key=lambda r: r["bytes"])
        plot(rows, Path(args.plot))
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
