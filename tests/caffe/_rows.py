"""One small network per row of the Caffe mapping table (ge.parser.caffe.MAPPINGS), and the
variants a row's parameters call for (every spelling of the convolution geometry, both LRN
regions, the three Eltwise operations, ...).  `ROW_NETS` maps a case name to (layer type,
builder); a builder returns a CaffeNet on a seeded input of shape X.

`NUMPY_REFERENCE` gives the numpy function of the cases OpenCV's DNN module cannot be the
reference for.
"""
from __future__ import annotations

import numpy as np

from bench.models.caffe_nets import CaffeNet

X = (1, 4, 7, 7)


def _net(name: str, shape=X) -> tuple[CaffeNet, str]:
    n = CaffeNet(name, seed=3)
    return n, n.input("data", shape)


def single(kind: str, shape=X, blobs=(), **params):
    def build() -> CaffeNet:
        n, x = _net(kind.lower(), shape)
        n.layer(kind, "layer", [x], blobs=blobs, **params)
        return n
    return build


def conv(**param):
    def build() -> CaffeNet:
        n, x = _net("conv")
        group = param.get("group", 1)
        k = param.get("kernel_size", [param.get("kernel_h"), param.get("kernel_w")])
        kh, kw = (k * 2 if len(k) == 1 else k)
        n.layer("Convolution", "layer", [x], blobs=[(6, 4 // group, kh, kw), (6,)],
                convolution_param=dict(param, num_output=6))
        return n
    return build


def two_bottoms(kind: str, second=X, blobs=(), **params):
    def build() -> CaffeNet:
        n, x = _net(kind.lower())
        y = n.input("data2", second)
        n.layer(kind, "layer", [x, y], blobs=blobs, **params)
        return n
    return build


def eltwise(**param):
    def build() -> CaffeNet:
        n, x = _net("eltwise")
        a = n.conv(x, 4, 4, 1, name="a")
        b = n.conv(x, 4, 4, 3, pad=1, name="b")
        n.layer("Eltwise", "layer", [x, a, b], eltwise_param=param)
        return n
    return build


def split_slice() -> CaffeNet:
    n, x = _net("slice")
    tops = n.layer("Slice", "layer", [x], ["s0", "s1", "s2"],
                   slice_param={"axis": 1, "slice_point": [1, 3]})
    n.layer("Split", "split", ["s1"], ["s1a", "s1b"])
    n.layer("Eltwise", "prod", ["s1a", "s1b"], eltwise_param={"operation": 0})
    n.layer("Concat", "concat", [tops[0], tops[2]], concat_param={"axis": 1})
    return n


def prior_box() -> CaffeNet:
    n, x = _net("priorbox", (1, 4, 5, 6))
    img = n.input("image", (1, 3, 40, 48))
    n.layer("PriorBox", "layer", [x, img], prior_box_param={
        "min_size": [10.0, 20.0], "max_size": [20.0, 30.0], "aspect_ratio": [2.0, 3.0],
        "flip": True, "clip": True, "variance": [0.1, 0.1, 0.2, 0.2]})
    return n


def scale_second_bottom() -> CaffeNet:
    n, x = _net("scale2")
    n.layer("Scale", "layer", [x, n.input("s", (4,))], blobs=[(4,)],
            scale_param={"axis": 1, "bias_term": True})
    return n


def crop() -> CaffeNet:
    n, x = _net("crop", (1, 4, 9, 9))
    n.layer("Crop", "layer", [x, n.input("ref", (1, 4, 5, 6))],
            crop_param={"axis": 2, "offset": [1, 2]})
    return n


ROW_NETS = {
    "Convolution/kernel_size": ("Convolution", conv(kernel_size=[3], stride=[2], pad=[1])),
    "Convolution/hw": ("Convolution", conv(kernel_h=3, kernel_w=2, stride_h=2, stride_w=1,
                                           pad_h=1, pad_w=0)),
    "Convolution/group_dilation": ("Convolution", conv(kernel_size=[3, 3], group=2,
                                                       dilation=[2], pad=[2])),
    "Convolution/depthwise": ("Convolution", single(
        "Convolution", blobs=[(4, 1, 3, 3)], convolution_param={
            "num_output": 4, "kernel_size": [3], "pad": [1], "group": 4, "bias_term": False})),
    "Deconvolution": ("Deconvolution", single(
        "Deconvolution", blobs=[(4, 3, 4, 4), (3,)],
        convolution_param={"num_output": 3, "kernel_size": [4], "stride": [2], "pad": [1]})),
    "Pooling/max_ceil": ("Pooling", single("Pooling", pooling_param={
        "pool": 0, "kernel_size": 3, "stride": 2})),
    "Pooling/ave_pad": ("Pooling", single("Pooling", pooling_param={
        "pool": 1, "kernel_size": 3, "stride": 2, "pad": 1})),
    "Pooling/ave_ceil_clipped": ("Pooling", single("Pooling", (1, 4, 8, 8), pooling_param={
        "pool": 1, "kernel_size": 3, "stride": 2})),
    "Pooling/global": ("Pooling", single("Pooling", pooling_param={
        "pool": 1, "global_pooling": True})),
    "InnerProduct": ("InnerProduct", single("InnerProduct", blobs=[(5, 196), (5,)],
                                            inner_product_param={"num_output": 5})),
    "InnerProduct/transpose": ("InnerProduct", single(
        "InnerProduct", blobs=[(196, 5)],
        inner_product_param={"num_output": 5, "transpose": True, "bias_term": False})),
    "BatchNorm": ("BatchNorm", single("BatchNorm", blobs=[
        np.arange(4, dtype=np.float32), np.full(4, 3.0, np.float32),
        np.array([0.5], np.float32)], batch_norm_param={"eps": 1e-3})),
    "BatchNorm/batch_statistics": ("BatchNorm", single("BatchNorm", blobs=[
        np.zeros(4, np.float32), np.ones(4, np.float32), np.array([1.0], np.float32)],
        batch_norm_param={"use_global_stats": False, "eps": 1e-3})),
    "Scale": ("Scale", single("Scale", blobs=[(4,), (4,)], scale_param={"bias_term": True})),
    "Scale/second_bottom": ("Scale", scale_second_bottom),
    "Bias": ("Bias", single("Bias", blobs=[(4,)])),
    "PReLU": ("PReLU", single("PReLU", blobs=[(4,)])),
    "PReLU/shared": ("PReLU", single("PReLU", blobs=[(1,)],
                                     prelu_param={"channel_shared": True})),
    "LRN/across": ("LRN", single("LRN", lrn_param={"local_size": 3, "alpha": 0.5,
                                                   "beta": 0.75, "k": 2.0})),
    "LRN/within": ("LRN", single("LRN", lrn_param={"local_size": 3, "alpha": 0.5,
                                                   "beta": 0.75, "norm_region": 1})),
    "Normalize": ("Normalize", single("Normalize", blobs=[(4,)], norm_param={
        "across_spatial": True, "channel_shared": False})),
    "PriorBox": ("PriorBox", prior_box),
    "ReLU": ("ReLU", single("ReLU")),
    "ReLU/negative_slope": ("ReLU", single("ReLU", relu_param={"negative_slope": 0.1})),
    "Sigmoid": ("Sigmoid", single("Sigmoid")),
    "TanH": ("TanH", single("TanH")),
    "AbsVal": ("AbsVal", single("AbsVal")),
    "BNLL": ("BNLL", single("BNLL")),
    "ELU": ("ELU", single("ELU", elu_param={"alpha": 0.5})),
    "Power": ("Power", single("Power", power_param={"power": 2.0, "scale": 0.5,
                                                    "shift": 3.0})),
    "Exp": ("Exp", single("Exp", exp_param={"base": 2.0, "scale": 0.5, "shift": 0.1})),
    "Log": ("Log", single("Log", (1, 4, 7, 7), log_param={"scale": 0.5, "shift": 8.0})),
    "Eltwise/sum_coeff": ("Eltwise", eltwise(operation=1, coeff=[0.5, -1.0, 2.0])),
    "Eltwise/prod": ("Eltwise", eltwise(operation=0)),
    "Eltwise/max": ("Eltwise", eltwise(operation=2)),
    "Concat": ("Concat", two_bottoms("Concat", (1, 2, 7, 7), concat_param={"axis": 1})),
    "Slice_Split": ("Slice", split_slice),
    "Softmax": ("Softmax", single("Softmax", softmax_param={"axis": 1})),
    "Dropout": ("Dropout", single("Dropout", dropout_param={"dropout_ratio": 0.3})),
    "Flatten": ("Flatten", single("Flatten", flatten_param={"axis": 1, "end_axis": 2})),
    "Reshape": ("Reshape", single("Reshape", reshape_param={"shape": {"dim": [0, -1, 7]}})),
    "Reshape/axis": ("Reshape", single("Reshape", reshape_param={
        "shape": {"dim": [2, 2]}, "axis": 1, "num_axes": 1})),
    "Permute": ("Permute", single("Permute", permute_param={"order": [0, 2, 3, 1]})),
    "Crop": ("Crop", crop),
    "Reduction/sum": ("Reduction", single("Reduction", reduction_param={
        "operation": 1, "axis": 1, "coeff": 2.0})),
    "Reduction/asum": ("Reduction", single("Reduction", reduction_param={
        "operation": 2, "axis": 2})),
    "Reduction/sumsq": ("Reduction", single("Reduction", reduction_param={
        "operation": 3, "axis": -1})),
    "Reduction/mean": ("Reduction", single("Reduction", reduction_param={
        "operation": 4, "axis": 1})),
    "ArgMax": ("ArgMax", single("ArgMax", argmax_param={"axis": 1})),
    "Interp": ("Interp", single("Interp", interp_param={"height": 11, "width": 5})),
    "Interp/zoom": ("Interp", single("Interp", interp_param={"zoom_factor": 2})),
    "ArgMax/flat": ("ArgMax", single("ArgMax")),
    "Upsample": ("Upsample", single("Upsample", upsample_param={"scale": 2.0, "stride": 2})),
    "Upsample/hw": ("Upsample", single("Upsample", upsample_param={"stride_h": 3,
                                                                   "stride_w": 1})),
}


def _reduce(op, axis):
    def ref(xs, blobs):
        x = xs[0].astype(np.float64)
        return op(x, tuple(range(axis % x.ndim, x.ndim)))
    return ref


def _lrn_across(xs, blobs):
    x = xs[0].astype(np.float64)
    sq = np.pad(x ** 2, [(0, 0), (1, 1), (0, 0), (0, 0)])
    return x / (2.0 + 0.5 / 3 * sum(sq[:, k:k + 4] for k in range(3))) ** 0.75


def _normalize(xs, blobs):
    x = xs[0].astype(np.float64)
    return x / np.sqrt((x * x).sum() + 1e-10) * blobs["layer"][0].reshape(1, 4, 1, 1)


def _per_channel(v):
    return v.reshape(1, -1, 1, 1)


# Cases OpenCV's DNN module cannot run (no such layer) or computes another function than Caffe
# (it ignores InnerProduct's transpose, LRN's k, Log's scale/shift, Normalize's per-channel scale
# across space and the bias of a two-bottom Scale; its batch statistics differ by 1e-3):
# (inputs, blobs) -> expected top.
NUMPY_REFERENCE = {
    "InnerProduct/transpose": lambda xs, b: xs[0].reshape(1, -1) @ b["layer"][0],
    "Scale/second_bottom": lambda xs, b: xs[0] * _per_channel(xs[1])
    + _per_channel(b["layer"][0]),
    "Bias": lambda xs, b: xs[0] + _per_channel(b["layer"][0]),
    "BatchNorm/batch_statistics": lambda xs, b: (
        (xs[0] - xs[0].mean(axis=(0, 2, 3), keepdims=True))
        / np.sqrt(xs[0].var(axis=(0, 2, 3), keepdims=True) + 1e-3)),
    "LRN/across": _lrn_across,
    "Normalize": _normalize,
    "Log": lambda xs, b: np.log(0.5 * xs[0].astype(np.float64) + 8.0),
    "Reduction/sum": _reduce(lambda x, a: 2.0 * x.sum(axis=a), 1),
    "Reduction/asum": _reduce(lambda x, a: np.abs(x).sum(axis=a), 2),
    "Reduction/sumsq": _reduce(lambda x, a: (x * x).sum(axis=a), -1),
    "Reduction/mean": _reduce(lambda x, a: x.mean(axis=a), 1),
    "ArgMax": lambda xs, b: xs[0].argmax(axis=1)[:, None].astype(np.float32),
    "ArgMax/flat": lambda xs, b: xs[0].reshape(1, -1).argmax(axis=1).reshape(1, 1, 1)
    .astype(np.float32),
    "Upsample": lambda xs, b: 2.0 * xs[0].repeat(2, axis=2).repeat(2, axis=3),
    "Upsample/hw": lambda xs, b: xs[0].repeat(3, axis=2),
}
