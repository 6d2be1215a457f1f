"""Remote kernel cache benchmark on ResNet-50: what a fresh machine gains from a warm store.

Starts a real Redis and a real nginx (WebDAV PUT) on loopback (bench/remote_servers.py), then
times whole compiles of ResNet-50 (the ATC main flow pyatc runs, in this process: parse,
passes, op compile, OM), and of them the op compile (`compile_report.json` `seconds`):

  cold         empty local cache, no store (every kernel compiled)
  warm-local   the local cache filled by `cold` (every kernel a verified local hit)
  push         (not a compile) the local entries sent to both stores, as `push` does
  remote-redis empty local cache, warm Redis (every kernel a verified remote hit, published)
  remote-http  empty local cache, warm HTTP store

and prints each remote case over warm-local (the issue's target: <= 1.3x) and over cold, all
measured in this run.  Servers and caches live in a temporary directory removed at the end.

    python3 bench/bench_remote_cache.py [--size ci|full] [--jobs N]
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.models import resnet50, save  # noqa: E402
from bench.remote_servers import NginxServer, RedisServer  # noqa: E402
from ge.atc import main_impl  # noqa: E402
from ge.compiler.cache import CacheStats, resolve  # noqa: E402
from ge.compiler.cache.remote import RemoteCache  # noqa: E402
from ge.compiler.cache.store import list_entries, lookup  # noqa: E402

SOC = "Ascend310P3"


def timed(model: Path, work: Path, label: str, stores: str = "") -> tuple:
    """(seconds, kernel_cache statistics) of one whole compile into `work/label`."""
    run = work / label
    run.mkdir()
    os.environ["ASCEND_WORK_PATH"] = str(run)
    os.environ["PYATC_REMOTE_CACHE"] = stores
    argv = ["pyatc", "--framework=5", f"--model={model}", f"--output={run / 'net'}",
            f"--soc_version={SOC}", f"--op_compiler_cache_dir={work / 'caches' / label}"]
    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
        start = time.perf_counter()
        rc = main_impl(argv)
        seconds = time.perf_counter() - start
    if rc != 0:
        raise SystemExit(f"{label}: the compile failed ({rc})")
    (report,) = run.glob("FE/*/compile_report.json")
    return seconds, json.loads(report.read_text())["kernel_cache"]


def push(root: str, stores: str) -> tuple:
    """Every local entry to every store; (seconds, entries)."""
    settings = resolve({"ge.op_compiler_cache_dir": root, "ge.socVersion": SOC})
    start = time.perf_counter()
    remote = RemoteCache.open(stores, "bench", CacheStats())
    names = list_entries(settings.cache_dir)
    for name in names:
        found = lookup(settings.cache_dir, name, refresh=False)
        remote.put(name, found.binary, found.meta)
    remote.close()
    return time.perf_counter() - start, len(names)


def line(label: str, seconds: float, stats: dict) -> None:
    print(f"{label:13s}: {seconds:7.2f} s, op compile {stats['seconds']:6.2f} s  (kernels "
          f"{stats['kernels']}, compiles {stats['compiles']}, hits {stats['hits']}, remote hits "
          f"{stats['remote_hits']}, {stats['remote_bytes_read'] / 1e6:.1f} MB from the store in "
          f"{stats['remote_seconds']:.2f} s)")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=("ci", "full"), default="full")
    parser.add_argument("--jobs", type=int, default=2, help="TE_PARALLEL_COMPILER")
    args = parser.parse_args(argv)
    os.environ["TE_PARALLEL_COMPILER"] = str(args.jobs)
    work = Path(tempfile.mkdtemp(prefix="bench_remote_"))
    servers = []
    try:
        key = work / "signing.key"
        key.write_bytes(os.urandom(32).hex().encode())
        key.chmod(0o600)
        os.environ["PYATC_REMOTE_CACHE_KEY_FILE"] = str(key)
        os.environ["ASCEND_PROCESS_LOG_PATH"] = str(work / "log")
        servers = [RedisServer(work / "redis"), NginxServer(work / "nginx")]
        redis_url, http_url = servers[0].url(0), servers[1].url("kernels")
        model = work / "resnet50.onnx"
        save(resnet50.build(args.size, 1), model)
        print(f"ResNet-50 ({args.size}), TE_PARALLEL_COMPILER={args.jobs}, "
              f"{os.cpu_count()} CPUs")
        cold, stats = timed(model, work, "cold")
        line("cold", cold, stats)
        shutil.copytree(work / "caches" / "cold", work / "caches" / "warm-local")
        warm, warm_stats = timed(model, work, "warm-local")
        line("warm-local", warm, warm_stats)
        seconds, count = push(str(work / "caches" / "cold"), f"{redis_url} {http_url}")
        print(f"{'push':13s}: {seconds:7.2f} s  ({count} entries to Redis and HTTP)")
        for label, store in (("remote-redis", redis_url), ("remote-http", http_url)):
            seconds, stats = timed(model, work, label, store)
            line(label, seconds, stats)
            print(f"{'':13s}  whole compile {seconds / warm:5.2f}x warm-local (target <= 1.3x),"
                  f" {cold / seconds:5.1f}x faster than cold; op compile "
                  f"{stats['seconds'] / max(warm_stats['seconds'], 1e-3):5.2f}x warm-local")
    finally:
        for server in servers:
            server.stop()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
