"""Aging: LRU by the JSON mtime (backdated with os.utime, no sleeps), 30-minute floor, remain
ratio, -1, the mtime refresh on hits, the non-blocking lock.

Arithmetic: each fake entry holds a 300 KiB binary plus a JSON of ~0.2 KiB; the limit is 1 MiB.
Four entries use ~1.2 MiB >= 1 MiB, so aging removes until <= 50 % of 1 MiB (512 KiB) is left,
i.e. at least ~0.7 MiB = three entries, oldest first, unless the 30-minute floor stops it.
"""
import os
import subprocess
import sys
import time

from ge.compiler.cache import KernelCache, resolve
from ge.compiler.cache.evict import LOCK_NAME, evict
from ge.compiler.cache.store import entry_mtime, lookup
from cache_helpers import KB, fake_entry

NOW = 1_000_000_000.0
HOUR = 3600


def _four(d, ages):
    for k, age in enumerate(ages):
        fake_entry(d, f"te_fake_{k}", 300 * KB, NOW - age)


def test_lru_removes_oldest_down_to_ratio(tmp_path):
    _four(tmp_path, [2 * HOUR, 1.5 * HOUR, HOUR, 600])
    r = evict(str(tmp_path), 1, 50, now=NOW)
    assert r.removed == ["te_fake_0", "te_fake_1", "te_fake_2"]
    assert sorted(os.listdir(tmp_path)) == [LOCK_NAME, "te_fake_3"]
    assert r.used_after <= 512 * KB


def test_recently_used_entries_are_never_aged(tmp_path):
    _four(tmp_path, [2 * HOUR, 1.5 * HOUR, 29 * 60, 60])
    r = evict(str(tmp_path), 1, 50, now=NOW)
    assert r.removed == ["te_fake_0", "te_fake_1"]      # stops at the 29-minute-old entry


def test_under_limit_nothing_removed(tmp_path):
    fake_entry(tmp_path, "te_fake_0", 300 * KB, NOW - 5 * HOUR)
    r = evict(str(tmp_path), 1, 50, now=NOW)
    assert r.removed == [] and r.skipped == "under limit"


def test_ratio_100_removes_just_enough(tmp_path):
    _four(tmp_path, [4 * HOUR, 3 * HOUR, 2 * HOUR, HOUR])
    r = evict(str(tmp_path), 1, 100, now=NOW)
    assert r.removed == ["te_fake_0"]                  # 1.2 MiB - 1 MiB < one entry


def test_minus_one_never_ages(tmp_path):
    _four(tmp_path, [4 * HOUR, 3 * HOUR, 2 * HOUR, HOUR])
    assert evict(str(tmp_path), -1, 50, now=NOW).removed == []


def test_hit_refreshes_mtime_unless_aging_off(tmp_path):
    fake_entry(tmp_path, "te_fake_0", 10, NOW)
    assert lookup(str(tmp_path), "te_fake_0", refresh=False).status == "hit"
    assert entry_mtime(str(tmp_path), "te_fake_0") == NOW
    assert lookup(str(tmp_path), "te_fake_0", refresh=True).status == "hit"
    assert entry_mtime(str(tmp_path), "te_fake_0") > NOW + 1000


def test_cache_with_minus_one_does_not_refresh(tmp_path):
    root = tmp_path / "root"
    s = resolve({"ge.op_compiler_cache_dir": str(root), "ge.socVersion": "S"},
                {"ASCEND_MAX_OP_CACHE_SIZE": "-1"})
    cache = KernelCache.open(s)
    fake_entry(s.cache_dir, "te_fake_0", 10, NOW)
    assert cache.get("te_fake_0") is not None
    assert entry_mtime(s.cache_dir, "te_fake_0") == NOW


def test_open_ages_with_ini_settings(tmp_path):
    root = tmp_path / "root"
    root.mkdir(mode=0o750)
    (root / "op_cache.ini").write_text(
        "[op_compiler_cache]\nmax_op_cache_size=1\nremain_cache_size_ratio=50\n")
    s = resolve({"ge.op_compiler_cache_dir": str(root), "ge.socVersion": "S"}, {})
    now = time.time()
    for k, age in enumerate([3 * HOUR, 2 * HOUR, HOUR, 60]):
        fake_entry(s.cache_dir, f"te_fake_{k}", 300 * KB, now - age)
    cache = KernelCache.open(s)
    assert cache.stats.evictions == 3
    assert cache.stats.evicted_names == ["te_fake_0", "te_fake_1", "te_fake_2"]


def test_busy_lock_skips_aging(tmp_path):
    _four(tmp_path, [4 * HOUR, 3 * HOUR, 2 * HOUR, HOUR])
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT);"
         "fcntl.lockf(fd, fcntl.LOCK_EX); print('locked', flush=True); sys.stdin.read()",
         str(tmp_path / LOCK_NAME)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        r = evict(str(tmp_path), 1, 50, now=NOW)
        assert r.skipped == "locked" and r.removed == []
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    assert len(evict(str(tmp_path), 1, 50, now=NOW).removed) == 3
