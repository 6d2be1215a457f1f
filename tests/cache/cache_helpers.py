"""Shared helpers of the cache tests: fake entries of known size, and a worker process that
compiles a few real kernels into a cache through compile_ops (run as `python3 -c`)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from ge.compiler.cache.store import publish

REPO = Path(__file__).resolve().parents[2]
KB = 1024

WORKER = r"""
import json, sys
sys.path.insert(0, sys.argv[1]); sys.path.insert(0, sys.argv[1] + "/tests")
from ge.compiler.opcompile import compile_ops
from _relu_chains import relu_chains
root, mode, n, out = sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
ck = compile_ops(relu_chains(n), {"ge.op_compiler_cache_dir": root,
                                 "ge.op_compiler_cache_mode": mode, "ge.socVersion": "Ascend310"})
with open(out, "w") as f:
    json.dump({"kernels": {n: b.hex() for n, b in ck.kernels}, "stats": ck.stats}, f)
"""


def worker_argv(root, mode="enable", n=3, out="/dev/null") -> list:
    return [sys.executable, "-c", WORKER, str(REPO), str(root), mode, str(n), str(out)]


def run_worker(root, mode="enable", n=3, out=None, env=None, check=True):
    out = out or os.path.join(os.path.dirname(str(root)), f"worker-{time.monotonic_ns()}.json")
    proc = subprocess.run(worker_argv(root, mode, n, out), env=env, capture_output=True,
                          text=True, timeout=300)
    if check:
        assert proc.returncode == 0, proc.stderr
    if proc.returncode == 0:
        with open(out) as f:
            return proc, json.load(f)
    return proc, None


def fake_entry(cache_dir, name: str, size: int, mtime: float) -> None:
    """A valid entry whose binary has `size` bytes, its LRU clock set to `mtime`."""
    os.makedirs(cache_dir, exist_ok=True)
    publish(str(cache_dir), name, bytes([7]) * size, {"op_type": "Fake"})
    os.utime(os.path.join(cache_dir, name, name + ".json"), (mtime, mtime))


def soc_dir(root) -> Path:
    return Path(root) / "kernel_cache" / "Ascend310"


# entries of the object kernels link and of templates (docs/cache.md), not kernels
OBJECT_PREFIXES = ("te_ge_support_", "te_ge_template_")


def all_entries(root) -> list:
    d = soc_dir(root)
    return sorted(p.name for p in d.iterdir() if p.is_dir() and not p.name.startswith(".")) \
        if d.exists() else []


def final_entries(root) -> list:
    """The kernels' entries (not the support object's or the templates')."""
    return [n for n in all_entries(root) if not n.startswith(OBJECT_PREFIXES)]


def temporaries(root) -> list:
    d = soc_dir(root)
    return sorted(p.name for p in d.iterdir() if p.name.startswith(".")) if d.exists() else []
