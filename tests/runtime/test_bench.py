"""The ais_bench mode of `python3 -m ge.runtime` and `InferSession`: input directories,
warm-up, the latency summary and its JSON, outputs per inference, the profiler tables, the
progress bar only on a terminal, and the documented InferSession example."""
from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
SETS = 100


@pytest.fixture(scope="module")
def input_dirs(tmp_path_factory, tiny_om):
    import ge.runtime
    root = tmp_path_factory.mktemp("bench_inputs")
    model = ge.runtime.load(tiny_om)
    dirs = []
    for spec in model.inputs:
        directory = root / spec.name
        directory.mkdir()
        for i in range(SETS):
            value = np.random.default_rng(i).standard_normal(spec.shape).astype(spec.dtype)
            np.save(directory / f"{i:03d}.npy", value)
        dirs.append(directory)
    return dirs


def _run(argv, capsys):
    from ge.runtime.__main__ import main
    from ge.runtime._cli import guarded
    rc = guarded(main, argv)
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_directories_warmup_summary_profiler(tiny_om, input_dirs, tmp_path, capsys):
    import ge.runtime
    out_dir, summary, prof = tmp_path / "out", tmp_path / "summary.json", tmp_path / "prof.json"
    rc, out, err = _run(["--model", tiny_om, "--input", ",".join(map(str, input_dirs)),
                         "--warmup_count", "10", "--output", str(out_dir), "--summary",
                         str(summary), "--profiler", "--profiler_top", "5", "--profiler_json",
                         str(prof)], capsys)
    assert rc == 0, err
    assert err == ""                             # no progress bar: stdout is not a terminal
    lines = out.splitlines()
    assert lines[0] == f"inferences: {SETS} ({SETS} input set(s) x loop 1), warm-up runs: 10"
    assert re.fullmatch(r"latency ms: mean [\d.]+  median [\d.]+  p99 [\d.]+  min [\d.]+  "
                        r"max [\d.]+", lines[1])
    assert re.fullmatch(r"throughput: [\d.]+ inferences/s", lines[2])
    assert lines[-1].startswith("Inference average time: ")
    doc = json.loads(summary.read_text())
    lat = doc["latency_ms"]
    assert doc["count"] == SETS == len(doc["latencies_ms"]) and doc["warmup"] == 10
    assert lat["min"] <= lat["median"] <= lat["p99"] <= lat["max"]
    assert lat["mean"] == pytest.approx(np.mean(doc["latencies_ms"]))
    assert doc["throughput_per_s"] == pytest.approx(1000 * SETS / sum(doc["latencies_ms"]))
    # one output file per inference, named after its input file, equal to a direct run
    assert sorted(p.name for p in out_dir.iterdir()) == [f"{i:03d}_output_0.npy"
                                                         for i in range(SETS)]
    model = ge.runtime.load(tiny_om)
    feeds = [np.load(d / "042.npy") for d in input_dirs]
    np.testing.assert_array_equal(np.load(out_dir / "042_output_0.npy"), model.run(feeds)[0])
    # the profiler: every op type of the model, slowest first, shares adding up to 1
    profile = json.loads(prof.read_text())
    assert profile == doc["profile"] and profile["runs"] == SETS
    types = [row["type"] for row in profile["op_types"]]
    assert set(types) == {s.type for s in model._plan.root.steps}
    assert [r["ms"] for r in profile["op_types"]] == sorted((r["ms"] for r in
                                                             profile["op_types"]), reverse=True)
    assert sum(r["share"] for r in profile["op_types"]) == pytest.approx(1.0)
    table = lines[lines.index(next(x for x in lines if x.startswith("op type"))) + 1:]
    assert [row.split()[0] for row in table[:len(types)]] == types


def test_outfmt_txt_per_inference_and_loop(tiny_om, input_dirs, tmp_path, capsys):
    few = []
    for d in input_dirs:                            # three input sets
        copy = tmp_path / d.name
        copy.mkdir()
        for name in ("000.npy", "001.npy", "002.npy"):
            shutil.copy(d / name, copy / name)
        few.append(copy)
    rc, out, err = _run(["--model", tiny_om, "--input", ",".join(map(str, few)), "--loop", "2",
                         "--warmup_count", "0", "--output", str(tmp_path / "o"), "--outfmt",
                         "TXT"], capsys)
    assert rc == 0, err
    assert out.splitlines()[0] == "inferences: 6 (3 input set(s) x loop 2), warm-up runs: 0"
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == [
        "000_output_0.txt", "001_output_0.txt", "002_output_0.txt"]


def test_directories_must_match(tiny_om, input_dirs, tmp_path, capsys):
    short = tmp_path / "short"
    short.mkdir()
    shutil.copy(input_dirs[1] / "000.npy", short / "000.npy")
    rc, out, err = _run(["--model", tiny_om, "--input", f"{input_dirs[0]},{short}"], capsys)
    assert rc == 255 and out == ""
    assert err == (f"[ERROR] EP0403: Invalid model input: input directories must hold the same, "
                   f"non-zero number of files: {input_dirs[0]} has {SETS}, {short} has 1.\n")


def test_progress_bar_on_a_terminal(tiny_om, input_dirs):
    import pexpect
    env = dict(os.environ, PYTHONPATH=str(REPO))
    child = pexpect.spawn(sys.executable, ["-m", "ge.runtime", "--model", tiny_om, "--input",
                                           ",".join(map(str, input_dirs))], env=env,
                          encoding="utf-8", timeout=120)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    assert f"] {SETS}/{SETS} inferences" in child.before
    assert "Inference average time: " in child.before


def test_infer_session_doc_example_runs(tiny_om, tmp_path, monkeypatch, capsys):
    text = (REPO / "docs" / "runtime.md").read_text()
    block = text.split("<!-- example: infer_session", 1)[1].split("```python\n", 1)[1]
    code = block.split("```", 1)[0]
    shutil.copy(tiny_om, tmp_path / "model.om")
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "docs/runtime.md", "exec"), {})
    out = capsys.readouterr().out.splitlines()
    assert out[:2] == ["x [1, 3, 8, 8] float32", "y [1, 4, 8, 8] float32"]
    assert out[2].startswith("[(1, 4, 8, 8)] ['output_0")
    assert re.fullmatch(r"5 runs, mean [\d.]+ ms, p99 [\d.]+ ms", out[3])


def test_infer_session_matches_the_model(tiny_om):
    import ge.runtime
    from ge.runtime import InferSession
    with InferSession(0, tiny_om) as session:     # ais_bench's argument order
        feeds = {d.name: np.full(d.shape, 0.5, d.datatype) for d in session.get_inputs()}
        assert [d.size for d in session.get_inputs()] == [3 * 64 * 4, 4 * 64 * 4]
        got = session.infer(feeds)
        want = ge.runtime.load(tiny_om).run(feeds)
        np.testing.assert_array_equal(got[0], want[0])
        assert session.summary().stats.count == 1
        session.reset_summaryinfo()
        assert session.summary().exec_time_list == []


def test_infer_session_refuses_what_the_host_cannot_do(tiny_om):
    from ge.errors import GeError
    from ge.runtime import InferSession
    with pytest.raises(GeError) as err:
        InferSession(tiny_om, device_id=1)
    assert err.value.code == "EP0002" and "device_id=1" in err.value.message
    with InferSession(tiny_om) as session, pytest.raises(GeError) as err:
        session.infer([np.zeros(d.shape, d.datatype) for d in session.get_inputs()],
                      mode="dymshape")
    assert err.value.code == "EP0002" and "'dymshape'" in err.value.message
