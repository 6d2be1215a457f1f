"""The cache through compile_ops: enable / force / disable, debug bypasses, corrupt entries
(detected, warned, recompiled, replaced, never used), unsafe directories, default ini."""
import os

import pytest

import ge.errors
from ge.compiler.cache.store import lookup
from ge.compiler.opcompile import compile_ops
from ge.errors import GeError
from _relu_chains import relu_chains
from cache_helpers import all_entries, final_entries, soc_dir


@pytest.fixture(autouse=True)
def clear_warnings():
    ge.errors.take_warnings()
    yield
    ge.errors.take_warnings()


def opts(root, mode="enable", **extra):
    # debug compiles leave kernel_meta/ under ge.debugDir: keep it beside the cache
    return dict({"ge.op_compiler_cache_dir": str(root), "ge.op_compiler_cache_mode": mode,
                 "ge.socVersion": "Ascend310", "ge.debugDir": str(root) + "_debug"}, **extra)


@pytest.fixture(scope="module")
def warm(tmp_path_factory):
    """A cache root holding the kernels of relu_chains(2), and their bytes."""
    root = tmp_path_factory.mktemp("warm") / "cache"
    ck = compile_ops(relu_chains(2), opts(root))
    return root, dict(ck.kernels)


def test_enable_compiles_then_hits(warm, tmp_path):
    root, kernels = warm
    assert len(final_entries(root)) == 2
    ck = compile_ops(relu_chains(2), opts(root))
    assert (ck.stats["hits"], ck.stats["compiles"]) == (2, 0)
    assert dict(ck.kernels) == kernels


def test_layout_and_default_ini(warm):
    root, _ = warm
    assert (root / "op_cache.ini").read_text() == (
        "[op_compiler_cache]\nmax_op_cache_size=500\nremain_cache_size_ratio=50\n")
    for name in final_entries(root):
        assert sorted(os.listdir(soc_dir(root) / name)) == [name + ".json", name + ".so"]
    assert oct(os.stat(soc_dir(root)).st_mode & 0o777) == "0o750"


def test_force_recompiles_and_replaces_atomically(tmp_path):
    root = tmp_path / "c"
    first = compile_ops(relu_chains(1), opts(root))
    name = first.kernels[0][0]
    inode = os.stat(soc_dir(root) / name).st_ino
    ck = compile_ops(relu_chains(1), opts(root, "force"))
    assert (ck.stats["hits"], ck.stats["compiles"]) == (0, 1)
    assert os.stat(soc_dir(root) / name).st_ino != inode          # a new entry directory
    assert ck.kernels == first.kernels                               # same bytes
    assert lookup(str(soc_dir(root)), name).status == "hit"


def test_disable_never_touches_the_cache(tmp_path):
    root = tmp_path / "c"
    ck = compile_ops(relu_chains(1), opts(root, "disable"))
    assert ck.stats["compiles"] == 1 and not root.exists()


def test_debug_level_bypasses(tmp_path):
    root = tmp_path / "c"
    ck = compile_ops(relu_chains(1), opts(root, **{"ge.opDebugLevel": "2"}))
    assert ck.stats["compiles"] == 1 and ck.stats["bypassed"] == 1 and not root.exists()


def test_debug_list_bypasses_only_listed_ops(tmp_path):
    root = tmp_path / "c"
    cfg = tmp_path / "dbg.cfg"
    cfg.write_text("op_debug_config=ccec_g\nop_debug_list=r0\n")
    ck = compile_ops(relu_chains(2), opts(root, op_debug_config=str(cfg)))
    assert ck.stats["bypassed"] == 1 and ck.stats["compiles"] == 2
    assert len(final_entries(root)) == 1            # only r1's kernel was cached
    again = compile_ops(relu_chains(2), opts(root, op_debug_config=str(cfg)))
    assert (again.stats["hits"], again.stats["compiles"]) == (1, 1)


CORRUPTIONS = {
    "truncated binary": lambda d, n: (d / (n + ".so")).write_bytes(
        (d / (n + ".so")).read_bytes()[:100]),
    "flipped byte": lambda d, n: (d / (n + ".so")).write_bytes(
        b"\x00" + (d / (n + ".so")).read_bytes()[1:]),
    "missing binary": lambda d, n: (d / (n + ".so")).unlink(),
    "truncated json": lambda d, n: (d / (n + ".json")).write_text("{\"sha256\": "),
    "wrong sha": lambda d, n: (d / (n + ".json")).write_text(
        (d / (n + ".json")).read_text().replace('"sha256": "', '"sha256": "0')),
}


@pytest.mark.parametrize("how", sorted(CORRUPTIONS))
def test_corrupt_entry_is_detected_recompiled_and_replaced(tmp_path, how):
    root = tmp_path / "c"
    good = compile_ops(relu_chains(1), opts(root))
    name = good.kernels[0][0]
    CORRUPTIONS[how](soc_dir(root) / name, name)
    ck = compile_ops(relu_chains(1), opts(root))
    assert ck.kernels == good.kernels                      # the corrupt bytes were never used
    assert (ck.stats["corrupt"], ck.stats["compiles"]) == (1, 1)
    assert [w.code for w in ge.errors.take_warnings()] == ["WP0112"]
    assert lookup(str(soc_dir(root)), name).status == "hit"


@pytest.mark.parametrize("which", ["root", "kernel_cache", "soc"])
def test_group_or_world_writable_directory_is_refused(tmp_path, which):
    root = tmp_path / "c"
    compile_ops(relu_chains(1), opts(root))
    path = {"root": root, "kernel_cache": root / "kernel_cache", "soc": soc_dir(root)}[which]
    os.chmod(path, 0o777)
    with pytest.raises(GeError) as exc:
        compile_ops(relu_chains(1), opts(root))
    assert exc.value.code == "EP0111" and str(path) in exc.value.message


def test_cli_stats_verify_clean(warm, capsys):
    from ge.compiler.cache.__main__ import main
    root, _ = warm
    # two kernels and the support object they link (docs/cache.md)
    assert len(all_entries(root)) == 3
    assert main(["verify", "--dir", str(root)]) == 0
    assert "verified 3 entries, 0 corrupt" in capsys.readouterr().out
    assert main(["stats", "--dir", str(root)]) == 0
    assert '"entries": 3' in capsys.readouterr().out
    assert main(["clean", "--dir", str(root), "--all", "--dry-run"]) == 0
    assert "would remove 0 stale temporaries, 3 entries" in capsys.readouterr().out
