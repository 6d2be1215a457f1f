"""Compile time of ResNet-50 and BERT-base (full sizes) against two baselines, each a whole
process measured in the same run:

  floor  python3: onnx.load + SerializeToString + write of the same model
  ort    onnxruntime's offline optimisation (SessionOptions.optimized_model_filepath, all
         graph optimisations) of the same model
  ours   an ATC compile of the model to .om, with a warm kernel cache and with a cold one (a
         fresh cache directory each run); medians of n runs each

    python3 bench/bench_compile.py [-n 3] [--models resnet50,bert] [--prefix <install>]
                                   [--profile] [--keep DIR]

The byte code of ge is written once before any timing (as an installed package has it), so the
cold figure is the operator compiler's cost, not Python's.  Wall times are medians; the CPU time
(user + sys) of the same processes is printed too, as it is steadier when other jobs share the
machine, and so is the peak RSS of the compile processes (each one's own ru_maxrss, from
wait4) next to the model's size.  `ours` runs `python3 -m ge.atc` from this checkout, or
`<prefix>/bin/pyatc` with --prefix.
--profile also runs one warm compile in-process under cProfile and prints the hot spots.
"""
from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

SOC = "Ascend310P3"
FLOOR = ("import onnx, sys\n"
         "m = onnx.load(sys.argv[1])\n"
         "open(sys.argv[2], 'wb').write(m.SerializeToString())\n")
ORT = ("import onnxruntime as ort, sys\n"
       "o = ort.SessionOptions()\n"
       "o.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL\n"
       "o.optimized_model_filepath = sys.argv[2]\n"
       "ort.InferenceSession(sys.argv[1], o, providers=['CPUExecutionProvider'])\n")


CPU_TIMES: Dict[str, List[float]] = {}
"""label -> CPU seconds (user + sys) of each measured process: steadier than wall time on a
machine shared with other jobs."""


PEAK_RSS_MB: Dict[str, List[float]] = {}
"""label -> peak resident set (ru_maxrss) of each measured process, in MB."""


def wall_time(argv: List[str], env: Dict[str, str], cwd: str, label: str = "") -> float:
    with tempfile.TemporaryFile() as output:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, env=env, cwd=cwd, stdout=output, stderr=output)
        # wait4: this child's own CPU time and peak RSS (RUSAGE_CHILDREN has the max of all)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            output.seek(0)
            raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}):\n"
                             f"{output.read().decode(errors='replace')[-4000:]}")
    if label:
        CPU_TIMES.setdefault(label, []).append(usage.ru_utime + usage.ru_stime)
        PEAK_RSS_MB.setdefault(label, []).append(usage.ru_maxrss / 1024)   # Linux: KiB
    return elapsed


def environment(prefix: Optional[Path], pycache: Path) -> Dict[str, str]:
    """The measured processes' environment.  Byte code is cached (under `pycache`, so the
    checkout is not touched) as in any installed Python package: without it every run
    recompiles the ge sources, which is not what a user's compile costs."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(pycache)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    if prefix is not None:
        out = subprocess.run(["bash", "-c", '. "$1" && env -0', "set_env",
                              str(prefix / "set_env.sh")], env=env, check=True,
                             capture_output=True).stdout
        env = dict(item.split("=", 1) for item in out.decode().split("\0") if "=" in item)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    else:
        env["PYTHONPATH"] = os.pathsep.join(
            [str(REPO_ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    return env


def ours_argv(prefix: Optional[Path], model: Path, output: Path, cache: Path) -> List[str]:
    entry = [str(prefix / "bin" / "pyatc")] if prefix else [sys.executable, "-m", "ge.atc"]
    return entry + ["--framework=5", f"--model={model}", f"--output={output}",
                    f"--soc_version={SOC}", f"--op_compiler_cache_dir={cache}", "--precision_mode=must_keep_origin_dtype"]


GENERATE = ("import sys\n"
            f"sys.path.insert(0, {str(REPO_ROOT)!r})\n"
            "from bench.models import MODELS, save\n"
            "save(MODELS[sys.argv[1]](size='full'), sys.argv[2])\n")


def generate(name: str, directory: Path) -> Path:
    """The model, written by a child process: this one stays small, because a child's
    ru_maxrss starts from its parent's peak (Linux records the pre-exec memory at exec)."""
    path = directory / f"{name}_full.onnx"
    if not path.exists():
        subprocess.run([sys.executable, "-c", GENERATE, name, str(path)], check=True)
    return path


