"""Issue #19 item 4: file-system faults under the kernel cache, the reports and the OM.

The cache is an optimisation: on a full disk, a read-only root, a root that is a device or lies
under /proc, the compile warns once (WP0113) and succeeds without it; an entry that is
unreadable, foreign-owned, writable by group or others, or a file where a directory should be
is WP0112, recompiled and replaced.  fusion_result.json / compile_report.json that cannot be
written are WP0003 and the run succeeds; a full disk for the OM is E13004 naming the OM.
"""
import os
import shutil
import stat

import pytest

from faultprobe import (NO_DAC, Atc, entries, needs_mounts, needs_no_dac, read_only, report,
                        soc_dir, tiny_model, tmpfs)

KERNELS = 3          # relu, add, sigmoid of the tiny model


@pytest.fixture(scope="module")
def warm(tmp_path_factory):
    """(atc runner, template cache root) after one cold compile of the tiny model."""
    base = tmp_path_factory.mktemp("cache_faults")
    atc = Atc(base, tiny_model(base / "tiny.onnx"))
    root = base / "template"
    run = atc(f"--op_compiler_cache_dir={root}").assert_clean_screen()
    assert run.rc == 0 and len(entries(root)) == KERNELS, run.text[-3000:]
    return atc, root


@pytest.fixture
def warm_copy(warm, tmp_path):
    root = tmp_path / "cache"
    shutil.copytree(warm[1], root, symlinks=True)
    return root


def _succeeds_with(run, code: str, *words: str) -> list:
    """The run succeeded, its screen is clean, and it warned `code` exactly once; returns the
    warning's line."""
    run.assert_clean_screen()
    assert run.rc == 0 and "ATC run success" in run.text, run.text[-3000:]
    assert (run.cwd / "net.om").is_file()
    lines = run.lines(code)
    assert len(lines) == 1, run.text[-3000:]
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def test_full_cache_disk_compiles_without_publishing(warm):
    needs_mounts()
    atc = warm[0]
    cache = str(atc.tmp / "full")
    run = atc(f"--op_compiler_cache_dir={cache}", setup=tmpfs(cache, "16k"))
    _succeeds_with(run, "WP0113", "No space left on device",
                   "new kernels are not added to it in this compile")
    assert report(run)["kernel_cache"]["compiles"] == KERNELS


def test_read_only_cache_root_compiles_without_cache(warm, tmp_path):
    needs_mounts()
    cache = str(tmp_path / "ro")
    run = warm[0](f"--op_compiler_cache_dir={cache}", setup=read_only(cache))
    _succeeds_with(run, "WP0113", "Read-only file system",
                   "every kernel is compiled without the cache")


def test_warm_read_only_cache_hits_and_compiles_the_new_kernel(warm, warm_copy):
    """A read-only cache still serves its entries; the kernel it lacks is compiled and used,
    its publish is the one warning, and the cache is left as it was."""
    needs_mounts()
    missing = entries(warm_copy)[0]
    shutil.rmtree(soc_dir(warm_copy) / missing)
    run = warm[0](f"--op_compiler_cache_dir={warm_copy}", setup=read_only(str(warm_copy)))
    _succeeds_with(run, "WP0113", "Read-only file system", str(soc_dir(warm_copy)))
    stats = report(run)["kernel_cache"]
    assert (stats["hits"], stats["compiles"], stats["published"]) == (KERNELS - 1, 1, 0)
    assert missing not in entries(warm_copy)
    assert not [p for p in os.listdir(soc_dir(warm_copy)) if p.startswith(".")]


@pytest.mark.parametrize("where", ["char device", "under /proc", "under a file"])
def test_cache_root_that_cannot_be_a_directory(warm, tmp_path, where):
    if where == "under a file":
        (tmp_path / "file").write_text("")
        root = tmp_path / "file" / "cache"
        reason = "Not a directory"
    elif where == "char device":
        if os.geteuid() != 0:
            pytest.skip("mknod needs root")
        root = tmp_path / "null"
        os.mknod(root, 0o600 | stat.S_IFCHR, os.makedev(1, 3))     # a /dev/null of our own
        reason = "it is not a directory"
    else:
        root = "/proc/self/pyatc_cache"
        reason = "No such file or directory"
    run = warm[0](f"--op_compiler_cache_dir={root}")
    _succeeds_with(run, "WP0113", str(root), reason, "compiled without the cache")
    if where == "char device":
        assert stat.S_ISCHR(os.lstat(root).st_mode)


