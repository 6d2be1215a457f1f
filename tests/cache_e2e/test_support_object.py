"""The support object that kernels link and the convolution template, as entries of the kernel
cache (docs/cache.md, "The support object and templates"): a cold compile of a model with
convolutions compiles the support object beside the passes and caches both; a later compile
that builds new convolution kernels compiles neither again; a compile that fails before its
kernels are built stops the support object's compiler and leaves nothing behind.

The C compiler is a logging wrapper named `cc` first on PATH, which runs the real one: the log
shows what was compiled (the file, and the op its banner names) and by which process."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from e2e_helpers import (all_entries, assert_entries_sound, entries, om_parts, support_entries,
                         template_entries)

# fails once the support object's compile has begun (as the wrapper's log shows)
FAILING_PASS = """
import os, time
from ge.passes import FusionBasePass, PassStage, register_fusion_pass


@register_fusion_pass(name="FailsWhileSupportCompiles", stage=PassStage.BEFORE_INFER_SHAPE)
class FailsWhileSupportCompiles(FusionBasePass):
    def run(self, graph, context):
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if os.path.exists(os.environ["CC_LOG"]) and \\
                    "support.c" in open(os.environ["CC_LOG"]).read():
                break
            time.sleep(0.01)
        raise ValueError("this pass gives up")
"""


def _wrapper(tmp_path: Path) -> Path:
    """A directory holding `cc`: appends `<pid> <file.c> <first line of it>` to $CC_LOG for
    each compile; sleeps $SUPPORT_SLEEP seconds before compiling support.c; then runs the real
    compiler."""
    real = shutil.which("cc")
    assert real is not None
    directory = tmp_path / "wrapper"
    directory.mkdir()
    script = directory / "cc"
    script.write_text(
        "#!/bin/sh\n"
        'for a in "$@"; do case "$a" in *.c) echo "$$ $a $(head -n 1 "$a")" >> "$CC_LOG";; '
        'esac; done\n'
        'case " $* " in *" support.c "*) [ -n "$SUPPORT_SLEEP" ] && sleep "$SUPPORT_SLEEP";; esac\n'
        f'exec {real} "$@"\n')
    script.chmod(0o755)
    return directory


def _env(pyatc, wrapper: Path, log: Path, **extra) -> dict:
    return dict(PATH=f"{wrapper}{os.pathsep}{pyatc.env['PATH']}", CC_LOG=str(log), **extra)


def _compiled(log: Path) -> list:
    """`support.c`, or `kernel.c <op type>` for each compile."""
    if not log.exists():
        return []
    return [line.split()[1] if line.split()[1] == "support.c"
            else f"kernel.c {line.split(', op ')[1].split('.')[0]}"
            for line in log.read_text().splitlines()]


def test_cold_compile_caches_both_and_new_kernels_compile_neither(pyatc, tmp_path):
    wrapper = _wrapper(tmp_path)
    root = tmp_path / "cache"
    first = pyatc.run(tmp_path / "a", "small", f"--op_compiler_cache_dir={root}",
                      env=_env(pyatc, wrapper, tmp_path / "a.log")).ok()
    compiled = _compiled(tmp_path / "a.log")
    assert compiled.count("support.c") == 1 and compiled.count("kernel.c Conv2D") == 1, compiled
    assert len(support_entries(root)) == len(template_entries(root)) == 1
    assert_entries_sound(root)
    kernels = first.report()["kernel_cache"]
    assert kernels["compiles"] == kernels["kernels"] == len(entries(root))   # not counted

    # other channel widths: new convolution kernels, copies of the cached template
    second = pyatc.run(tmp_path / "b", "small6", f"--op_compiler_cache_dir={root}",
                       env=_env(pyatc, wrapper, tmp_path / "b.log")).ok()
    compiled = _compiled(tmp_path / "b.log")
    assert "support.c" not in compiled and "kernel.c Conv2D" not in compiled, compiled
    stats = second.report()["kernel_cache"]
    assert stats["compiles"] > 0 and stats["misses"] > 0, stats
    assert len(entries(root)) > kernels["kernels"]
    fresh = pyatc.run(tmp_path / "c", "small6", "--op_compiler_cache_dir=cache").ok()
    assert om_parts(second.om) == om_parts(fresh.om)      # the cached copy: the same kernels


def test_a_failing_compile_stops_the_early_support_compile(pyatc, tmp_path):
    """A pass fails after the support object's compile began (the wrapper sleeps first, far
    longer than the run may take): the run fails at once, the compiler's process is gone,
    TMPDIR and the cache hold nothing of it."""
    wrapper = _wrapper(tmp_path)
    log = tmp_path / "cc.log"
    failing = tmp_path / "failing_pass.py"
    failing.write_text(FAILING_PASS)
    run = pyatc.run(tmp_path / "w", "small", "--op_compiler_cache_dir=cache",
                    env=_env(pyatc, wrapper, log, SUPPORT_SLEEP="3600",
                             ASCEND_GE_PY_PASS_PATH=str(failing)))
    assert run.rc == 255 and "E13028" in run.text and "Traceback" not in run.text, run.text
    started = [line.split()[0] for line in log.read_text().splitlines()
               if line.split()[1] == "support.c"]
    assert len(started) == 1, log.read_text()
    assert not os.path.exists(f"/proc/{started[0]}"), "the support compile still runs"
    assert os.listdir(pyatc.tmp / "tmpdir") == []
    assert all_entries(tmp_path / "w" / "cache") == []


def test_the_early_start_is_a_guess_that_never_fails_or_repeats_a_compile(pyatc, tmp_path):
    """Its look at the cache settings warns nothing (a bad size is warned once, by the
    compile), and without a C compiler a model whose ops all run on AiCpu still compiles."""
    res = pyatc.run(tmp_path / "w", "small", "--op_compiler_cache_dir=cache",
                    env={"ASCEND_MAX_OP_CACHE_SIZE": "lots"}).ok()
    assert res.text.count("WP0111") == 1, res.text
    bare = tmp_path / "bin"                 # a PATH with what pyatc's script runs, no cc
    bare.mkdir()
    for tool in ("readlink", "dirname", "realpath"):
        (bare / tool).symlink_to(shutil.which(tool))
    raw = tmp_path / "exclude.json"
    raw.write_text(json.dumps(
        {"compile options": {"graph": {"ge.exec.exclude_engines": "AiCore|AiVec"}}}))
    aicpu = pyatc.run(tmp_path / "a", "small", "--op_compiler_cache_dir=cache",
                      f"--raw_ge_options={raw}",
                      env={"PATH": str(bare),
                           "PYTHON": shutil.which("python3", path=pyatc.env["PATH"])})
    assert aicpu.rc == 0 and "EP0114" not in aicpu.text, aicpu.text
    assert not (tmp_path / "a" / "cache").exists()      # nothing compiled, nothing cached
