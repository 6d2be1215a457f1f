"""Seed 002 cache rules through real `pyatc` processes (the unit level is tests/cache):
modes, directory priority, kernel_cache/<soc>, op_cache.ini defaults, --op_debug_level bypass,
invalid directory characters, directories writable by group/others, statistics (log + report).

One cold compile of the small conv model fills a template cache (module fixture); each test
that needs a warm cache works on its own copy.
"""
import os
import shutil
import stat

import pytest

from e2e_helpers import assert_entries_sound, entries, om_parts, snapshot, soc_dir, temporaries

INI_DEFAULTS = "[op_compiler_cache]\nmax_op_cache_size=500\nremain_cache_size_ratio=50\n"


@pytest.fixture(scope="module")
def cold(module_pyatc):
    """(cache root, result) of a cold compile of `small` with --op_compiler_cache_dir."""
    root = module_pyatc.tmp / "template_cache"
    res = module_pyatc.run(module_pyatc.tmp / "cold", "small",
                           f"--op_compiler_cache_dir={root}").ok()
    return root, res


@pytest.fixture
def warm_root(cold, tmp_path):
    """A private copy of the cache the cold compile filled (mtimes kept)."""
    root = tmp_path / "cache"
    shutil.copytree(cold[0], root, symlinks=True)
    return root


def test_cold_compile_creates_layout_ini_and_entries(cold):
    root, res = cold
    assert soc_dir(root).is_dir()
    assert (root / "op_cache.ini").read_text() == INI_DEFAULTS
    for path in (root, root / "kernel_cache", soc_dir(root)):
        assert stat.S_IMODE(path.stat().st_mode) & 0o022 == 0, path
    stats = res.report()["kernel_cache"]
    assert stats["kernels"] >= 6 and stats["mode"] == "enable"
    assert (stats["hits"], stats["compiles"], stats["published"]) == \
        (0, stats["kernels"], stats["kernels"])
    assert len(entries(root)) == stats["kernels"] and temporaries(root) == []
    assert_entries_sound(root)


def test_warm_compile_hits_every_kernel_log_and_report(pyatc, cold, warm_root):
    kernels = cold[1].report()["kernel_cache"]["kernels"]
    warm = pyatc.run(pyatc.tmp / "w", "small", f"--op_compiler_cache_dir={warm_root}",
                     "--log=info", env={"ASCEND_SLOG_PRINT_TO_STDOUT": "1"}).ok()
    report = warm.report()
    stats = report["kernel_cache"]
    assert (stats["hits"], stats["misses"], stats["compiles"], stats["evictions"]) == \
        (kernels, 0, 0, 0)
    assert stats["kernels"] == kernels and stats["published"] == 0
    assert report["engines"]["AIcoreEngine"] == stats["nodes"]
    assert f"hits={kernels} misses=0 compiles=0 evictions=0" in warm.stdout, warm.stdout[-3000:]
    assert om_parts(warm.om) == om_parts(cold[1].om)   # cached or not, the same model


def test_disable_reads_and_creates_nothing(pyatc, cold, tmp_path):
    root = tmp_path / "never"
    res = pyatc.run(tmp_path / "w", "small", f"--op_compiler_cache_dir={root}",
                    "--op_compiler_cache_mode=disable").ok()
    stats = res.report()["kernel_cache"]
    assert stats["compiles"] == stats["kernels"] > 0 and stats["mode"] == "disable"
    assert stats["hits"] == stats["published"] == 0
    assert not root.exists()
    assert om_parts(res.om) == om_parts(cold[1].om)


def test_force_recompiles_and_replaces_every_entry(pyatc, cold, warm_root):
    before = {n: (soc_dir(warm_root) / n).stat().st_ino for n in entries(warm_root)}
    forced = pyatc.run(pyatc.tmp / "w", "small", f"--op_compiler_cache_dir={warm_root}",
                       "--op_compiler_cache_mode=force").ok()
    stats = forced.report()["kernel_cache"]
    assert (stats["hits"], stats["compiles"]) == (0, stats["kernels"])
    after = {n: (soc_dir(warm_root) / n).stat().st_ino for n in entries(warm_root)}
    assert sorted(after) == sorted(before)
    assert all(after[n] != before[n] for n in before), "force must replace every entry"
    assert temporaries(warm_root) == []
    assert_entries_sound(warm_root)
    assert om_parts(forced.om) == om_parts(cold[1].om)


