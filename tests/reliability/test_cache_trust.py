"""Issue #22 part 2: cache maintenance follows the cache's own rules (ge/compiler/cache/trust.py).

Before: `clean --all` on a cache whose SoC directory was a symbolic link deleted the `te_*`
directories it pointed to, while a compile refused that directory.  Now every side that reads or
removes cache files (a compile's open, aging and stale sweep; stats, verify, verify --fix, clean,
clean --all) applies one rule: symbolic links at the cache's levels are EP0111, only what is
recognisably an entry or a temporary of ours is removed, the rest is reported and left alone.
Each test snapshots every file outside the cache and checks nothing there changed.
"""
from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

import pytest

from ge.compiler.cache import KernelCache, resolve
from ge.compiler.cache.__main__ import main as cache_cli
from ge.compiler.cache.store import lookup, publish
from ge.errors import GeError, take_warnings
from ge.fsutil import host_tag

SOC = "Ascend310"
COMMANDS = (["stats"], ["verify"], ["verify", "--fix"], ["clean"], ["clean", "--all"])
OLD = time.time() - 7200            # older than the 30 minutes aging never touches
BIG = 300 * 1024                    # 4 entries of this size pass a 1 MB limit


def _entry(cache_dir: Path, name: str, size: int = 64) -> Path:
    cache_dir.mkdir(parents=True, exist_ok=True, mode=0o750)
    publish(str(cache_dir), name, bytes([len(name) % 251]) * size, {"op_type": "Fake"})
    os.utime(cache_dir / name / f"{name}.json", (OLD, OLD))
    return cache_dir / name


def _private(*paths: Path) -> None:
    for path in paths:
        path.mkdir(parents=True, exist_ok=True)
        path.chmod(0o750)


def _cache(root: Path, names=("te_a", "te_b"), size: int = 64) -> Path:
    """A sound cache with `names` as entries (aged past the idle time); returns its SoC dir."""
    soc = root / "kernel_cache" / SOC
    _private(root, root / "kernel_cache", soc)
    for name in names:
        _entry(soc, name, size)
    (root / "op_cache.ini").write_text("[op_compiler_cache]\nmax_op_cache_size=1\n"
                                       "remain_cache_size_ratio=1\n")
    return soc


def snapshot(top: Path) -> dict:
    """Every path under `top` (links not followed): kind, mode and content hash."""
    found = {}
    for dirpath, dirs, files in os.walk(top):
        for name in dirs + files:
            path = Path(dirpath) / name
            st = os.lstat(path)
            kind = "link" if path.is_symlink() else "dir" if path.is_dir() else "file"
            data = os.readlink(path) if kind == "link" else (
                hashlib.sha256(path.read_bytes()).hexdigest() if kind == "file" else "")
            found[str(path.relative_to(top))] = (kind, st.st_mode, data)
    return found


def _cli(capsys, root: Path, *args: str):
    status = cache_cli([*args, "--dir", str(root)])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    return status, captured.out, captured.err


def _compile_open(root: Path):
    """What a compile does with the cache before its first kernel: make sure the levels are
    sound, sweep stale temporaries, age (the ini asks for 1 MB, down to 1 %)."""
    return KernelCache.open(resolve({"ge.op_compiler_cache_dir": str(root),
                                     "ge.socVersion": SOC}, {}))


@pytest.fixture
def layout(tmp_path):
    """(root of our cache, a directory outside it holding a cache-shaped tree of its own)."""
    outside = tmp_path / "outside"
    _cache(outside, names=("te_x", "te_y"))
    return tmp_path / "cache", outside


@pytest.mark.parametrize("level", ["root", "kernel_cache", "soc"])
def test_a_symlinked_level_is_ep0111_everywhere(layout, capsys, level):
    root, outside = layout
    if level == "root":
        root.symlink_to(outside)
        refused = root
    else:
        soc = _cache(root)
        refused = {"kernel_cache": root / "kernel_cache", "soc": soc}[level]
        target = {"kernel_cache": outside / "kernel_cache",
                  "soc": outside / "kernel_cache" / SOC}[level]
        for child in sorted(refused.rglob("*"), reverse=True):
            child.rmdir() if child.is_dir() else child.unlink()
        refused.rmdir()
        refused.symlink_to(target)
    before = snapshot(outside)
    for command in COMMANDS:
        status, out, err = _cli(capsys, root, *command)
        assert status == 255, (command, out, err)
        assert f"EP0111: The kernel cache directory {refused} is refused: it is a symbolic " \
               f"link" in err, (command, err)
    with pytest.raises(GeError) as exc:
        _compile_open(root)
    assert exc.value.code == "EP0111" and str(refused) in exc.value.message
    assert snapshot(outside) == before


