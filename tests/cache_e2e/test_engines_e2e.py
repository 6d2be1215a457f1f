"""EXCLUDE_ENGINES (seed 002) through `pyatc --raw_ge_options` at graph level: ops move to
AiCpu, no kernel is compiled and the cache is not touched, results equal the default compile's
(ge.runtime); every engine of an op excluded -> EZ3003 and no OM; an unknown engine name -> a
W-code warning in ATC's warning report after the success line.
"""
import json
import subprocess

import numpy as np
import pytest

from e2e_helpers import engine_of_ops, snapshot

GE_LOCAL = "DNN_VM_GE_LOCAL"


def _raw_options(path, exclude: str) -> str:
    path.write_text(json.dumps(
        {"compile options": {"graph": {"ge.exec.exclude_engines": exclude}}}))
    return f"--raw_ge_options={path}"


@pytest.fixture
def default_compile(pyatc, tmp_path):
    root = tmp_path / "cache"
    res = pyatc.run(tmp_path / "default", "small", f"--op_compiler_cache_dir={root}").ok()
    return root, res


def test_exclude_aicore_places_every_op_on_aicpu(pyatc, tmp_path, default_compile):
    from ge.om import read_om
    root, default = default_compile
    before = snapshot(root)
    raw = _raw_options(tmp_path / "exclude.json", "AiCore|AiVec|NoSuchEngine")
    res = pyatc.run(tmp_path / "excluded", "small", f"--op_compiler_cache_dir={root}", raw).ok()

    # the unknown name is a W-code warning after the success line, not an error
    assert "WP0110" in res.text and "NoSuchEngine" in res.text
    assert res.text.index("ATC run success") < res.text.index("WP0110")

    # placement, read back from the --mode=1 JSON of the OM
    to_json = pyatc.argv0 + ["--mode=1", f"--om={res.om}", f"--json={tmp_path / 'ex.json'}"]
    subprocess.run(to_json, env=pyatc.env, check=True, capture_output=True)
    placed = engine_of_ops(tmp_path / "ex.json")
    compute = {n: e for n, (t, e) in placed.items() if e != GE_LOCAL}
    assert set(compute.values()) == {"DNN_VM_AICPU"}, placed
    # exactly the ops that run compiled kernels in the default compile
    kernel_ops = {op.name for g in read_om(str(default.om)).model_def.graph for op in g.op
                  if "_kernelname" in op.attr}
    # (relu1 is fused into conv1's kernel by ConvActivationFusionPass)
    assert set(compute) == kernel_ops and {"conv1", "pool1", "add1"} <= kernel_ops

    # no kernel compiled: TBE_KERNELS absent, statistics zero, the cache not even opened
    om = read_om(str(res.om))
    assert om.kernels == []
    report = res.report()
    assert report["kernel_cache"]["kernels"] == report["kernel_cache"]["compiles"] == 0
    assert report["kernel_cache"]["cache_dir"] == ""
    assert set(report["engines"]) == {"DNN_VM_AICPU", GE_LOCAL}
    assert snapshot(root) == before
    assert len(read_om(str(default.om)).kernels) == default.report()["kernel_cache"]["kernels"]

    # same numbers as the default compile (compiled kernels) on the host runtime
    import ge.runtime
    x = np.random.default_rng(5).standard_normal((1, 3, 8, 8)).astype(np.float32)
    want = ge.runtime.load(str(default.om)).run([x])
    got = ge.runtime.load(str(res.om)).run([x])
    assert len(got) == len(want) == 1
    np.testing.assert_allclose(got[0], want[0], rtol=1e-4, atol=1e-5)


def test_op_with_every_engine_excluded_is_ez3003(pyatc, tmp_path):
    raw = _raw_options(tmp_path / "all.json", "AiCore|AiVec|AiCpu")
    res = pyatc.run(tmp_path / "w", "small", f"--op_compiler_cache_dir={tmp_path / 'c'}", raw)
    assert res.rc == 255, res.text
    assert "EZ3003" in res.text and "conv1" in res.text and "Conv2D" in res.text
    assert "Traceback" not in res.text
    assert not res.om.exists()
    assert [p.name for p in res.cwd.iterdir() if "net.om" in p.name] == []
    assert not (tmp_path / "c").exists()