def test_op_debug_level_bypasses_the_cache(pyatc, warm_root):
    before = snapshot(warm_root)
    res = pyatc.run(pyatc.tmp / "w", "small", f"--op_compiler_cache_dir={warm_root}",
                    "--op_debug_level=1").ok()
    stats = res.report()["kernel_cache"]
    assert (stats["hits"], stats["published"]) == (0, 0)
    assert stats["compiles"] == stats["kernels"] == stats["bypassed"] > 0
    assert stats["bypass"] == "ge.opDebugLevel=1"
    assert snapshot(warm_root) == before, "nothing may be refreshed or written"


@pytest.mark.parametrize("given, expected", [
    (("option", "env", "home"), "option"),
    (("env", "home"), "env"),
    (("home",), "home"),
])
def test_directory_priority(pyatc, tmp_path, given, expected):
    # the option root also shows that Chinese characters are allowed
    roots = {"option": tmp_path / "缓存_opt-1.0", "env": tmp_path / "env_root",
             "home": tmp_path / "home" / "atc_data"}
    flags, env = [], {}
    if "option" in given:
        flags.append(f"--op_compiler_cache_dir={roots['option']}")
    if "env" in given:
        env["ASCEND_CACHE_PATH"] = str(roots["env"])
    res = pyatc.run(tmp_path / "w", "tiny", *flags, env=env).ok()
    assert res.report()["kernel_cache"]["cache_dir"] == str(soc_dir(roots[expected]))
    for name, root in roots.items():
        assert (soc_dir(root).is_dir() and (root / "op_cache.ini").is_file()) == \
            (name == expected), name
    assert len(entries(roots[expected])) == 3


@pytest.mark.parametrize("where, value", [("option", "cache dir"), ("env", "c:ache$x")])
def test_invalid_directory_characters(pyatc, tmp_path, where, value):
    path = str(tmp_path / value)
    flags = [f"--op_compiler_cache_dir={path}"] if where == "option" else []
    env = {"ASCEND_CACHE_PATH": path} if where == "env" else {}
    res = pyatc.run(tmp_path / "w", "tiny", *flags, env=env)
    assert res.rc == 255, res.text
    assert "E10001" in res.text and "invalid character" in res.text
    assert ("--op_compiler_cache_dir" if where == "option" else "ASCEND_CACHE_PATH") in res.text
    assert "Traceback" not in res.text
    assert not res.om.exists() and not os.path.exists(path)


@pytest.mark.parametrize("level, mode", [("root", 0o770), ("soc", 0o757)])
def test_directory_writable_by_group_or_others_is_refused(pyatc, tmp_path, level, mode):
    root = tmp_path / "cache"
    target = root if level == "root" else soc_dir(root)
    target.mkdir(parents=True, mode=0o700)
    target.chmod(mode)
    res = pyatc.run(tmp_path / "w", "tiny", f"--op_compiler_cache_dir={root}")
    assert res.rc == 255, res.text
    assert "EP0111" in res.text and str(target) in res.text and "Traceback" not in res.text
    assert not res.om.exists()
    assert entries(root) == []


def test_aging_evictions_are_counted(pyatc, tmp_path):
    """op_cache.ini limit 1 MB, a 2 MB entry idle for two hours: the next compile ages it out
    and reports the eviction (its own fresh entries are kept)."""
    import time
    from ge.compiler.cache.store import publish
    root = tmp_path / "cache"
    soc_dir(root).mkdir(parents=True, mode=0o700)
    (root / "op_cache.ini").write_text(
        "[op_compiler_cache]\nmax_op_cache_size=1\nremain_cache_size_ratio=50\n")
    publish(str(soc_dir(root)), "te_old_0", b"\0" * (2 << 20), {"op_type": "Old"})
    old = time.time() - 7200
    os.utime(soc_dir(root) / "te_old_0" / "te_old_0.json", (old, old))
    res = pyatc.run(tmp_path / "w", "tiny", f"--op_compiler_cache_dir={root}").ok()
    stats = res.report()["kernel_cache"]
    assert stats["evictions"] == 1 and stats["compiles"] == 3
    assert entries(root) and "te_old_0" not in entries(root)
