"""The fuzz test of issue #19: a fixed seed and bounded counts of hostile inputs, each of which
must end with exit 0 or a coded error (255) within a time limit, with no traceback on the
screen, no file clobbered, nothing written under the final output name on failure, and (an OM
the runtime accepts) outputs identical to the unmutated model's.

The generators and the judge are bench/fuzz (bench/fuzz_probe.py runs them at any size and
prints the table of docs/reliability.md); a failure names the case and the command that
reproduces it.  OM and model mutations run in a worker process (bench/fuzz/worker.py: a crash
or hang is recorded, not suffered); flag lines run through `ge.atc.main_impl` in this process
(atc_main) and a sample of them through the installed `atc` and `pyatc`.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bench.fuzz.agree import line_as_process
from bench.fuzz.cases import OUTPUT_FLAGS, case_rng, flag_line, small_model, write_materials
from bench.fuzz.verdict import Verdict, atc_case, time_limit
from bench.fuzz.worker import MODEL_ARGS, run_cases

SEED = 19
COUNTS = {"om": 300, "model": 100, "caffe": 100, "flags": 200}
PROCESS_LINES = range(0, COUNTS["flags"], 10)        # 20 lines, alternately atc and pyatc
LIMIT_S = 120                                        # per case: only a hang exceeds it
BASE_OM = "mobilenetv2_ci"


def _faults(verdicts) -> str:
    bad = [v.describe(SEED) for v in verdicts if v.faults]
    return f"{len(bad)} of {len(verdicts)} cases are faulty:\n" + "\n".join(bad)


@pytest.fixture(scope="module")
def materials(atc_main, tmp_path_factory) -> Path:
    """The files the flag lines name (bench/fuzz/cases.py MATERIALS), with the small model and
    its OM compiled by the ATC main flow."""
    build = tmp_path_factory.mktemp("fuzz_model")
    model = small_model().SerializeToString()
    (build / "model.onnx").write_bytes(model)
    run = atc_main(*MODEL_ARGS, cwd=build)
    assert run.rc == 0, run.text
    out = tmp_path_factory.mktemp("fuzz_materials")
    write_materials(out, model, (build / "out.om").read_bytes())
    return out


def test_om_mutations(compiled_model, tmp_path):
    """Bit flips per region, truncations, header, checksum and partition-table edits of a
    compiled OM (some resealed with a fresh checksum), each loaded and run by the runtime."""
    base = tmp_path / "base.om"
    shutil.copyfile(compiled_model(BASE_OM).om, base)
    verdicts = run_cases({"category": "om", "seed": SEED, "indexes": list(range(COUNTS["om"])),
                          "work": str(tmp_path / "work"), "om": str(base)}, LIMIT_S)
    assert not any(v.faults for v in verdicts), _faults(verdicts)
    outcomes = {v.rc for v in verdicts}
    assert outcomes == {0, 255}, outcomes       # both refused and accepted mutations were met
    # what the worker saw is what `python3 -m ge.runtime` shows: the first accepted and the
    # first refused mutation, rebuilt and run by the command line
    from bench.fuzz.cases import om_mutation, om_regions
    data = base.read_bytes()
    regions = om_regions(data)
    for rc in (0, 255):
        v = next(v for v in verdicts if v.rc == rc)
        path = tmp_path / f"case{v.index}.om"
        path.write_bytes(om_mutation(data, regions, case_rng(SEED, "om", v.index)).data)
        run = subprocess.run([sys.executable, "-m", "ge.runtime", "--model", str(path)],
                             capture_output=True, text=True, timeout=LIMIT_S)
        assert run.returncode == rc, (v.describe(SEED), run.stderr)
        assert rc == 0 or f"[ERROR] {v.code}:" in run.stderr, (v.describe(SEED), run.stderr)
        assert "Traceback" not in run.stdout + run.stderr


def test_model_mutations(tmp_path):
    """Truncations, bit flips and field edits of a small ONNX model, compiled by the ATC main
    flow; an OM it writes must then load and run."""
    verdicts = run_cases({"category": "model", "seed": SEED,
                          "indexes": list(range(COUNTS["model"])),
                          "work": str(tmp_path / "work")}, LIMIT_S)
    assert not any(v.faults for v in verdicts), _faults(verdicts)
    assert {v.rc for v in verdicts} == {0, 255}


def test_caffe_mutations(tmp_path):
    """Token, line and truncation edits of a small Caffe prototxt, bit flips and truncations of
    its caffemodel, compiled with --framework=0; an OM it writes must then load and run."""
    verdicts = run_cases({"category": "caffe", "seed": SEED,
                          "indexes": list(range(COUNTS["caffe"])),
                          "work": str(tmp_path / "work")}, LIMIT_S)
    assert not any(v.faults for v in verdicts), _faults(verdicts)
    assert {v.rc for v in verdicts} == {0, 255}


def _in_process(atc_main, index: int, cwd: Path) -> Verdict:
    kind, args = flag_line(case_rng(SEED, "flags", index))
    verdict = Verdict("flags", index, kind)

    def run(args, cwd):
        result = atc_main(*args, cwd=cwd)
        return result.rc, result.text
    try:
        with time_limit(LIMIT_S) as limit:
            atc_case(verdict, args, cwd, run, OUTPUT_FLAGS)
    except KeyboardInterrupt:                 # the limit struck outside main_impl
        if not limit["expired"]:
            raise
    if limit["expired"]:
        verdict.fault("hang", f"still running after {LIMIT_S}s")
    return verdict


def test_flag_lines_in_process(atc_main, materials, tmp_path):
    verdicts = []
    for index in range(COUNTS["flags"]):
        cwd = tmp_path / f"line{index}"
        shutil.copytree(materials, cwd)
        verdicts.append(_in_process(atc_main, index, cwd))
        shutil.rmtree(cwd)
    assert not any(v.faults for v in verdicts), _faults(verdicts)
    assert {v.rc for v in verdicts} == {0, 255}


def test_flag_lines_as_processes_agree(atc_main, materials, entry_argv, entry_env,
                                       shared_kernel_cache, tmp_path):
    """A sample of the flag lines through the installed `atc` and `pyatc`: judged the same way,
    and with the exit status and first error code of the in-process run."""
    verdicts = []
    for n, index in enumerate(PROCESS_LINES):
        entry = ("atc", "pyatc")[n % 2]
        ref = tmp_path / f"ref{index}"
        shutil.copytree(materials, ref)
        expected = _in_process(atc_main, index, ref)
        cwd = tmp_path / f"{entry}{index}"
        shutil.copytree(materials, cwd)
        env = dict(entry_env, ASCEND_CACHE_PATH=str(shared_kernel_cache))
        verdicts.append(line_as_process(SEED, index, entry, entry_argv(entry), env, cwd,
                                        expected, LIMIT_S))
    assert not any(v.faults for v in verdicts), _faults(verdicts)
