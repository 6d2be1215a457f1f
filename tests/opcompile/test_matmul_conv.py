"""MatMul / BatchMatMul / GEMM / Conv2D generators (OpenBLAS sgemm) vs the reference kernels."""
import numpy as np
import pytest

from kernel_check import check_op

F32 = np.float32
TOL = dict(rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
def test_matmul_transposes(ta, tb, rng):
    a = rng.standard_normal((5, 3) if ta else (3, 5)).astype(F32)
    b = rng.standard_normal((4, 5) if tb else (5, 4)).astype(F32)
    check_op("MatMul", [a, b], {"transpose_x1": ta, "transpose_x2": tb}, **TOL)


@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("k,n", [(5, 4), (300, 4000)])   # the second splits into column jobs
def test_matmul_of_one_row(ta, tb, k, n, rng):
    """M = 1 (a classifier head) runs on sgemv, with a bias and with transposed operands."""
    a = rng.standard_normal((k, 1) if ta else (1, k)).astype(F32)
    b = rng.standard_normal((n, k) if tb else (k, n)).astype(F32)
    bias = rng.standard_normal((n,)).astype(F32)
    attrs = {"transpose_x1": ta, "transpose_x2": tb}
    check_op("MatMulV2", [a, b, bias], attrs, **TOL)
    check_op("BatchMatMulV2", [a[None].repeat(3, 0), b],
             {"adj_x1": ta, "adj_x2": tb}, **TOL)


def test_matmul_v2_bias(rng):
    a = rng.standard_normal((6, 8)).astype(F32)
    b = rng.standard_normal((8, 3)).astype(F32)
    bias = rng.standard_normal((3,)).astype(F32)
    check_op("MatMulV2", [a, b, bias], **TOL)


@pytest.mark.parametrize("a_shape,b_shape", [((2, 3, 4), (2, 4, 5)), ((2, 1, 3, 4), (3, 4, 2)),
                                             ((3, 4), (2, 4, 5))])
def test_batch_matmul_v2_broadcast(a_shape, b_shape, rng):
    a = rng.standard_normal(a_shape).astype(F32)
    b = rng.standard_normal(b_shape).astype(F32)
    check_op("BatchMatMulV2", [a, b], **TOL)


def test_batch_matmul_adj(rng):
    a = rng.standard_normal((2, 4, 3)).astype(F32)
    b = rng.standard_normal((2, 5, 4)).astype(F32)
    check_op("BatchMatMul", [a, b], {"adj_x1": True, "adj_x2": True}, **TOL)


def test_gemm(rng):
    a = rng.standard_normal((4, 3)).astype(F32)
    b = rng.standard_normal((5, 4)).astype(F32)
    c = rng.standard_normal((5,)).astype(F32)
    check_op("GEMM", [a, b, c, np.asarray([0.5], F32), np.asarray([2.0], F32)],
             {"transpose_a": True, "transpose_b": True}, **TOL)


CONV_CASES = [  # (x shape, w shape, strides, pads, dilations, groups, bias)
    ((1, 3, 8, 8), (4, 3, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, True),
    ((2, 3, 9, 7), (5, 3, 3, 2), (2, 1), (0, 1, 2, 0), (1, 1), 1, False),
    ((1, 4, 8, 8), (4, 2, 3, 3), (1, 2), (1, 1, 1, 1), (2, 1), 2, True),
    ((1, 4, 6, 6), (4, 1, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 4, True),    # depthwise
    ((2, 8, 5, 5), (6, 8, 1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1, True),    # 1x1 direct
    ((1, 3, 7, 7), (2, 3, 7, 7), (2, 2), (3, 3, 3, 3), (1, 1), 1, False),   # stem-like
    ((1, 6, 8, 8), (4, 6, 1, 1), (2, 2), (0, 0, 0, 0), (1, 1), 1, True),    # 1x1 downsample
    ((1, 2, 3, 2), (3, 2, 3, 3), (1, 1), (4, 3, 5, 4), (1, 1), 1, True),    # pads > kernel
    ((1, 2, 9, 10), (3, 2, 2, 3), (3, 3), (1, 0, 2, 1), (2, 3), 1, False),  # stride 3, dilated
    ((1, 2, 4, 1), (2, 2, 3, 3), (1, 2), (1, 1, 2, 2), (1, 1), 1, True),    # width 1
    ((1, 48, 45, 45), (8, 48, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, True),  # 2 im2col blocks
    ((1, 3, 7, 7), (6, 1, 3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 3, True),    # channel multiplier 2
    ((2, 4, 9, 9), (4, 1, 3, 3), (2, 2), (2, 1, 1, 2), (2, 2), 4, False),   # depthwise, dilated
    # stride 1, output as wide as the input (im2col copies a tap's rows as one run)
    ((1, 2, 6, 7), (3, 2, 3, 3), (1, 1), (1, 3, 3, 1), (2, 2), 1, True),    # dilated, lopsided
    ((1, 2, 3, 2), (2, 2, 5, 5), (1, 1), (2, 2, 2, 2), (1, 1), 1, False),   # taps off the image
]


@pytest.mark.parametrize("xs,ws,st,pads,dil,groups,bias", CONV_CASES)
def test_conv2d(xs, ws, st, pads, dil, groups, bias, rng):
    x = rng.standard_normal(xs).astype(F32)
    w = rng.standard_normal(ws).astype(F32)
    ins = [x, w, rng.standard_normal((ws[0],)).astype(F32) if bias else None]
    attrs = {"strides": [1, 1, *st], "pads": list(pads), "dilations": [1, 1, *dil],
             "groups": groups, "data_format": "NCHW"}
    check_op("Conv2D", ins, attrs, fmt="NCHW", **TOL)


def test_conv2d_nhwc_is_refused(rng):
    from ge.compiler.opcompile.generators import check_supported
    from kernel_check import make_sig
    x, w = np.ones((1, 4, 4, 3), F32), np.ones((2, 3, 1, 1), F32)
    sig = make_sig("Conv2D", [x, w], [np.ones((1, 4, 4, 2), F32)],
                   {"strides": [1, 1, 1, 1], "pads": [0, 0, 0, 0], "data_format": "NHWC"})
    assert "NCHW" in check_supported(sig)


@pytest.mark.parametrize("act", ["Relu", "GeluV2"])
@pytest.mark.parametrize("xs,ws,st,pads,groups", [
    ((1, 48, 45, 45), (8, 48, 3, 3), (1, 1), (1, 1, 1, 1), 1),    # im2col blocks
    ((2, 8, 5, 5), (6, 8, 1, 1), (1, 1), (0, 0, 0, 0), 1),        # 1x1 direct
    ((1, 4, 6, 6), (8, 1, 3, 3), (2, 2), (1, 1, 1, 1), 4),        # channel-wise
])
def test_conv2d_fused_activation(act, xs, ws, st, pads, groups, rng):
    ins = [rng.standard_normal(xs).astype(F32), rng.standard_normal(ws).astype(F32),
           rng.standard_normal((ws[0],)).astype(F32)]
    attrs = {"strides": [1, 1, *st], "pads": list(pads), "groups": groups,
             "data_format": "NCHW", "fused_activation": act}
    got = check_op("Conv2D", ins, attrs, fmt="NCHW", **TOL)[0]
    if act == "Relu":
        assert got.min() == 0.0 and got.max() > 0


@pytest.mark.parametrize("act", ["Relu", "GeluV2"])
def test_batch_matmul_bias_fused_activation(act, rng):
    a = rng.standard_normal((2, 6, 8)).astype(F32)
    b = rng.standard_normal((8, 5)).astype(F32)
    bias = rng.standard_normal((5,)).astype(F32)
    check_op("BatchMatMulV2", [a, b, bias], {"fused_activation": act}, **TOL)


def test_unknown_fused_activation_is_refused(rng):
    from ge.compiler.opcompile.generators import check_supported
    from kernel_check import make_sig
    a, b = np.ones((2, 3), F32), np.ones((3, 4), F32)
    sig = make_sig("MatMulV2", [a, b], [np.ones((2, 4), F32)], {"fused_activation": "Sigmoid"})
    assert "fused activation" in check_supported(sig)


def test_threaded_matmul_called_from_many_threads_at_once(rng):
    """A kernel that splits its work keeps one pool of workers (ge/compiler/opcompile/jobs.py);
    a caller that finds it busy, or OpenBLAS set to one thread by another caller, runs its
    product alone, so concurrent calls from several threads (cffi releases the GIL) each get
    their own result (to rounding: a busy caller's sgemm may run on OpenBLAS's threads, which
    on Haswell do not keep one thread's bits)."""
    import threading

    from ge import blas
    from kernel_check import make_sig, run_compiled
    a = rng.standard_normal((4, 64, 256)).astype(F32)
    b = rng.standard_normal((256, 512)).astype(F32)
    sig = make_sig("BatchMatMulV2", [a, b], [np.zeros((4, 64, 512), F32)], {})
    blas.load()
    blas.set_threads(2)
    try:
        inputs = [[a * (i + 1), b] for i in range(4)]
        expected = [run_compiled(sig, x)[0] for x in inputs]
        got: dict = {}

        def call(i):
            got[i] = [run_compiled(sig, inputs[i])[0] for _ in range(20)]

        threads = [threading.Thread(target=call, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        blas.set_threads(1)
    for i, outs in got.items():
        np.testing.assert_allclose(expected[i], np.matmul(inputs[i][0], b), rtol=1e-4, atol=1e-3)
        for o in outs:
            np.testing.assert_allclose(o, expected[i], rtol=1e-5,
                                       atol=1e-5 * np.abs(expected[i]).max())
