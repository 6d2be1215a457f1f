"""--threads / load(threads=) / InferSession(threads=): the sgemm of the matmul and convolution
kernels split over OpenBLAS threads, with the same bits as one thread; bad counts are EP0320."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from _build import compile_to_om, env_with_repo, onnxruntime_outputs

import ge.runtime
from ge.errors import GeError
from ge.runtime import InferSession
from ge.runtime._threads import default_threads, usable_cpus

PRECISION = {"ge.exec.precision_mode": "must_keep_origin_dtype"}


def _sgemm_model():
    """Large enough that OpenBLAS really splits the products: Conv 3x3 (64 x 1600 x 288),
    1x1 Conv, MatMul 64 x 256 x 1600 + bias + Relu."""
    rng = np.random.default_rng(3)
    inits = [numpy_helper.from_array((rng.standard_normal(s) * 0.1).astype(np.float32), n)
             for n, s in (("w1", (64, 32, 3, 3)), ("w2", (64, 64, 1, 1)), ("m", (1600, 256)),
                          ("b", (256,)))]
    inits.append(numpy_helper.from_array(np.array([64, 1600], np.int64), "shape"))
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["r1", "w2"], ["c2"]),
             helper.make_node("Reshape", ["c2", "shape"], ["f"]),
             helper.make_node("MatMul", ["f", "m"], ["mm"]),
             helper.make_node("Add", ["mm", "b"], ["a"]),
             helper.make_node("Relu", ["a"], ["y"])]
    graph = helper.make_graph(
        nodes, "sgemm", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 32, 40, 40])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [64, 256])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


@pytest.fixture(scope="module")
def sgemm_om(tmp_path_factory):
    return compile_to_om(_sgemm_model(), tmp_path_factory.mktemp("threads") / "m.om", PRECISION)


@pytest.fixture(scope="module")
def x():
    return np.random.default_rng(0).standard_normal((1, 32, 40, 40)).astype(np.float32)


def test_two_threads_match_one_and_repeat_exactly(sgemm_om, x):
    """Each count repeats its own bits; 1 vs 2 threads agree to fp32 rounding (bit for bit
    on the core types whose threaded sgemm keeps the order of the sum, e.g. SkylakeX and
    Cooperlake, but not Haswell: docs/runtime.md)."""
    with ge.runtime.load(sgemm_om, threads=1) as one, ge.runtime.load(sgemm_om, threads=2) as two:
        assert (one.threads, two.threads) == (1, 2)
        a, b = one.run([x])[0], two.run([x])[0]
        assert np.abs(a).max() > 0
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-5 * np.abs(a).max())
        assert two.run([x])[0].tobytes() == b.tobytes()
        assert one.run([x])[0].tobytes() == a.tobytes()      # switching back and forth


def test_automatic_core_gives_the_bits_of_one_thread(sgemm_om, x, tmp_path):
    """Without an inherited OPENBLAS_CORETYPE, ge.blas picks the CPU's newest core type; on
    those this repository targets (SkylakeX / Cooperlake) 2 threads give 1 thread's bits."""
    np.save(tmp_path / "x.npy", x)
    code = ("import sys, numpy as np, ge.runtime, ge.blas as b\n"
            "x = np.load(sys.argv[2])\n"
            "outs = [ge.runtime.load(sys.argv[1], threads=t).run([x])[0] for t in (1, 2)]\n"
            "print(b.load(), outs[0].tobytes() == outs[1].tobytes())\n")
    env = {k: v for k, v in env_with_repo().items() if k != "OPENBLAS_CORETYPE"}
    done = subprocess.run([sys.executable, "-c", code, sgemm_om, str(tmp_path / "x.npy")],
                          env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    core, same = done.stdout.split()
    if core in ("SkylakeX", "Cooperlake", "SapphireRapids"):
        assert same == "True", core


def test_default_is_the_physical_cores(sgemm_om):
    assert 1 <= default_threads() <= len(usable_cpus())
    with ge.runtime.load(sgemm_om) as model:
        assert model.threads == default_threads()


@pytest.mark.parametrize("bad", [0, -1, "two", 1.5, 10_000])
def test_bad_counts_are_ep0320(sgemm_om, bad):
    with pytest.raises(GeError) as err:
        InferSession(sgemm_om, threads=bad)
    assert err.value.code == "EP0320"


def test_command_line_threads(sgemm_om, x, tmp_path):
    np.save(tmp_path / "x.npy", x)
    outs = []
    for n in ("1", "2"):
        out = tmp_path / f"out{n}"
        done = subprocess.run([sys.executable, "-m", "ge.runtime", "--model", sgemm_om,
                               "--input", str(tmp_path / "x.npy"), "--output", str(out),
                               "--threads", n], env=env_with_repo(), capture_output=True,
                              text=True)
        assert done.returncode == 0, done.stderr
        outs.append(np.load(out / "output_0.npy"))
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-5, atol=1e-5 * np.abs(outs[0]).max())
    bad = subprocess.run([sys.executable, "-m", "ge.runtime", "--model", sgemm_om,
                          "--threads", "0"], env=env_with_repo(), capture_output=True, text=True)
    assert bad.returncode == 255 and "EP0320" in bad.stderr and "Traceback" not in bad.stderr


