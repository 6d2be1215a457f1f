"""Crash safety of a real `pyatc` compile: a SIGKILL at every publish step of the kernel cache
and of the OM write (test-only fault points, GE_TEST_FAULT=<point>:kill, ge/fsutil/faults.py),
a corrupt entry, and >= 10 SIGKILLs at seeded random moments.

Always afterwards: nothing under a final name is partial (the OM is absent or complete, every
cache entry verifies), the temporaries of a dead process are removed by the next run, and the
next run's OM is byte-identical to a clean compile's (same argv, so atc_cmdline is equal too).
"""
import os
import random
import signal
import time

import pytest

from ge.fsutil import host_tag, parse_temp_name
from e2e_helpers import (assert_entries_sound, entries, om_parts, om_temporaries, soc_dir,
                         temporaries)

CACHE_FLAG = "--op_compiler_cache_dir=cache"     # relative: same argv in every directory
FORCE_FLAG = "--op_compiler_cache_mode=force"
KERNELS = 3                                      # of the tiny model


@pytest.fixture(scope="module")
def reference(module_pyatc):
    """(OM bytes, seconds) of a clean compile of the tiny model."""
    start = time.monotonic()
    res = module_pyatc.run(module_pyatc.tmp / "reference", "tiny", CACHE_FLAG).ok()
    seconds = time.monotonic() - start
    assert res.report()["kernel_cache"]["compiles"] == KERNELS
    return res.om.read_bytes(), seconds


def _pid_of_temporary(name: str) -> int:
    return parse_temp_name(name).pid


def _assert_nothing_partial(cwd, reference_om: bytes) -> None:
    """The OM is absent or complete (a force run's differs in atc_cmdline only); every cache
    entry under a final name verifies."""
    om = cwd / "net.om"
    if om.exists():
        assert om_parts(om) == om_parts(reference_om)
    assert_entries_sound(cwd / "cache")


# step, extra flags, entries under final names afterwards
FAULT_CHAIN = (
    ("cache.tmpdir_created", (), 0),
    ("cache.binary_partial", (), 0),
    ("cache.binary_written", (), 0),
    ("cache.json_partial", (), 0),
    ("cache.before_commit", (), 0),
    ("cache.after_commit", (), 1),         # the first kernel was committed
    ("cache.old_moved_aside", (FORCE_FLAG,), 0),   # force took it out, then died
    ("om.partial", (), KERNELS),           # kernels all published, OM half written
    ("om.written", (), KERNELS),
)


def test_sigkill_at_every_publish_step_then_recover(pyatc, reference, tmp_path):
    """One cache through the whole chain: each faulted run also shows that it removed the
    temporaries of the previous dead run (only its own remain)."""
    ref_om, _ = reference
    cwd = tmp_path / "chain"
    cache = cwd / "cache"
    for step, flags, n_entries in FAULT_CHAIN:
        proc, finish = pyatc.start(cwd, "tiny", CACHE_FLAG, *flags,
                                   env={"GE_TEST_FAULT": f"{step}:kill"})
        res = finish()
        assert res.rc == -signal.SIGKILL, (step, res.text[-2000:])
        assert not res.om.exists(), step
        assert_entries_sound(cache)
        assert len(entries(cache)) == n_entries, (step, entries(cache))
        leftovers = temporaries(cache) + om_temporaries(cwd)
        assert {_pid_of_temporary(n) for n in leftovers} <= {proc.pid}, (step, leftovers)
        if step != "cache.after_commit":
            assert leftovers, f"{step}: the dead run should have left its temporary"
        if step.startswith("om."):
            assert len(om_temporaries(cwd)) == 1 and temporaries(cache) == []
    # a default op_cache.ini being written when its process died (the window is tiny, so it
    # is planted): the dead PID's temporary is removed too
    (cache / f".op_cache.ini.tmp-{host_tag()}-{proc.pid}-0badc0de").write_text("[op_comp")
    res = pyatc.run(cwd, "tiny", CACHE_FLAG).ok()
    assert res.om.read_bytes() == ref_om
    assert res.report()["kernel_cache"]["hits"] == KERNELS
    assert temporaries(cache) == [] and om_temporaries(cwd) == []
    assert [n for n in os.listdir(cache) if n.startswith(".")] == []
    verify = pyatc.cache_cli("verify", "--dir", str(cache))
    assert verify.returncode == 0 and f"verified {KERNELS} entries, 0 corrupt" in verify.stdout