def _assert_recompiled(run, root, reasons, left_alone=()):
    """Each of `reasons` is one WP0112 line; the entries named in `left_alone` are not
    recognisably entries (trust.py): they stay as they are, every other one is sound again."""
    run.assert_clean_screen()
    assert run.rc == 0 and (run.cwd / "net.om").is_file(), run.text[-3000:]
    lines = run.lines("WP0112")
    assert len(lines) == len(reasons), run.text[-3000:]
    for reason in reasons:
        assert any(reason in line for line in lines), (reason, lines)
    assert sum("left alone" in line for line in lines) == len(left_alone), lines
    stats = report(run)["kernel_cache"]
    assert stats["corrupt"] == len(reasons) and stats["compiles"] == len(reasons)
    from ge.compiler.cache.store import lookup
    for name in entries(root):              # replaced by sound entries of ours
        if name in left_alone:
            continue
        st = os.lstat(soc_dir(root) / name)
        assert stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid(), name
        assert st.st_mode & 0o022 == 0, name
        assert lookup(str(soc_dir(root)), name, refresh=False).status == "hit", name


def test_foreign_owned_and_group_writable_entries_are_recompiled(warm, warm_copy):
    if os.geteuid() != 0:
        pytest.skip("chown to another user needs root")
    foreign, writable, _ = (soc_dir(warm_copy) / n for n in entries(warm_copy))
    os.chown(foreign, 65534, 65534)
    os.chmod(writable / f"{writable.name}.so", 0o666)
    run = warm[0](f"--op_compiler_cache_dir={warm_copy}")
    _assert_recompiled(run, warm_copy, ["owned by uid 65534", "writable by group or others"])


def test_entry_replaced_by_a_file_is_compiled_and_the_file_left_alone(warm, warm_copy):
    """A file under an entry's name is not an entry of ours (issue #22): it is not used, not
    removed and not overwritten; the kernel is compiled without the cache."""
    victim = soc_dir(warm_copy) / entries(warm_copy)[0]
    shutil.rmtree(victim)
    victim.write_text("not an entry")
    run = warm[0](f"--op_compiler_cache_dir={warm_copy}")
    _assert_recompiled(run, warm_copy, ["not a directory"], left_alone=[victim.name])
    assert victim.read_text() == "not an entry"


def test_unreadable_entries_are_recompiled(warm, warm_copy):
    """Without root's override, an entry directory and a binary with mode 000 cannot be read."""
    needs_no_dac()
    shut, hidden, _ = (soc_dir(warm_copy) / n for n in entries(warm_copy))
    os.chmod(shut, 0)
    os.chmod(hidden / f"{hidden.name}.so", 0)
    run = warm[0](f"--op_compiler_cache_dir={warm_copy}", wrap=NO_DAC)
    # a directory that cannot be listed cannot be shown to hold only an entry: left alone
    _assert_recompiled(run, warm_copy, ["Permission denied", f"{hidden.name}.so"],
                       left_alone=[shut.name])
    assert stat.S_IMODE(os.lstat(shut).st_mode) == 0


def test_full_disk_for_the_reports_is_a_warning(warm):
    needs_mounts()
    atc = warm[0]
    work = str(atc.tmp / "fullwork")
    run = atc(f"--op_compiler_cache_dir={warm[1]}", setup=tmpfs(work, "16k", fill=True),
              env={"ASCEND_WORK_PATH": work})
    run.assert_clean_screen()
    assert run.rc == 0 and (run.cwd / "net.om").is_file(), run.text[-3000:]
    lines = run.lines("WP0003")
    assert len(lines) == 2 and "No space left on device" in lines[0], run.text[-3000:]
    assert "fusion_result.json" in lines[0] and "compile_report.json" in lines[1]


def test_full_disk_for_the_om_is_e13004_naming_it(warm):
    needs_mounts()
    atc = warm[0]
    out = atc.tmp / "fullom"
    run = atc(f"--op_compiler_cache_dir={warm[1]}", f"--output={out}/net",
              setup=tmpfs(str(out), "16k", fill=True))
    run.assert_clean_screen()
    assert run.rc == 255, run.text[-3000:]
    lines = run.lines("E13004")
    assert len(lines) == 1 and f"{out}/net.om" in lines[0], run.text[-3000:]
    assert "No space left on device" in lines[0]
    assert not out.exists() or not list(out.iterdir())   # the mount is gone; nothing leaked


def test_unreadable_op_cache_ini_is_a_warning(warm, warm_copy):
    needs_no_dac()
    (warm_copy / "op_cache.ini").chmod(0)
    run = warm[0](f"--op_compiler_cache_dir={warm_copy}", wrap=NO_DAC)
    _succeeds_with(run, "WP0113", "op_cache.ini", "Permission denied", "its sizes are ignored")
    assert report(run)["kernel_cache"]["hits"] == KERNELS


def test_full_disk_for_kernel_meta_is_e13004(warm):
    """Debug compiles keep their kernels in kernel_meta/ (under ASCEND_WORK_PATH here)."""
    needs_mounts()
    atc = warm[0]
    work = str(atc.tmp / "fullmeta")
    run = atc("--op_debug_level=1", setup=tmpfs(work, "16k", fill=True),
              env={"ASCEND_WORK_PATH": work})
    run.assert_clean_screen()
    assert run.rc == 255, run.text[-3000:]
    lines = run.lines("E13004")
    assert len(lines) == 1 and f"{work}/kernel_meta/te_" in lines[0], run.text[-3000:]