def _jobs_model():
    """A batched MatMul (6 batches: one job each) + bias + GELU (fused into it), then a
    softmax and a layer norm large enough to run in blocks of rows (6 x 64 rows of 512)."""
    rng = np.random.default_rng(5)
    inits = [numpy_helper.from_array((rng.standard_normal(s) * 0.1).astype(np.float32), n)
             for n, s in (("w", (256, 512)), ("b", (512,)), ("gamma", (512,)), ("beta", (512,)))]
    inits += [numpy_helper.from_array(np.array(v, np.float32), n)
              for n, v in (("sqrt2", 2 ** 0.5), ("one", 1.0), ("half", 0.5))]
    nodes = [helper.make_node("MatMul", ["x", "w"], ["mm"]),
             helper.make_node("Add", ["mm", "b"], ["a"]),
             helper.make_node("Div", ["a", "sqrt2"], ["d"]),
             helper.make_node("Erf", ["d"], ["e"]),
             helper.make_node("Add", ["e", "one"], ["e1"]),
             helper.make_node("Mul", ["a", "e1"], ["ae"]),
             helper.make_node("Mul", ["ae", "half"], ["g"]),
             helper.make_node("Softmax", ["g"], ["s"], axis=-1),
             helper.make_node("LayerNormalization", ["s", "gamma", "beta"], ["y"], axis=-1)]
    graph = helper.make_graph(
        nodes, "jobs", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [6, 64, 256])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [6, 64, 512])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_kernels_split_over_threads_themselves(tmp_path):
    """The MatMul (jobs = batches), softmax and layer norm (blocks of rows) split their own work
    over the model's threads: 2 threads give 1 thread's results to fp32 rounding and their own
    bits run after run; both match onnxruntime."""
    model = _jobs_model()
    om = compile_to_om(model, tmp_path / "jobs.om", PRECISION)
    x = (np.random.default_rng(1).standard_normal((6, 64, 256)) * 3).astype(np.float32)
    with ge.runtime.load(om, threads=1) as one, ge.runtime.load(om, threads=2) as two:
        compiled = [s.type for s in one._plan.root.steps if one.engines[s.name] == "AiCore"]
        assert {"BatchMatMulV2", "SoftmaxV2", "LayerNorm"} <= set(compiled)
        a, b = one.run([x])[0], two.run([x])[0]
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6 * np.abs(a).max())
        assert two.run([x])[0].tobytes() == b.tobytes()
    ref = onnxruntime_outputs(model, {"x": x})[0]
    np.testing.assert_allclose(b, ref, rtol=1e-4, atol=1e-5 * np.abs(ref).max())


def test_job_workers_persist_survive_fork_and_leave_with_the_model(tmp_path):
    """A model's kernels that split their work share one pool (the loader points the later
    ones at the first's), whose N-1 workers start on its first threaded call and stay (no
    thread per call; `top -H` shows them as ge-jobs); a forked child starts its own; closing
    the model joins them.  The jobs model has three such kernels (MatMul, softmax, layer
    norm): with 2 threads, one worker."""
    om = compile_to_om(_jobs_model(), tmp_path / "jobs.om", PRECISION)
    x = (np.random.default_rng(2).standard_normal((6, 64, 256))).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    code = ("import gc, os, sys, numpy as np, ge.runtime\n"
            "def tasks():\n"
            "    names = [open(f'/proc/self/task/{t}/comm').read().strip()\n"
            "             for t in os.listdir('/proc/self/task')]\n"
            "    return names.count('ge-jobs')\n"
            "x = np.load(sys.argv[2])\n"
            "model = ge.runtime.load(sys.argv[1], threads=2)\n"
            "first = model.run([x])[0].copy()\n"
            "after_one = tasks()\n"
            "same = model.run([x])[0].tobytes() == first.tobytes()\n"
            "after_two = tasks()\n"
            "pid = os.fork()\n"
            "if pid == 0:\n"
            "    os._exit(0 if model.run([x])[0].tobytes() == first.tobytes() else 3)\n"
            "_, status = os.waitpid(pid, 0)\n"
            "model.close(); del model; gc.collect()\n"
            "print(after_one, after_two, tasks(), os.waitstatus_to_exitcode(status), same)\n")
    done = subprocess.run([sys.executable, "-W", "ignore", "-c", code, str(om),
                           str(tmp_path / "x.npy")], env=env_with_repo(), capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    after_one, after_two, closed, child, same = done.stdout.split()
    assert (after_one, after_two, closed) == ("1", "1", "0")
    assert (child, same) == ("0", "True")


def test_max_pooling_in_row_blocks_matches_onnxruntime(tmp_path):
    """MaxPool large enough to split its rows over the threads (gen_pool.py): 1 and 2 threads
    the same bits as each other and onnxruntime's values, except that a NaN propagates to the
    one window that holds it (onnxruntime's skips it) and a plane of -inf pools to -inf
    (onnxruntime's to the lowest finite float)."""
    graph = helper.make_graph(
        [helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2],
                          pads=[1, 1, 1, 1])], "pool",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 64, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 32, 32])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    om = compile_to_om(model, tmp_path / "pool.om", PRECISION)
    x = np.random.default_rng(7).standard_normal((1, 16, 64, 64)).astype(np.float32)
    x[0, 3, 10, 20] = np.nan
    x[0, 5] = -np.inf
    want = onnxruntime_outputs(model, {"x": x})[0]
    with ge.runtime.load(om, threads=1) as one, ge.runtime.load(om, threads=2) as two:
        a, b = one.run([x])[0], two.run([x])[0]
    assert a.tobytes() == b.tobytes()
    assert np.isnan(a[0, 3, 5, 10]) and np.isnan(a).sum() == 1
    assert (a[0, 5] == -np.inf).all()
    a[0, 3, 5, 10], a[0, 5] = want[0, 3, 5, 10], want[0, 5]
    np.testing.assert_array_equal(a, want)
