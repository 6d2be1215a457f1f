"""compile_ops reports progress to ge.compiler.progress (from the calling thread) and, when the
run is interrupted half-way, publishes nothing and leaves no C compiler work directory."""
import os
import tempfile
import threading

import pytest

from _relu_chains import relu_chains
from ge.compiler import progress
from ge.compiler.cache.store import list_entries
from ge.compiler.opcompile import compile_ops
from ge.fsutil import parse_temp_name

N = 6


@pytest.fixture
def private_tmp(tmp_path, monkeypatch):
    """TMPDIR of the C compiler work directories, empty."""
    work = tmp_path / "tmp"
    work.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(work))
    monkeypatch.setenv("TE_PARALLEL_COMPILER", "2")
    return work


def _options(root) -> dict:
    return {"ge.op_compiler_cache_dir": str(root), "ge.socVersion": "Ascend310"}


def test_progress_counts_every_kernel_from_the_calling_thread(tmp_path, private_tmp):
    seen = []

    def listener(what, done, total):
        seen.append((what, done, total, threading.current_thread() is threading.main_thread()))
    with progress.listening(listener):
        compile_ops(relu_chains(N), _options(tmp_path / "cache"))
    assert seen == [("kernels", done, N, True) for done in range(N + 1)]
    seen.clear()
    compile_ops(relu_chains(N), _options(tmp_path / "cache"))        # nobody listening
    assert seen == []


def test_interrupt_half_way_publishes_nothing_and_leaves_no_work_directory(tmp_path,
                                                                          private_tmp):
    def interrupt(what, done, total):
        if done == total // 2:
            raise KeyboardInterrupt
    with progress.listening(interrupt), pytest.raises(KeyboardInterrupt):
        compile_ops(relu_chains(N), _options(tmp_path / "cache"))
    soc_dir = tmp_path / "cache" / "kernel_cache" / "Ascend310"
    assert list_entries(str(soc_dir)) == []
    assert [n for n in os.listdir(soc_dir) if parse_temp_name(n)] == []
    assert os.listdir(private_tmp) == []
    # the next compile builds and publishes every kernel, and the support object they link
    result = compile_ops(relu_chains(N), _options(tmp_path / "cache"))
    entries = list_entries(str(soc_dir))
    assert result.stats["compiles"] == N and len(entries) == N + 1
    assert sum(name.startswith("te_ge_support_") for name in entries) == 1
