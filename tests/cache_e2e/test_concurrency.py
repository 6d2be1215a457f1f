"""Four real `pyatc` compiles on ONE cache directory at once: ResNet-50 (ci) twice (one with
--op_compiler_cache_mode=force) and two small conv models of different widths (not MobileNetV2:
its 54 kernel compiles, serial and parallel, cost a third of the test's CPU time for no new
path).  All succeed, each OM is byte-identical to a serial compile with the same argv (so
atc_cmdline too), and `python3 -m ge.compiler.cache verify` finds every entry sound afterwards.

The shared cache starts with the ResNet-50 entries (copied from the serial run), so the forcing
process replaces entries while the other ResNet-50 process is reading them, and the other two
publish new entries at the same time.
"""
import shutil

from e2e_helpers import all_entries, assert_entries_sound, entries, temporaries

JOBS = (  # (working directory, model, extra flags)
    ("r50_force", "resnet50", ("--op_compiler_cache_mode=force",)),
    ("r50", "resnet50", ()),
    ("small6", "small6", ()),
    ("small", "small", ()),
)
CACHE_FLAG = "--op_compiler_cache_dir=../cache"   # relative: equal argv in serial/ and par/


def test_four_processes_one_cache_one_forcing(pyatc, tmp_path):
    serial = {}
    for name, model, flags in JOBS:          # force first: the enable run after it hits
        res = pyatc.run(tmp_path / "serial" / name, model, CACHE_FLAG, *flags).ok()
        serial[name] = res.om.read_bytes()
        if name == "r50_force":
            shutil.copytree(tmp_path / "serial" / "cache", tmp_path / "par" / "cache")
    started = [pyatc.start(tmp_path / "par" / name, model, CACHE_FLAG, *flags)
               for name, model, flags in JOBS]
    results = {name: finish() for (name, _, _), (_, finish) in zip(JOBS, started)}
    for name, res in results.items():
        res.ok()
        if name == "r50_force":
            stats = res.report()["kernel_cache"]
            assert stats["hits"] == 0 and stats["compiles"] == stats["kernels"]
        assert "WP0112" not in res.text, res.text        # no process saw a corrupt entry
        assert res.om.read_bytes() == serial[name], f"{name}: OM differs from the serial one"
    root = tmp_path / "par" / "cache"
    assert temporaries(root) == []
    assert_entries_sound(root)
    assert sorted(entries(root)) == sorted(entries(tmp_path / "serial" / "cache"))
    verify = pyatc.cache_cli("verify", "--dir", str(root))
    assert verify.returncode == 0, verify.stdout
    assert f"verified {len(all_entries(root))} entries, 0 corrupt" in verify.stdout
