"""The fuzz probe of issue #19 at any size: the table of inputs tried, coded errors, tracebacks,
hangs, crashes, silent wrong results and files clobbered, per category.

    python3 bench/fuzz_probe.py [--seed 19] [--count 1000] [--jobs 2] [--prefix <install>]
    python3 bench/fuzz_probe.py --seed 19 --only om:17,flags:3      # reproduce cases

--count N runs the proportions of tests/reliability/test_fuzz.py: 1.5 N OM mutations, N/2
ONNX model mutations, N/2 Caffe model mutations, N flag lines, and N/10 of those lines through
`atc` and `pyatc` as processes, compared with the in-process run (exit status and first error
code).  The cases run in `--jobs` worker processes (bench/fuzz/worker.py), each case killed
after --limit seconds.
Without --prefix (or PYATC_TEST_PREFIX) an install is built first (scripts/install_prefix.sh).
Everything happens under a temporary directory (--work to keep it), with a private kernel
cache.  The exit status is 1 when any case has a fault.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Dict, List

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.bench_help import set_env_environment  # noqa: E402
from bench.fuzz.agree import line_as_process  # noqa: E402
from bench.fuzz.cases import small_model, write_materials  # noqa: E402
from bench.fuzz.verdict import Verdict, table  # noqa: E402
from bench.fuzz.worker import MODEL_ARGS, run_cases, run_in_process  # noqa: E402

ENTRIES = ("atc", "pyatc")


def _compile(args: List[str], cwd: Path, om: Path) -> Path:
    rc, text = run_in_process(args, cwd)
    if rc != 0:
        sys.exit(f"compiling the base model failed:\n{text}")
    return om


def _base_om(work: Path) -> Path:
    """The CI-sized MobileNetV2 of bench/models, compiled (what the test suite mutates)."""
    from bench.models import MODELS, save
    d = work / "base"
    d.mkdir()
    save(MODELS["mobilenetv2"](size="ci"), d / "mobilenetv2_ci.onnx")
    return _compile(["--framework=5", "--model=mobilenetv2_ci.onnx", "--output=base",
                     "--soc_version=Ascend310P3"], d, d / "base.om")


def _materials(work: Path) -> Path:
    d = work / "materials"
    d.mkdir()
    model = small_model().SerializeToString()
    (d / "model.onnx").write_bytes(model)
    om = _compile(MODEL_ARGS, d, d / "out.om").read_bytes()
    shutil.rmtree(d)
    d.mkdir()
    write_materials(d, model, om)
    return d


def _parallel(category: str, indexes: List[int], jobs: int, base: dict,
              limit: float) -> List[Verdict]:
    chunks = [indexes[i::jobs] for i in range(jobs) if indexes[i::jobs]]
    with ThreadPoolExecutor(len(chunks) or 1) as pool:
        parts = pool.map(lambda ch: run_cases(dict(base, category=category, indexes=ch,
                                                   work=str(Path(base["work"]) / category /
                                                            str(ch[0]))), limit), chunks)
        verdicts = [v for part in parts for v in part]
    return sorted(verdicts, key=lambda v: v.index)


def _prefix(args, work: Path) -> Path:
    given = args.prefix or os.environ.get("PYATC_TEST_PREFIX")
    if given:
        return Path(given)
    prefix = work / "install"
    subprocess.run([str(REPO / "scripts" / "install_prefix.sh"), str(prefix)], check=True,
                   env=dict(os.environ, PYTHON=sys.executable), stdout=subprocess.DEVNULL)
    return prefix


def process_agreement(seed: int, indexes: List[int], in_process: Dict[int, Verdict],
                      prefix: Path, work: Path, materials: Path, jobs: int,
                      limit: float) -> List[Verdict]:
    """Each flag line of `indexes` through `atc` and `pyatc` as processes: judged like any run,
    plus a `disagree` fault when exit status or first error code differs from in-process."""
    env = set_env_environment(prefix)

    def one(job):
        index, entry = job
        cwd = work / "processes" / f"{entry}{index}"
        shutil.copytree(materials, cwd)
        start = time.monotonic()
        verdict = line_as_process(seed, index, entry, [str(prefix / "bin" / entry)], env, cwd,
                                  in_process[index], limit)
        verdict.seconds = time.monotonic() - start
        shutil.rmtree(cwd, ignore_errors=True)
        return verdict
    with ThreadPoolExecutor(jobs) as pool:
        return list(pool.map(one, [(i, e) for i in indexes for e in ENTRIES]))


def _only(spec: str) -> Dict[str, List[int]]:
    out: Dict[str, List[int]] = {}
    for item in spec.split(","):
        category, index = item.split(":")
        out.setdefault(category, []).append(int(index))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=19)
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--limit", type=float, default=120.0, help="seconds per case")
    parser.add_argument("--prefix", help="an install (scripts/install_prefix.sh) for the "
                                         "process runs")
    parser.add_argument("--om", help="base OM to mutate instead of compiling MobileNetV2 (CI)")
    parser.add_argument("--only", help="category:index,... to run only these cases")
    parser.add_argument("--work", help="work directory (kept); default a temporary one")
    args = parser.parse_args()
    n = args.count
    wanted = _only(args.only) if args.only else {
        "om": list(range(n * 3 // 2)), "model": list(range(n // 2)), "caffe": list(range(n // 2)),
        "flags": list(range(n))}
    work = Path(args.work or tempfile.mkdtemp(prefix="fuzz_probe_")).resolve()
    work.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("ASCEND_CACHE_PATH", str(work / "kernel_cache"))
    os.environ.setdefault("ASCEND_PROCESS_LOG_PATH", str(work / "log"))
    start = time.monotonic()
    base = {"seed": args.seed, "work": str(work / "runs")}
    if "om" in wanted:
        base["om"] = str(Path(args.om).resolve()) if args.om else str(_base_om(work))
    base["materials"] = str(_materials(work))
    rows: Dict[str, List[Verdict]] = {}
    names = {"om": "OM mutations", "model": "model truncations/mutations",
             "caffe": "Caffe prototxt/caffemodel mutations", "flags": "flag lines (in-process)"}
    for category, indexes in wanted.items():
        rows[names[category]] = _parallel(category, indexes, args.jobs, base, args.limit)
    if not args.only:
        flags = {v.index: v for v in rows[names["flags"]]}
        picked = list(range(0, n, 10))
        rows["process vs in-process (atc, pyatc)"] = process_agreement(
            args.seed, picked, flags, _prefix(args, work), work, Path(base["materials"]),
            args.jobs, args.limit)
    print(f"seed {args.seed}, {sum(len(v) for v in rows.values())} runs in "
          f"{time.monotonic() - start:.0f} s ({args.jobs} jobs)\n")
    print(table(rows))
    print()
    for name, verdicts in rows.items():
        codes = Counter(v.code or f"exit {v.rc}" for v in verdicts)
        print(f"{name}: " + ", ".join(f"{c} x{n}" for c, n in codes.most_common()))
    faulty = [v for verdicts in rows.values() for v in verdicts if v.faults]
    for verdict in faulty:
        print(verdict.describe(args.seed))
    if args.only:
        for verdicts in rows.values():
            for v in verdicts:
                print(f"{v.category}:{v.index} [{v.kind}] rc={v.rc} code={v.code or '-'} "
                      f"{v.note}")
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if faulty else 0


if __name__ == "__main__":
    sys.exit(main())
