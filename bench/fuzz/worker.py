"""A batch of fuzz cases in a child process, and the parent side that survives its faults.

    python3 -m bench.fuzz.worker '<config JSON>'

config: {"category": "om" | "model" | "flags", "seed": N, "indexes": [...], "work": DIR,
         "om": base OM (om), "materials": directory of the flag-line files (flags)}

The worker writes "start <index>" and then the case's verdict (one JSON line) on the stdout it
was given; its own fd 1 is sent to stderr so that nothing a compiler or kernel prints can break
that protocol.  `run_cases` (the parent) restarts the worker after a case that killed it (a
crash) or outlived the time limit (a hang), and records that case as such.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import select
import shutil
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import Dict, List, Optional, Tuple

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.fuzz.cases import (OUTPUT_FLAGS, SOC, caffe_mutation, case_rng,  # noqa: E402
                              flag_line, model_mutation, om_mutation, om_regions,
                              small_caffe_net, small_model)
from bench.fuzz.verdict import INTERNAL_CODES, Verdict, atc_case  # noqa: E402

__all__ = ["run_cases", "run_in_process", "MODEL_ARGS", "CAFFE_ARGS"]

MODEL_ARGS = ["--framework=5", "--model=model.onnx", "--output=out", f"--soc_version={SOC}"]
CAFFE_ARGS = ["--framework=0", "--model=net.prototxt", "--weight=net.caffemodel", "--output=out",
              f"--soc_version={SOC}"]


def run_in_process(args: List[str], cwd: Path) -> Tuple[int, str]:
    """The ATC main flow (what pyatc runs) in this process, in `cwd`: (exit status, screen)."""
    from ge.atc import main_impl
    screen = io.StringIO()
    here = os.getcwd()
    os.environ["ASCEND_WORK_PATH"] = str(cwd)
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(screen), contextlib.redirect_stderr(screen):
            rc = main_impl(["pyatc", *args])
    finally:
        os.chdir(here)
    return rc & 0xFF, screen.getvalue()


def _same(outputs, expected) -> bool:
    return len(outputs) == len(expected) and all(
        a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
        for a, b in zip(outputs, expected))


def _run_om(path: Path, inputs=None) -> list:
    """The outputs of the OM at `path` on `inputs` (zeros when None)."""
    import numpy as np
    import ge.runtime
    model = ge.runtime.load(str(path))
    try:
        return model.run([np.zeros(s.shape, s.dtype) for s in model.inputs]
                         if inputs is None else inputs)
    finally:
        model.close()


def _runtime_outcome(verdict: Verdict, path: Path, inputs) -> Optional[list]:
    """Load and run the OM at `path` as `python3 -m ge.runtime` would: outputs, or None after
    recording the coded error (or the internal fault) in `verdict`."""
    from ge.errors import GeError, take_warnings
    try:
        return _run_om(path, inputs)
    except GeError as e:
        verdict.rc, verdict.code, verdict.note = 255, e.code, e.message[:200]
        if e.code in INTERNAL_CODES:
            verdict.fault("internal", e.message[:300])
    except Exception as e:        # python3 -m ge.runtime shows this as E19999
        verdict.rc, verdict.code = 255, "E19999"
        verdict.fault("internal", f"{type(e).__name__}: {e}"[:200] + " at " +
                      traceback.format_exc().strip().splitlines()[-3].strip())
    finally:
        take_warnings()
    return None


class OmCases:
    """Mutations of the base OM, loaded and run on fixed inputs against the unmutated outputs."""

    def __init__(self, config: dict):
        import numpy as np
        import ge.runtime
        self.base = Path(config["om"]).read_bytes()
        self.regions = om_regions(self.base)
        model = ge.runtime.load(config["om"])
        rng = np.random.default_rng(0)
        self.inputs = [rng.standard_normal(s.shape).astype(s.dtype) for s in model.inputs]
        model.close()
        self.expected = _run_om(Path(config["om"]), self.inputs)

    def make(self, rng, work: Path):
        mutation = om_mutation(self.base, self.regions, rng)
        path = work / "mutated.om"
        path.write_bytes(mutation.data)
        return mutation.kind, lambda verdict: self._judge(verdict, path, mutation.sealed)

    def _judge(self, verdict: Verdict, path: Path, sealed: bool) -> None:
        outputs = _runtime_outcome(verdict, path, self.inputs)
        if outputs is None:
            return
        verdict.rc = 0
        if _same(outputs, self.expected):
            return
        if sealed:
            verdict.note = "a resealed edit: accepted, outputs differ"
        else:
            verdict.fault("wrong", "the runtime ran the mutated OM and its outputs differ")


def _compile_and_run(verdict: Verdict, args: List[str], work: Path) -> None:
    """The ATC main flow on `args` in `work`, judged; an OM it writes must load and run."""
    atc_case(verdict, args, work, run_in_process, OUTPUT_FLAGS)
    if verdict.rc != 0:
        return
    probe = Verdict(verdict.category, verdict.index)
    if _runtime_outcome(probe, work / "out.om", None) is None:
        verdict.fault("other", f"ATC wrote an OM that the runtime refuses: {probe.code} "
                               f"{probe.note} {'; '.join(probe.faults)}")


class ModelCases:
    """Mutations of small_model() compiled by the ATC main flow; an OM it writes must run."""

    def __init__(self, config: dict):
        self.base = small_model().SerializeToString()

    def make(self, rng, work: Path):
        mutation = model_mutation(self.base, rng)
        (work / "model.onnx").write_bytes(mutation.data)
        return mutation.kind, lambda verdict: _compile_and_run(verdict, MODEL_ARGS, work)


class CaffeCases:
    """Mutations of small_caffe_net() (text and weights) compiled with --framework=0."""

    def __init__(self, config: dict):
        self.prototxt, self.weights = small_caffe_net()

    def make(self, rng, work: Path):
        kind, prototxt, weights = caffe_mutation(self.prototxt, self.weights, rng)
        (work / "net.prototxt").write_bytes(prototxt)
        (work / "net.caffemodel").write_bytes(weights)
        return kind, lambda verdict: _compile_and_run(verdict, CAFFE_ARGS, work)


class FlagCases:
    """ATC command lines run in a fresh copy of the materials directory."""

    def __init__(self, config: dict):
        self.materials = Path(config["materials"])

    def make(self, rng, work: Path):
        kind, args = flag_line(rng)
        shutil.copytree(self.materials, work, dirs_exist_ok=True)
        return kind, lambda verdict: atc_case(verdict, args, work, run_in_process, OUTPUT_FLAGS)


RUNNERS = {"om": OmCases, "model": ModelCases, "caffe": CaffeCases, "flags": FlagCases}


def _worker(config: dict) -> None:
    protocol = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    category, seed = config["category"], config["seed"]
    runner = RUNNERS[category](config)
    for index in config["indexes"]:
        work = Path(config["work"], f"{category}{index}")
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        kind, judge = runner.make(case_rng(seed, category, index), work)
        protocol.write(f"start {index} {json.dumps(kind)}\n")
        verdict = Verdict(category, index, kind)
        start = time.monotonic()
        judge(verdict)
        verdict.seconds = time.monotonic() - start
        shutil.rmtree(work, ignore_errors=True)
        protocol.write(json.dumps(verdict.to_json()) + "\n")


def _tail(path: Path) -> str:
    try:
        return path.read_text(errors="replace")[-1500:]
    except OSError:
        return ""


def run_cases(config: dict, limit_s: float, env: Optional[Dict[str, str]] = None) -> List[Verdict]:
    """Run config["indexes"] in worker processes; a case that kills its worker is a crash, one
    that outlives `limit_s` a hang (its worker is killed), and the rest go on in a new worker."""
    pending = list(config["indexes"])
    verdicts: Dict[int, Verdict] = {}
    errors = Path(config["work"], f"{config['category']}-worker.err")
    Path(config["work"]).mkdir(parents=True, exist_ok=True)
    env = dict(env or os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    while pending:
        with open(errors, "wb") as err:
            proc = subprocess.Popen([sys.executable, "-m", "bench.fuzz.worker",
                                     json.dumps(dict(config, indexes=pending))],
                                    stdout=subprocess.PIPE, stderr=err, stdin=subprocess.DEVNULL,
                                    cwd=config["work"], env=env, start_new_session=True)
        current, kind, started = None, "", time.monotonic()
        while True:
            ready, _, _ = select.select([proc.stdout], [], [], limit_s)
            if not ready:
                os.killpg(proc.pid, 9)
                proc.wait()
                if current is not None:
                    verdicts[current] = Verdict(config["category"], current, kind, rc=None,
                                                seconds=time.monotonic() - started)
                    verdicts[current].fault("hang", f"still running after {limit_s:.0f}s")
                break
            line = proc.stdout.readline().decode()
            if not line:
                rc = proc.wait()
                if current is None:
                    if pending and not verdicts.keys() >= set(pending):
                        raise RuntimeError(f"fuzz worker ended ({rc}) outside a case:\n"
                                           f"{_tail(errors)}")
                    break
                verdicts[current] = Verdict(config["category"], current, kind, rc=rc,
                                            seconds=time.monotonic() - started)
                verdicts[current].fault("crash" if rc < 0 else "other",
                                        f"the worker died ({rc}): {_tail(errors)[-300:]}")
                break
            if line.startswith("start "):
                _, index, kind = line.split(" ", 2)
                current, kind, started = int(index), json.loads(kind), time.monotonic()
                continue
            verdict = Verdict.from_json(json.loads(line))
            verdicts[verdict.index] = verdict
            current = None
        proc.stdout.close()
        pending = [i for i in pending if i not in verdicts]
    return [verdicts[i] for i in config["indexes"]]


if __name__ == "__main__":
    _worker(json.loads(sys.argv[1]))
