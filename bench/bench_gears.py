"""A 4-gear batch compile (`--dynamic_batch_size=1,2,4,8`) of ResNet-50 over a single static
compile (batch 1) of the same model, and the OM size of the two (docs/dynamic-shapes.md).

    python3 bench/bench_gears.py [--size full|ci] [-n 1] [--keep DIR]

Each compile is a whole `python3 -m ge.atc` process:

  cold   a fresh kernel cache for each compile (every kernel built)
  warm   the same compile again on its own cache (every kernel a cache hit): what the
         pipeline itself costs per gear
  reuse  the gear compile on the cache the static compile left (gear 1's kernels are the
         static kernels; gears 2, 4, 8 are built)

Times are medians of n runs, wall and CPU (user + sys; steadier on a shared machine).  The
size ratio compares the OM files and their WEIGHTS_DATA partitions (weights are shared between
gears, kernels and graphs are per gear).
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

SOC = "Ascend310P3"
GEARS = "1,2,4,8"


def timed(argv: list, cwd: Path, env: dict) -> tuple:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="full", choices=("full", "ci"))
    parser.add_argument("-n", type=int, default=1)
    parser.add_argument("--keep", default="")
    args = parser.parse_args()
    from bench.models import resnet50, save
    from ge.om import read_om
    work = Path(args.keep or tempfile.mkdtemp(prefix="bench_gears_"))
    work.mkdir(parents=True, exist_ok=True)
    model = work / "resnet50.onnx"
    save(resnet50.build(size=args.size), model)
    image = resnet50.SIZES[args.size]["image"]
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT), ASCEND_WORK_PATH=str(work))
    base = [sys.executable, "-m", "ge.atc", "--framework=5", f"--model={model}",
            f"--soc_version={SOC}"]
    static = base + [f"--input_shape=input:1,3,{image},{image}", "--output=static"]
    gears = base + [f"--input_shape=input:-1,3,{image},{image}", f"--dynamic_batch_size={GEARS}",
                    "--output=gears"]

    def run(argv: list, cache: str, fresh: bool) -> tuple:
        directory = work / cache
        if fresh:
            shutil.rmtree(directory, ignore_errors=True)
        return timed(argv + [f"--op_compiler_cache_dir={directory}"], work, env)

    results: dict = {}
    plan = (("static cold", static, "c_static", True), ("static warm", static, "c_static", False),
            ("gears cold", gears, "c_gears", True), ("gears warm", gears, "c_gears", False))
    for _ in range(max(args.n, 1)):
        for label, argv, cache, fresh in plan:
            results.setdefault(label, []).append(run(argv, cache, fresh))
        run(static, "c_reuse", True)                  # a cache holding the static kernels
        results.setdefault("gears reuse", []).append(run(gears, "c_reuse", False))
    med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v))
           for k, v in results.items()}
    om_static, om_gears = read_om(str(work / "static.om")), read_om(str(work / "gears.om"))
    size_static, size_gears = (work / "static.om").stat().st_size, \
        (work / "gears.om").stat().st_size
    w_static, w_gears = len(om_static.payload(1)), len(om_gears.payload(1))
    print(f"ResNet-50 {args.size} ({image}x{image}), gears {GEARS}, n={args.n}")
    for label, (wall, cpu) in med.items():
        print(f"  {label:<12} {wall:7.2f} s wall  {cpu:7.2f} s CPU")
    for kind in ("cold", "warm"):
        ws, cs = med[f"static {kind}"]
        wg, cg = med[f"gears {kind}"]
        print(f"  4 gears / static, {kind} cache: {wg / ws:.2f}x wall, {cg / cs:.2f}x CPU")
    wr, cr = med["gears reuse"]
    ws, cs = med["static cold"]
    print(f"  4 gears on the static compile's cache / static cold: {wr / ws:.2f}x wall, "
          f"{cr / cs:.2f}x CPU")
    print(f"  OM size: {size_gears / size_static:.3f}x ({size_gears} vs {size_static} B); "
          f"weights {w_gears / w_static:.3f}x; kernels {len(om_gears.kernels)} vs "
          f"{len(om_static.kernels)}")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
