"""`python3 -m ge.runtime --model m.om --input a.npy,b.bin --output DIR` (msame style).

Writes DIR/output_0.npy, ... (or .bin / .txt with --outfmt) and prints one summary line per
output and the mean latency.  Any failure prints one coded `[ERROR]` line and exits 255.
"""
from __future__ import annotations

import logging
import os
import sys
import time

from ._args import Opt, help_text, parse
from ._cli import EXIT_OK, guarded
from ge.errors import GeError
from ge.stdio import write_product

OPTIONS = (
    Opt("model", "the OM file to run", required=True),
    Opt("input", "comma-separated input files in model input order: .npy (checked against the "
                 "model) or raw bytes (.bin; shape and dtype from the model); omit for zeros; "
                 "or one directory per input (each file one inference, matched by name order)"),
    Opt("output", "directory for output_<i>.<fmt>; omit to write nothing"),
    Opt("outfmt", "NPY, BIN or TXT", "NPY"),
    Opt("loop", "run the model this many times (latency is the mean)", 1, int),
    Opt("threads", "threads of each run (OpenBLAS sgemm); default: the physical cores, as "
                   "onnxruntime"),
    Opt("help", "print this text", False, bool),
    # the gear of a model compiled with gears (msame's options; .npy inputs name it by shape)
    Opt("dymBatch", "batch-size gear of a --dynamic_batch_size model, e.g. 4"),
    Opt("dymHW", "image-size gear of a --dynamic_image_size model: H,W"),
    Opt("dymDims", 'gear of a --dynamic_dims model as input shapes: "x:1,16;y:1,16"'),
    # ais_bench-style benchmarking (ge/runtime/_bench_cli.py, docs/runtime.md "Benchmarking")
    Opt("warmup_count", "runs of the first input set before timing (default 1 in the "
                        "benchmark mode: directories, --summary, --profiler)", None, int),
    Opt("summary", "write the latency summary (mean, median, p99, min, max, throughput) "
                   "as JSON to this file"),
    Opt("profiler", "time every op: per op type and top ops tables", False, bool),
    Opt("profiler_top", "rows of the --profiler tables", 10, int),
    Opt("profiler_json", "write the --profiler times as JSON to this file"),
)


def main(argv: list) -> int:
    if "--help" in argv or "-h" in argv:
        write_product("stdout", help_text("python3 -m ge.runtime",
                                          __doc__.strip().splitlines()[0], OPTIONS) + "\n")
        return EXIT_OK
    args = parse(argv, OPTIONS)
    from . import load
    from ._threads import check_threads
    from ._io import OUTPUT_FORMATS, read_inputs, write_outputs
    import numpy as np
    fmt = args["outfmt"].upper()
    if fmt not in OUTPUT_FORMATS:
        raise GeError("E10001", {"value": args["outfmt"], "parameter": "--outfmt",
                                 "reason": f"allowed: {', '.join(OUTPUT_FORMATS)}"})
    if not 1 <= args["loop"] <= 1_000_000:
        raise GeError("E10001", {"value": args["loop"], "parameter": "--loop",
                                 "reason": "it must be between 1 and 1000000"})
    model = load(args["model"], threads=check_threads(args["threads"], "--threads"))
    files = [f for f in (args["input"] or "").split(",") if f]
    from ._bench_cli import run_bench, wants_bench
    if wants_bench(args, files):    # input directories, warm-up, summary, profiler
        lines = run_bench(model, args, files, fmt)
        model.close()
        write_product("stdout", "\n".join(lines) + "\n")
        return EXIT_OK
    gear, specs = gear_inputs(model, args)
    if files:
        inputs = read_inputs(files, specs, model.input_ranges)
    else:
        inputs = [np.zeros([max(d, 1) for d in s.shape], s.dtype) for s in specs]
    start = time.perf_counter()
    for _ in range(args["loop"]):
        outputs = model.run(inputs, gear=gear)
    elapsed = (time.perf_counter() - start) / args["loop"]
    paths = (write_outputs(args["output"], outputs, fmt, specs=model.outputs) if args["output"]
             else [""] * len(outputs))
    lines = [f"output {spec.index} {spec.name}: "
             f"{'bfloat16' if spec.data_type == 'DT_BF16' else value.dtype} {list(value.shape)}"
             + (f" -> {path}" if path else "") for spec, value, path in
             zip(model.outputs, outputs, paths)]
    lines.append(f"Inference average time: {elapsed * 1000:.3f} ms")
    model.close()
    write_product("stdout", "\n".join(lines) + "\n")
    return EXIT_OK


def gear_inputs(model, args: dict) -> tuple:
    """(gear number or None, input specs): a --dymBatch/--dymHW/--dymDims option fixes the
    gear and so the shapes a raw input file is read with."""
    from ._plan import TensorSpec
    given = [(f"--{name}", args[name]) for name in ("dymBatch", "dymHW", "dymDims")
             if args.get(name)]
    if len(given) > 1:
        raise GeError("EP0201", {"value": given[1][1], "option": given[1][0],
                                 "reason": f"it cannot be combined with {given[0][0]}"})
    if not given:
        if model.gears is None:
            return None, model.inputs
        first = model.gear_shapes(0)      # zeros without --input: the first gear
        return None, [TensorSpec(s.name, first.get(s.name, s.shape), s.dtype, s.index, s.aipp)
                      if not args.get("input") else s for s in model.inputs]
    gear = model.select_gear(*given[0])
    shapes = model.gear_shapes(gear)
    return gear, [TensorSpec(s.name, tuple(shapes.get(s.name, s.shape)), s.dtype, s.index,
                             s.aipp) for s in model.inputs]


def _configure_logging() -> None:
    level = os.environ.get("GE_RUNTIME_LOG", "").upper()
    logging.basicConfig(level=getattr(logging, level, logging.WARNING), stream=sys.stderr,
                        format="[%(levelname)s] %(name)s: %(message)s")


if __name__ == "__main__":
    _configure_logging()
    sys.exit(guarded(main, sys.argv[1:]))
