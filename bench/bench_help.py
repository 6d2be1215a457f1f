"""Start-up cost of pyatc: `pyatc --help` against `python3 -c pass` and `atc --help`.

    python3 bench/bench_help.py [--prefix <install>] [-n 20]

Without --prefix a temporary prefix install is built first (scripts/install_prefix.sh). Each
command runs n times, alternating, from a scratch directory with set_env.sh applied; the median
wall time of each and the two ratios are printed.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List

REPO_ROOT = Path(__file__).resolve().parents[1]


def set_env_environment(prefix: Path) -> Dict[str, str]:
    base = dict(os.environ)
    base["PATH"] = os.path.dirname(sys.executable) + os.pathsep + base.get("PATH", "")
    out = subprocess.run(["bash", "-c", '. "$1" && env -0', "set_env", str(prefix / "set_env.sh")],
                         env=base, check=True, capture_output=True).stdout
    return dict(item.split("=", 1) for item in out.decode().split("\0") if "=" in item)


def wall_time(argv: List[str], env: Dict[str, str], cwd: str) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def bench(prefix: Path, runs: int) -> None:
    env = set_env_environment(prefix)
    commands = {
        "python3 -c pass": [sys.executable, "-c", "pass"],
        "pyatc --help": [str(prefix / "bin" / "pyatc"), "--help"],
        "atc --help": [str(prefix / "bin" / "atc"), "--help"],
    }
    times: Dict[str, List[float]] = {name: [] for name in commands}
    with tempfile.TemporaryDirectory() as scratch:
        for argv in commands.values():  # warm the page cache and __pycache__
            wall_time(argv, env, scratch)
        for _ in range(runs):
            for name, argv in commands.items():
                times[name].append(wall_time(argv, env, scratch))
    medians = {name: statistics.median(values) for name, values in times.items()}
    for name, value in medians.items():
        print(f"{name:<18} median {value * 1000:8.1f} ms over {runs} runs")
    pyatc = medians["pyatc --help"]
    print(f"pyatc --help / python3 -c pass = {pyatc / medians['python3 -c pass']:.2f}")
    print(f"pyatc --help / atc --help      = {pyatc / medians['atc --help']:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prefix", type=Path, help="an existing prefix install")
    parser.add_argument("-n", "--runs", type=int, default=20)
    options = parser.parse_args()
    if options.prefix is not None:
        bench(options.prefix, options.runs)
        return
    with tempfile.TemporaryDirectory() as tmp:
        prefix = Path(tmp) / "cann"
        subprocess.run([str(REPO_ROOT / "scripts" / "install_prefix.sh"), str(prefix)],
                       check=True, env=dict(os.environ, PYTHON=sys.executable),
                       stdout=subprocess.DEVNULL)
        bench(prefix, options.runs)


if __name__ == "__main__":
    main()
