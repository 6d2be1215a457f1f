"""Issue #19 item 11: `python3 -m ge.compiler.cache verify` on a damaged cache.

Before: raw tracebacks for a directory where a file should be, permission denied and a huge
binary (MemoryError), and the `op_cache_file_del.lock` directory counted as a corrupt entry.
Now every bad entry is one WP0112 line naming it and why (the code a compile gives it, issue
#22), `--fix` removes exactly those that are recognisably entries and leaves the rest alone, a
SoC directory that cannot be listed is one EP0115 line, and the aging lock is never an entry.
Entries are published by the store itself (no compiler).
"""
import os
import subprocess
import sys

import pytest

from faultprobe import LIMIT_S, NO_DAC, REPO_ROOT, needs_no_dac, soc_dir

from ge.compiler.cache.evict import LOCK_NAME
from ge.compiler.cache.store import publish

NAMES = [f"te_fake_{n}" for n in range(6)]


@pytest.fixture
def cache(tmp_path):
    root = tmp_path / "cache"
    d = soc_dir(root)
    d.mkdir(parents=True, mode=0o750)
    for path in (root, root / "kernel_cache"):
        path.chmod(0o750)
    for n, name in enumerate(NAMES):
        publish(str(d), name, bytes([n]) * 64, {"op_type": "Fake"})
    return root


def verify(root, *args, wrap=()):
    proc = subprocess.run([*wrap, sys.executable, "-m", "ge.compiler.cache", "verify", "--dir",
                           str(root), *args], capture_output=True, text=True, timeout=LIMIT_S,
                          env=dict(os.environ, PYTHONPATH=str(REPO_ROOT)))
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    return proc


def coded(proc) -> dict:
    """entry name -> its WP0112 line."""
    out = {}
    for line in proc.stdout.splitlines():
        if line.startswith("WP0112: "):
            out[line.split(" is not used (")[0].rsplit("/", 1)[-1]] = line
    return out


def test_every_damage_is_one_coded_line_and_the_lock_is_not_an_entry(cache):
    d = soc_dir(cache)
    damages = {                 # name -> (damage, reason, recognisably an entry)
        NAMES[0]: ("so_is_dir", "it is a directory", False),
        NAMES[1]: ("huge_so", "more than the limit", True),
        NAMES[2]: ("json_fifo", "it is a FIFO", False),
        NAMES[3]: ("entry_file", "not a directory", False),
    }
    kept = sorted(n for n, (_, _, ours) in damages.items() if not ours)
    binary = d / NAMES[0] / f"{NAMES[0]}.so"
    binary.unlink()
    binary.mkdir()
    with open(d / NAMES[1] / f"{NAMES[1]}.so", "r+b") as f:
        f.truncate(1 << 40)                       # sparse: 1 TiB that was read whole before
    meta = d / NAMES[2] / f"{NAMES[2]}.json"
    meta.unlink()
    os.mkfifo(meta)
    for child in (d / NAMES[3]).iterdir():
        child.unlink()
    (d / NAMES[3]).rmdir()
    (d / NAMES[3]).write_text("{}")
    (d / LOCK_NAME).mkdir()                       # the aging lock as a directory
    proc = verify(cache)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = coded(proc)
    assert sorted(lines) == sorted(damages), proc.stdout
    for name, (_, reason, ours) in damages.items():
        assert reason in lines[name], lines[name]
        assert ("left alone" in lines[name]) == (not ours), lines[name]
    assert f"verified {len(NAMES)} entries, {len(damages)} corrupt" in proc.stdout
    fixed = verify(cache, "--fix")
    assert fixed.returncode == 1 and sorted(coded(fixed)) == sorted(damages), fixed.stdout
    assert f"{len(kept)} not removed" in fixed.stdout
    again = verify(cache)
    assert again.returncode == 1 and sorted(coded(again)) == kept, again.stdout
    assert f"verified {len(NAMES) - len(damages) + len(kept)} entries, {len(kept)} corrupt" \
        in again.stdout
    assert (d / NAMES[0] / f"{NAMES[0]}.so").is_dir() and (d / NAMES[3]).is_file()
    assert (d / LOCK_NAME).is_dir()               # not ours to judge, never removed


def test_permission_denied_is_a_coded_line(cache):
    needs_no_dac()
    d = soc_dir(cache)
    (d / NAMES[0]).chmod(0)
    (d / NAMES[1] / f"{NAMES[1]}.so").chmod(0)
    proc = verify(cache, wrap=NO_DAC)
    assert proc.returncode == 1
    lines = coded(proc)
    assert sorted(lines) == NAMES[:2], proc.stdout
    assert all("Permission denied" in line for line in lines.values())
    d.chmod(0)                                     # the SoC directory itself
    try:
        proc = verify(cache, wrap=NO_DAC)
    finally:
        d.chmod(0o750)
    assert proc.returncode == 1
    assert proc.stdout.startswith(f"EP0115: Kernel cache {d} failed the check: "
                                  "Permission denied."), proc.stdout


def test_group_writable_and_foreign_entries_are_reported(cache):
    if os.geteuid() != 0:
        pytest.skip("chown to another user needs root")
    d = soc_dir(cache)
    (d / NAMES[0]).chmod(0o770)
    os.chown(d / NAMES[1] / f"{NAMES[1]}.json", 65534, 65534)
    lines = coded(verify(cache))
    assert sorted(lines) == NAMES[:2]
    assert "writable by group or others" in lines[NAMES[0]]
    assert "owned by uid 65534" in lines[NAMES[1]]


def test_fix_that_cannot_remove_exits_1(cache):
    """--fix in a SoC directory it may not write: the entry stays, and the status says so."""
    needs_no_dac()
    d = soc_dir(cache)
    (d / NAMES[0] / f"{NAMES[0]}.so").write_bytes(b"damaged")
    d.chmod(0o550)
    try:
        proc = verify(cache, "--fix", wrap=NO_DAC)
    finally:
        d.chmod(0o750)
    assert proc.returncode == 1 and sorted(coded(proc)) == NAMES[:1], proc.stdout
    assert "1 corrupt, 1 not removed" in proc.stdout
    assert (d / NAMES[0]).is_dir()