def test_a_symlinked_entry_and_temporary_are_left_alone(layout, capsys):
    root, outside = layout
    soc = _cache(root, names=("te_a", "te_b", "te_c", "te_d"), size=BIG)
    (soc / "te_link").symlink_to(outside / "kernel_cache" / SOC / "te_x")
    stale = soc / f".te_y.trash-{host_tag()}-99999999-0bad"
    stale.symlink_to(outside / "kernel_cache" / SOC / "te_y")
    before = snapshot(outside)
    status, out, _ = _cli(capsys, root, "clean", "--all", "--dry-run")
    assert status == 0 and f"WP0114: {soc / 'te_link'} in the kernel cache is not an entry " \
        "or a temporary of ours (it is a symbolic link)" in out
    assert f"WP0114: {stale} in the kernel cache" in out
    assert {os.path.basename(p) for p in _said(out, "would remove")} == {"te_a", "te_b", "te_c",
                                                                        "te_d"}
    status, out, _ = _cli(capsys, root, "verify", "--fix")
    assert f"WP0112: Kernel cache entry {soc / 'te_link'} is not used (a symbolic link)" in out
    assert status == 1 and "left alone" in out
    cache = _compile_open(root)                 # aging wants everything gone
    assert cache is not None and sorted(cache.stats.evicted_names) == ["te_a", "te_b", "te_c",
                                                                      "te_d"]
    for command in COMMANDS:
        _cli(capsys, root, *command)
    assert (soc / "te_link").is_symlink() and stale.is_symlink()
    assert snapshot(outside) == before


def test_an_entry_with_a_foreign_file_is_left_alone(tmp_path, capsys):
    root = tmp_path / "cache"
    soc = _cache(root, names=("te_a", "te_b", "te_c", "te_d"), size=BIG)
    (soc / "te_a" / "notes.txt").write_text("mine")
    status, out, _ = _cli(capsys, root, "verify")
    assert status == 0 and f"WP0114: {soc / 'te_a'} in the kernel cache is not an entry or a " \
        "temporary of ours (it also holds notes.txt); it is left alone." in out
    assert lookup(str(soc), "te_a").status == "hit"          # the entry itself is sound
    _compile_open(root)
    status, out, _ = _cli(capsys, root, "clean", "--all")
    assert status == 0 and "removed 0 stale temporaries, 0 entries" in out
    assert sorted(p.name for p in soc.iterdir() if not p.name.startswith("op_")) == ["te_a"]
    assert sorted(p.name for p in (soc / "te_a").iterdir()) == ["notes.txt", "te_a.json",
                                                                "te_a.so"]
    take_warnings()


def test_a_file_named_like_an_entry_is_left_alone(tmp_path, capsys):
    root = tmp_path / "cache"
    soc = _cache(root, names=("te_a", "te_b", "te_c", "te_d"), size=BIG)
    (soc / "te_file").write_bytes(b"x" * BIG)
    os.utime(soc / "te_file", (OLD, OLD))
    status, out, _ = _cli(capsys, root, "verify", "--fix")
    assert status == 1 and "te_file is not used (not a directory)" in out and \
        "1 not removed" in out
    assert _compile_open(root).stats.evictions == 4
    _cli(capsys, root, "clean", "--all")
    assert (soc / "te_file").read_bytes() == b"x" * BIG
    take_warnings()


def _said(out: str, verb: str) -> set:
    return {line[len(verb) + 1:] for line in out.splitlines() if line.startswith(verb + " ")}


@pytest.mark.parametrize("every", [True, False], ids=["--all", "aging"])
def test_dry_run_lists_exactly_what_clean_removes(tmp_path, capsys, every):
    root = tmp_path / "cache"
    soc = _cache(root, names=("te_a", "te_b", "te_c", "te_d"), size=BIG)
    os.utime(soc / "te_d" / "te_d.json")                      # in use: aging keeps it
    host = host_tag()
    dead = soc / f".te_e.tmp-{host}-99999999-0001"            # a publish cut short
    dead.mkdir(mode=0o750)
    (dead / "te_e.so").write_bytes(b"half")
    odd = soc / f".te_f.tmp-{host}-99999999-0002"             # not an entry's temporary
    odd.mkdir(mode=0o750)
    (odd / "other").write_text("?")
    (soc / "te_g").mkdir(mode=0o750)
    (soc / "te_g" / "other").write_text("?")
    flag = ["--all"] if every else []
    status, dry, _ = _cli(capsys, root, "clean", *flag, "--dry-run")
    assert status == 0
    listed = _said(dry, "would remove")
    before = set(os.listdir(soc))
    status, real, _ = _cli(capsys, root, "clean", *flag)
    assert status == 0
    removed = _said(real, "removed")
    assert listed == removed and removed
    assert {os.path.basename(p) for p in removed} == before - set(os.listdir(soc))
    expected = {dead.name, "te_a", "te_b", "te_c"} | ({"te_d"} if every else set())
    assert {os.path.basename(p) for p in removed} == expected
    assert odd.is_dir() and (soc / "te_g" / "other").is_file()
