"""Crash safety and concurrency with real processes (python3 -c workers, tests/cache/helpers.py).

- a SIGKILL injected at every publish step (GE_TEST_FAULT=<point>:kill, ge/fsutil/faults.py);
- >= 10 SIGKILLs at seeded random moments of a process compiling kernels into the cache;
- 4 processes on one cache directory, one of them in force mode.
After each: no corrupt entry is ever used, every final-name entry verifies, the next run cleans
the temporaries of the dead process and produces the same kernel bytes.
"""
import os
import random
import signal
import subprocess
import time

import pytest

from ge.fsutil.faults import CACHE_PUBLISH_POINTS as PUBLISH_STEPS, ENV
from ge.compiler.cache.store import lookup
from cache_helpers import final_entries, run_worker, soc_dir, temporaries, worker_argv

N = 3


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """Kernel bytes of the worker graph compiled without any cache."""
    root = tmp_path_factory.mktemp("ref") / "cache"
    _, out = run_worker(root, "disable", N)
    return out["kernels"]


def assert_all_entries_valid(root):
    for name in final_entries(root):
        found = lookup(str(soc_dir(root)), name, refresh=False)
        assert found.status == "hit", (name, found.reason)


@pytest.mark.parametrize("step", PUBLISH_STEPS)
def test_fault_at_each_publish_step(tmp_path, reference, step):
    root = tmp_path / "cache"
    mode = "enable"
    if step == "cache.old_moved_aside":            # only reached when force replaces an entry
        run_worker(root, "enable", N)
        mode = "force"
    env = dict(os.environ, **{ENV: f"{step}:kill"})
    proc, _ = run_worker(root, mode, N, env=env, check=False)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert_all_entries_valid(root)
    if step != "cache.after_commit":              # the dead process left its temporaries behind
        assert temporaries(root) != []
    if step in PUBLISH_STEPS[:5]:           # killed before the commit rename: nothing published
        assert final_entries(root) == []
    proc, out = run_worker(root, "enable", N)
    assert out["kernels"] == reference
    assert temporaries(root) == []
    assert_all_entries_valid(root)
    assert len(final_entries(root)) == N


def test_random_sigkills(tmp_path, reference):
    root = tmp_path / "cache"
    rnd = random.Random(20240601)
    # Kill moments are drawn inside the duration of one forced run, measured here, so that
    # kills land while kernels are being compiled and published however fast the machine is.
    start = time.monotonic()
    run_worker(tmp_path / "timing", "force", N)
    window = max(time.monotonic() - start, 0.2)
    kills = attempts = 0
    while kills < 10 and attempts < 40:
        attempts += 1
        proc = subprocess.Popen(worker_argv(root, rnd.choice(["enable", "force"]), N),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rnd.uniform(0.02, 0.9) * window)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        kills += proc.returncode == -signal.SIGKILL
        assert_all_entries_valid(root)
    assert kills >= 10
    _, out = run_worker(root, "enable", N)
    assert out["kernels"] == reference
    assert temporaries(root) == []
    assert_all_entries_valid(root)


def test_four_processes_one_forcing(tmp_path, reference):
    root = tmp_path / "cache"
    outs = [tmp_path / f"out{k}.json" for k in range(4)]
    modes = ["enable", "enable", "force", "enable"]
    procs = [subprocess.Popen(worker_argv(root, m, N, o), stderr=subprocess.PIPE, text=True)
             for m, o in zip(modes, outs)]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    import json
    results = [json.loads(o.read_text())["kernels"] for o in outs]
    assert all(r == reference for r in results)
    assert_all_entries_valid(root)
    assert len(final_entries(root)) == N and temporaries(root) == []
    from ge.compiler.cache.__main__ import main
    assert main(["verify", "--dir", str(root)]) == 0