def test_corrupt_entry_is_never_used_and_is_recompiled_with_a_warning(pyatc, reference,
                                                                      tmp_path):
    ref_om, _ = reference
    cwd = tmp_path / "w"
    pyatc.run(cwd, "tiny", CACHE_FLAG).ok()
    victim = entries(cwd / "cache")[0]
    binary = soc_dir(cwd / "cache") / victim / f"{victim}.so"
    binary.write_bytes(binary.read_bytes()[:100])        # truncated under its final name
    verify = pyatc.cache_cli("verify", "--dir", str(cwd / "cache"))
    assert verify.returncode == 1 and victim in verify.stdout
    res = pyatc.run(cwd, "tiny", CACHE_FLAG).ok()
    assert "WP0112" in res.text and victim in res.text
    assert res.text.index("ATC run success") < res.text.index("WP0112")
    stats = res.report()["kernel_cache"]
    assert (stats["corrupt"], stats["compiles"], stats["hits"]) == (1, 1, KERNELS - 1)
    assert res.om.read_bytes() == ref_om
    assert_entries_sound(cwd / "cache")
    assert pyatc.cache_cli("verify", "--dir", str(cwd / "cache")).returncode == 0


def _own_temporaries(cache, pid: int) -> list:
    return [n for n in temporaries(cache) if _pid_of_temporary(n) == pid]


def _wait_for_publish(proc, cache, deadline: float) -> None:
    """Poll until the compile has a cache temporary of its own (a publish in progress) or
    ends."""
    while proc.poll() is None and time.monotonic() < deadline:
        if _own_temporaries(cache, proc.pid):
            return
        time.sleep(0.002)


def test_random_sigkills_of_pyatc(pyatc, reference, tmp_path):
    """Half of the runs in force mode (every kernel republished); most of those are killed a
    random few ms after their first publish began, the others at a random time after start."""
    ref_om, seconds = reference
    rnd = random.Random(20261130)
    cwd = tmp_path / "kills"
    window = max(seconds, 0.5) * 1.1
    kills = attempts = mid_publish = 0
    # go on until 10 kills landed and at least one of them inside a publish (the window is a
    # few ms wide, so on a busy machine it may take more attempts)
    while kills < 10 or mid_publish < 1:
        attempts += 1
        assert attempts <= 40, (f"{kills} kills, {mid_publish} inside a publish, in "
                                f"{attempts - 1} attempts")
        force = rnd.random() < 0.5
        watch = force and rnd.random() < 0.6        # force republishes: aim at a publish
        flags = (CACHE_FLAG,) + ((FORCE_FLAG,) if force else ())
        proc, finish = pyatc.start(cwd, "tiny", *flags, quiet=True)
        if watch:
            _wait_for_publish(proc, cwd / "cache", time.monotonic() + 5 * window)
            time.sleep(rnd.uniform(0.0, 0.004))
        else:
            time.sleep(rnd.uniform(0.05, window))
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)      # the compile and its cc children
        res = finish()
        if res.rc == -signal.SIGKILL:
            kills += 1
            mid_publish += bool(_own_temporaries(cwd / "cache", proc.pid))
        else:
            assert res.rc == 0
            if not watch:
                window *= 0.8                       # it finished first: aim earlier
        _assert_nothing_partial(cwd, ref_om)
    res = pyatc.run(cwd, "tiny", CACHE_FLAG).ok()
    assert res.om.read_bytes() == ref_om
    assert temporaries(cwd / "cache") == [] and om_temporaries(cwd) == []
    assert [n for n in os.listdir(cwd / "cache") if n.startswith(".")] == []
    assert_entries_sound(cwd / "cache")
    assert len(entries(cwd / "cache")) == KERNELS
    verify = pyatc.cache_cli("verify", "--dir", str(cwd / "cache"))
    assert verify.returncode == 0, verify.stdout
    # the kernel build directories of the killed compiles were removed by the last run
    assert not [n for n in os.listdir(pyatc.tmp / "tmpdir") if n.startswith(".ge_kernel.")]