def profile(model: Path, cache: Path, out: Path, top: int) -> str:
    from ge.compiler.api import compile_model_file, save_om
    options = {"ge.socVersion": SOC, "ge.op_compiler_cache_dir": str(cache), "ge.exec.precision_mode": "must_keep_origin_dtype"}
    profiler = cProfile.Profile()
    profiler.enable()
    compiled = compile_model_file(str(model), 5, options)
    save_om(str(out), compiled, "bench")
    profiler.disable()
    text = io.StringIO()
    stats = pstats.Stats(profiler, stream=text)
    stats.sort_stats("tottime").print_stats(top)
    stages = ", ".join(f"{k} {v:.2f}" for k, v in compiled.context.stage_times.items()
                       if v >= 0.01)
    return f"stage times (s): {stages}\n" + text.getvalue()


def bench_model(name: str, work: Path, runs: int, prefix: Optional[Path],
                do_profile: bool) -> Dict[str, float]:
    model = generate(name, work)
    env = environment(prefix, work / "pycache")
    size_mb = model.stat().st_size / 1e6
    for script in (FLOOR, ORT):  # warm the page cache and the byte-code cache
        wall_time([sys.executable, "-c", script, str(model), str(work / "warmup.onnx")], env,
                  str(work))
    # ge's own byte code, as an installed package has it (written once, outside the timings)
    wall_time([sys.executable, "-m", "compileall", "-q", str(REPO_ROOT / "ge")], env, str(work))
    floor = [wall_time([sys.executable, "-c", FLOOR, str(model), str(work / "floor.onnx")],
                       env, str(work), f"{name} floor") for _ in range(runs)]
    ort = [wall_time([sys.executable, "-c", ORT, str(model), str(work / "ort.onnx")],
                     env, str(work), f"{name} ort") for _ in range(runs)]
    cold_cache = work / f"cache_cold_{name}"
    colds = []
    for _ in range(runs):           # each cold run starts from an empty kernel cache
        shutil.rmtree(cold_cache, ignore_errors=True)
        colds.append(wall_time(ours_argv(prefix, model, work / f"{name}_cold", cold_cache),
                               env, str(work), f"{name} cold"))
    warm = [wall_time(ours_argv(prefix, model, work / f"{name}_warm", cold_cache), env,
                      str(work), f"{name} warm") for _ in range(runs)]
    figures = {"floor": statistics.median(floor), "ort": statistics.median(ort),
               "warm": statistics.median(warm), "cold": statistics.median(colds)}
    om_mb = (work / f"{name}_warm.om").stat().st_size / 1e6
    print(f"\n{name} (full): model {size_mb:.1f} MB, OM {om_mb:.1f} MB, median of {runs}")
    print(f"  floor  onnx.load+serialize+write  {figures['floor']:7.2f} s")
    print(f"  ort    offline optimisation       {figures['ort']:7.2f} s")
    print(f"  ours   warm kernel cache          {figures['warm']:7.2f} s   "
          f"{figures['warm'] / figures['floor']:5.2f}x floor  "
          f"{figures['warm'] / figures['ort']:5.2f}x ort")
    print(f"  ours   cold kernel cache          {figures['cold']:7.2f} s   "
          f"{figures['cold'] / figures['floor']:5.2f}x floor  "
          f"{figures['cold'] / figures['ort']:5.2f}x ort")
    cpu = {key: statistics.median(CPU_TIMES[f"{name} {key}"])
           for key in ("floor", "ort", "warm", "cold")}
    print(f"  CPU time (user+sys): floor {cpu['floor']:.2f} s, ort {cpu['ort']:.2f} s, "
          f"ours warm {cpu['warm']:.2f} s ({cpu['warm'] / cpu['floor']:.2f}x floor, "
          f"{cpu['warm'] / cpu['ort']:.2f}x ort), cold {cpu['cold']:.2f} s")
    rss = {key: max(PEAK_RSS_MB[f"{name} {key}"]) for key in ("ort", "warm", "cold")}
    print(f"  peak RSS (ru_maxrss, max of the runs): ours warm {rss['warm']:.0f} MB = model "
          f"{size_mb:.0f} MB {rss['warm'] - size_mb:+.0f} MB ({rss['warm'] / size_mb:.2f}x "
          f"model), cold {rss['cold']:.0f} MB; ort {rss['ort']:.0f} MB")
    sys.stdout.flush()
    if do_profile:
        print(profile(model, cold_cache, work / f"{name}_profile.om", 25))
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--runs", type=int, default=3)
    parser.add_argument("--models", default="resnet50,bert")
    parser.add_argument("--prefix", type=Path, help="an installed prefix: time its pyatc")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--keep", type=Path, help="work in this directory and keep it")
    options = parser.parse_args()
    names = [n for n in options.models.split(",") if n]
    if options.keep:
        options.keep.mkdir(parents=True, exist_ok=True)
        for name in names:
            bench_model(name, options.keep, options.runs, options.prefix, options.profile)
        return
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            bench_model(name, Path(tmp), options.runs, options.prefix, options.profile)


if __name__ == "__main__":
    main()
