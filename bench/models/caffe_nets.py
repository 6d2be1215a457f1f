"""Caffe networks written with our schema (ge.proto.caffe): a .prototxt and a .caffemodel with
seeded random weights, for tests and benchmarks (no Caffe, no downloads).

``CaffeNet`` is the writer: ``input``, ``layer`` (any type, parameters as nested dicts, blobs as
shapes filled with random values or as arrays) and helpers for the common layers; ``save``
writes ``<name>.prototxt`` (no blobs) and ``<name>.caffemodel`` (layers with their blobs, as
Caffe writes them; ``v1=True`` writes the legacy ``layers`` form with 4-D legacy blob dims).  ``NETS`` maps a name to a
builder ``(width_div=1, image=224, seed=0) -> CaffeNet``.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make ``bench.models`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np  # noqa: E402
from google.protobuf import text_format  # noqa: E402

from ge.proto.caffe import V1_LAYER_TYPES, NetParameter  # noqa: E402
from ge.proto.schema import is_repeated  # noqa: E402

__all__ = ["CaffeNet", "NETS", "fill"]

_V1_NAME = {"AbsVal": "ABSVAL", "BNLL": "BNLL", "Concat": "CONCAT", "Convolution": "CONVOLUTION",
            "Dropout": "DROPOUT", "Eltwise": "ELTWISE", "Exp": "EXP", "Flatten": "FLATTEN",
            "InnerProduct": "INNER_PRODUCT", "LRN": "LRN", "Pooling": "POOLING",
            "Power": "POWER", "ReLU": "RELU", "Sigmoid": "SIGMOID", "Softmax": "SOFTMAX",
            "Split": "SPLIT", "Slice": "SLICE", "TanH": "TANH", "ArgMax": "ARGMAX",
            "Deconvolution": "DECONVOLUTION"}


def fill(message, values: dict) -> None:
    """Set a message's fields from a dict: nested dicts for messages, lists for repeated."""
    for key, value in values.items():
        field = message.DESCRIPTOR.fields_by_name[key]
        if is_repeated(field):
            target = getattr(message, key)
            for item in (value if isinstance(value, (list, tuple)) else [value]):
                if isinstance(item, dict):
                    fill(target.add(), item)
                else:
                    target.append(item)
        elif isinstance(value, dict):
            fill(getattr(message, key), value)
        else:
            setattr(message, key, value)


class CaffeNet:
    def __init__(self, name: str, seed: int = 0):
        self.net = NetParameter(name=name)
        self.blobs: dict[str, list] = {}
        self.rng = np.random.default_rng(seed)
        self.counter = 0

    # -- generic ------------------------------------------------------------------------------
    def input(self, name: str, shape, style: str = "layer") -> str:
        if style == "layer":
            self.layer("Input", name, [], [name], input_param={"shape": [{"dim": list(shape)}]})
        elif style == "input_dim":
            self.net.input.append(name)
            self.net.input_dim.extend(shape)
        else:
            self.net.input.append(name)
            self.net.input_shape.add().dim.extend(shape)
        return name

    def layer(self, kind: str, name: str, bottoms, tops=None, blobs=(), **params) -> list:
        layer = self.net.layer.add(name=name, type=kind)
        layer.bottom.extend(bottoms)
        tops = [name] if tops is None else list(tops)
        layer.top.extend(tops)
        fill(layer, params)
        if blobs:
            self.blobs[name] = [b if isinstance(b, np.ndarray) else self.random(b)
                                for b in blobs]
        return tops

    def random(self, shape, scale: float | None = None) -> np.ndarray:
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 1
        std = scale if scale is not None else (2.0 / fan_in) ** 0.5
        return (self.rng.standard_normal(shape) * std).astype(np.float32)

    def name(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    # -- common layers (shapes tracked by the caller through `channels`) -------------------------
    def conv(self, x: str, cin: int, cout: int, k: int, stride=1, pad=0, group=1, name=None,
             bias=True, dilation=1, std=None) -> str:
        name = name or self.name("conv")
        param = {"num_output": cout, "kernel_size": [k], "stride": [stride], "pad": [pad],
                 "bias_term": bias}
        if group != 1:
            param["group"] = group
        if dilation != 1:
            param["dilation"] = [dilation]
        weight = self.random((cout, cin // group, k, k), std)
        blobs = [weight] + ([self.random((cout,), 0.1)] if bias else [])
        return self.layer("Convolution", name, [x], blobs=blobs, convolution_param=param)[0]

    def relu(self, x: str, name=None, slope=0.0) -> str:
        name = name or self.name("relu")
        params = {"relu_param": {"negative_slope": slope}} if slope else {}
        return self.layer("ReLU", name, [x], [x], **params)[0]          # in place

    def pool(self, x: str, k: int, stride: int, pad: int = 0, method: str = "MAX",
             name=None, global_pooling=False) -> str:
        name = name or self.name("pool")
        param = {"pool": 0 if method == "MAX" else 1}
        if global_pooling:
            param["global_pooling"] = True
        else:
            param.update(kernel_size=k, stride=stride, pad=pad)
        return self.layer("Pooling", name, [x], pooling_param=param)[0]

    def fc(self, x: str, k_in: int, n: int, name=None) -> str:
        name = name or self.name("fc")
        return self.layer("InnerProduct", name, [x], blobs=[(n, k_in), self.random((n,), 0.1)],
                          inner_product_param={"num_output": n})[0]

    def bn_scale(self, x: str, c: int, name: str) -> str:
        """Caffe-style BatchNorm (mean, variance, scale factor) + Scale(bias), in place."""
        factor = np.float32(2.0)
        mean = self.random((c,), 0.1) * factor
        var = (self.rng.uniform(0.5, 1.5, c) * factor).astype(np.float32)
        self.layer("BatchNorm", f"{name}_bn", [x], [x], blobs=[mean, var,
                   np.array([factor], np.float32)], batch_norm_param={"use_global_stats": True})
        gamma = self.rng.uniform(0.5, 1.5, c).astype(np.float32)
        self.layer("Scale", f"{name}_scale", [x], [x], blobs=[gamma, self.random((c,), 0.1)],
                   scale_param={"bias_term": True})
        return x

    def softmax(self, x: str, name="prob") -> str:
        return self.layer("Softmax", name, [x])[0]

    # -- files --------------------------------------------------------------------------------
    def weights(self, v1: bool = False) -> NetParameter:
        out = NetParameter(name=self.net.name)
        for layer in self.net.layer:
            if v1:
                w = out.layers.add(name=layer.name, type=V1_LAYER_TYPES[_V1_NAME[layer.type]])
            else:
                w = out.layer.add(name=layer.name, type=layer.type)
            w.bottom.extend(layer.bottom)
            w.top.extend(layer.top)
            for array in self.blobs.get(layer.name, []):
                blob = w.blobs.add()
                if v1:      # legacy 4-D num/channels/height/width, as V1 Caffe wrote them
                    dims = (1,) * (4 - array.ndim) + array.shape
                    blob.num, blob.channels, blob.height, blob.width = dims
                else:
                    blob.shape.dim.extend(array.shape)
                blob.data.extend(array.reshape(-1).tolist())
        return out

    def prototxt(self, v1: bool = False) -> str:
        if not v1:
            return text_format.MessageToString(self.net)
        legacy = NetParameter(name=self.net.name)
        legacy.input.extend(self.net.input)
        legacy.input_dim.extend(self.net.input_dim)
        for layer in self.net.layer:
            old = legacy.layers.add(name=layer.name, type=V1_LAYER_TYPES[_V1_NAME[layer.type]])
            old.bottom.extend(layer.bottom)
            old.top.extend(layer.top)
            for field, value in layer.ListFields():
                if field.name.endswith("_param"):
                    getattr(old, field.name).CopyFrom(value)
        return text_format.MessageToString(legacy)

    def save(self, directory, v1: bool = False) -> tuple[str, str]:
        os.makedirs(directory, exist_ok=True)
        base = os.path.join(os.fspath(directory), self.net.name)
        with open(base + ".prototxt", "w") as f:
            f.write(self.prototxt(v1))
        with open(base + ".caffemodel", "wb") as f:
            f.write(self.weights(v1).SerializeToString())
        return base + ".prototxt", base + ".caffemodel"


# -- networks -----------------------------------------------------------------------------------

def alexnet(width_div: int = 1, image: int = 227, seed: int = 0) -> CaffeNet:
    n, w = CaffeNet("alexnet", seed), lambda c: max(c // width_div, 4)
    x = n.input("data", (1, 3, image, image), style="input_dim")
    c1, c2, c3, c4, c5 = w(96), w(256), w(384), w(384), w(256)
    x = n.relu(n.conv(x, 3, c1, 11, 4, name="conv1"))
    x = n.layer("LRN", "norm1", [x], lrn_param={"local_size": 5, "alpha": 1e-4,
                                                "beta": 0.75})[0]
    x = n.pool(x, 3, 2, name="pool1")
    x = n.relu(n.conv(x, c1, c2, 5, pad=2, group=2, name="conv2"))
    x = n.layer("LRN", "norm2", [x], lrn_param={"local_size": 5, "alpha": 1e-4,
                                                "beta": 0.75})[0]
    x = n.pool(x, 3, 2, name="pool2")
    x = n.relu(n.conv(x, c2, c3, 3, pad=1, name="conv3"))
    x = n.relu(n.conv(x, c3, c4, 3, pad=1, group=2, name="conv4"))
    x = n.relu(n.conv(x, c4, c5, 3, pad=1, group=2, name="conv5"))
    x = n.pool(x, 3, 2, name="pool5")
    side = _pooled(_pooled(_pooled((image - 11) // 4 + 1)))
    f = w(4096)
    x = n.relu(n.fc(x, c5 * side * side, f, name="fc6"))
    x = n.layer("Dropout", "drop6", [x], [x], dropout_param={"dropout_ratio": 0.5})[0]
    x = n.relu(n.fc(x, f, f, name="fc7"))
    x = n.fc(x, f, 1000 // width_div, name="fc8")
    n.softmax(x)
    return n


def _pooled(size: int, k: int = 3, s: int = 2, pad: int = 0) -> int:
    """Caffe's ceil-rounded pooled size."""
    out = -(-(size + 2 * pad - k) // s) + 1
    return out - 1 if (out - 1) * s >= size + pad else out


def vgg16(width_div: int = 1, image: int = 224, seed: int = 0) -> CaffeNet:
    n = CaffeNet("vgg16", seed)
    x = n.input("data", (1, 3, image, image), style="input_shape")
    cin, side = 3, image
    for stage, (width, reps) in enumerate(((64, 2), (128, 2), (256, 3), (512, 3), (512, 3)), 1):
        c = max(width // width_div, 4)
        for r in range(1, reps + 1):
            x = n.relu(n.conv(x, cin, c, 3, pad=1, name=f"conv{stage}_{r}"))
            cin = c
        x = n.pool(x, 2, 2, name=f"pool{stage}")
        side = _pooled(side, 2, 2)
    f = max(4096 // width_div, 8)
    x = n.relu(n.fc(x, cin * side * side, f, name="fc6"))
    x = n.relu(n.fc(x, f, f, name="fc7"))
    n.softmax(n.fc(x, f, 1000 // width_div, name="fc8"))
    return n


def _inception(n: CaffeNet, x: str, cin: int, spec: tuple, name: str) -> tuple[str, int]:
    c1, r3, c3, r5, c5, pp = spec
    b1 = n.relu(n.conv(x, cin, c1, 1, name=f"{name}/1x1"))
    b2 = n.relu(n.conv(n.relu(n.conv(x, cin, r3, 1, name=f"{name}/3x3_reduce")), r3, c3, 3,
                       pad=1, name=f"{name}/3x3"))
    b3 = n.relu(n.conv(n.relu(n.conv(x, cin, r5, 1, name=f"{name}/5x5_reduce")), r5, c5, 5,
                       pad=2, name=f"{name}/5x5"))
    b4 = n.relu(n.conv(n.pool(x, 3, 1, pad=1, name=f"{name}/pool"), cin, pp, 1,
                       name=f"{name}/pool_proj"))
    out = n.layer("Concat", f"{name}/output", [b1, b2, b3, b4])[0]
    return out, c1 + c3 + c5 + pp


def googlenet(width_div: int = 1, image: int = 224, seed: int = 0) -> CaffeNet:
    """The GoogLeNet stem, inception 3a/3b, 4a, then average pooling and the classifier."""
    n, w = CaffeNet("googlenet", seed), lambda c: max(c // width_div, 2)
    x = n.input("data", (1, 3, image, image))
    x = n.relu(n.conv(x, 3, w(64), 7, 2, 3, name="conv1/7x7_s2"))
    x = n.pool(x, 3, 2, name="pool1/3x3_s2")
    x = n.layer("LRN", "pool1/norm1", [x], lrn_param={"local_size": 5, "alpha": 1e-4,
                                                      "beta": 0.75})[0]
    x = n.relu(n.conv(x, w(64), w(64), 1, name="conv2/3x3_reduce"))
    x = n.relu(n.conv(x, w(64), w(192), 3, pad=1, name="conv2/3x3"))
    x = n.pool(x, 3, 2, name="pool2/3x3_s2")
    cin = w(192)
    for name, spec in (("inception_3a", (64, 96, 128, 16, 32, 32)),
                       ("inception_3b", (128, 128, 192, 32, 96, 64))):
        x, cin = _inception(n, x, cin, tuple(w(c) for c in spec), name)
    x = n.pool(x, 3, 2, name="pool3/3x3_s2")
    x, cin = _inception(n, x, cin, tuple(w(c) for c in (192, 96, 208, 16, 48, 64)),
                        "inception_4a")
    x = n.pool(x, 0, 0, method="AVE", name="pool5", global_pooling=True)
    x = n.layer("Dropout", "pool5/drop", [x], [x])[0]
    n.softmax(n.fc(x, cin, 1000 // width_div, name="loss3/classifier"))
    return n


def squeezenet(width_div: int = 1, image: int = 227, seed: int = 0) -> CaffeNet:
    n, w = CaffeNet("squeezenet", seed), lambda c: max(c // width_div, 2)
    x = n.input("data", (1, 3, image, image))
    x = n.relu(n.conv(x, 3, w(64), 3, 2, name="conv1"))
    x = n.pool(x, 3, 2, name="pool1")
    cin = w(64)
    for i, (s, e) in enumerate(((16, 64), (16, 64), (32, 128), (32, 128), (48, 192), (48, 192),
                                (64, 256), (64, 256)), 2):
        sq = n.relu(n.conv(x, cin, w(s), 1, name=f"fire{i}/squeeze1x1"))
        a = n.relu(n.conv(sq, w(s), w(e), 1, name=f"fire{i}/expand1x1"))
        b = n.relu(n.conv(sq, w(s), w(e), 3, pad=1, name=f"fire{i}/expand3x3"))
        x = n.layer("Concat", f"fire{i}/concat", [a, b])[0]
        cin = 2 * w(e)
        if i in (3, 5):
            x = n.pool(x, 3, 2, name=f"pool{i}")
    x = n.layer("Dropout", "drop9", [x], [x])[0]
    x = n.relu(n.conv(x, cin, 1000 // width_div, 1, name="conv10"))
    x = n.pool(x, 0, 0, method="AVE", name="pool10", global_pooling=True)
    n.softmax(x)
    return n


def resnet50(width_div: int = 1, image: int = 224, seed: int = 0, blocks=(3, 4, 6, 3),
             stride_on_3x3: bool = False) -> CaffeNet:
    """Caffe ResNet-50 (He et al.'s deploy prototxt: stride on the first 1x1, BatchNorm + Scale
    after every convolution, Eltwise SUM shortcuts); stride_on_3x3 gives torchvision's v1.5
    layout of bench/models/resnet50.py."""
    n, w = CaffeNet("resnet50", seed), lambda c: max(c // width_div, 2)
    x = n.input("data", (1, 3, image, image), style="input_dim")
    x = n.conv(x, 3, w(64), 7, 2, 3, name="conv1", bias=False)
    x = n.relu(n.bn_scale(x, w(64), "conv1"), name="conv1_relu")
    x = n.pool(x, 3, 2, name="pool1")
    cin = w(64)
    for stage, (planes, reps) in enumerate(zip((64, 128, 256, 512), blocks), 2):
        for b in range(reps):
            name = f"res{stage}{chr(ord('a') + b)}"
            stride = 2 if b == 0 and stage > 2 else 1
            p, out = w(planes), w(planes * 4)
            shortcut = x
            if b == 0:
                shortcut = n.bn_scale(n.conv(x, cin, out, 1, stride, name=f"{name}_branch1",
                                             bias=False), out, f"{name}_branch1")
            s1, s3 = (1, stride) if stride_on_3x3 else (stride, 1)
            y = n.conv(x, cin, p, 1, s1, name=f"{name}_branch2a", bias=False)
            y = n.relu(n.bn_scale(y, p, f"{name}_branch2a"), name=f"{name}_branch2a_relu")
            y = n.conv(y, p, p, 3, s3, 1, name=f"{name}_branch2b", bias=False)
            y = n.relu(n.bn_scale(y, p, f"{name}_branch2b"), name=f"{name}_branch2b_relu")
            y = n.conv(y, p, out, 1, name=f"{name}_branch2c", bias=False)
            y = n.bn_scale(y, out, f"{name}_branch2c")
            x = n.layer("Eltwise", name, [shortcut, y])[0]
            x = n.relu(x, name=f"{name}_relu")
            cin = out
    x = n.pool(x, 0, 0, method="AVE", name="pool5", global_pooling=True)
    n.softmax(n.fc(x, cin, 1000 // width_div, name="fc1000"))
    return n


def mobilenet(width_div: int = 1, image: int = 224, seed: int = 0) -> CaffeNet:
    """MobileNet v1: depthwise 3x3 as grouped convolution (group = channels) + BN/Scale."""
    n, w = CaffeNet("mobilenet", seed), lambda c: max(c // width_div, 2)
    x = n.input("data", (1, 3, image, image))
    x = n.relu(n.bn_scale(n.conv(x, 3, w(32), 3, 2, 1, name="conv1", bias=False), w(32),
                          "conv1"), name="relu1")
    cin = w(32)
    plan = ((64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), (512, 1), (1024, 2),
            (1024, 1))
    for i, (cout, stride) in enumerate(plan, 2):
        x = n.conv(x, cin, cin, 3, stride, 1, group=cin, name=f"conv{i}_dw", bias=False)
        x = n.relu(n.bn_scale(x, cin, f"conv{i}_dw"), name=f"relu{i}_dw")
        x = n.conv(x, cin, w(cout), 1, name=f"conv{i}_sep", bias=False)
        x = n.relu(n.bn_scale(x, w(cout), f"conv{i}_sep"), name=f"relu{i}_sep")
        cin = w(cout)
    x = n.pool(x, 0, 0, method="AVE", name="pool6", global_pooling=True)
    x = n.conv(x, cin, 1000 // width_div, 1, name="fc7")
    n.layer("Flatten", "flatten", [x])
    n.softmax("flatten")
    return n


def ssd_head(width_div: int = 1, image: int = 64, seed: int = 0, keep_top_k: int = 20,
             detection_type: str = "DetectionOutput") -> CaffeNet:
    """Two feature maps with Normalize, loc/conf heads (Permute + Flatten + Concat), PriorBox,
    Softmax over classes and the detection output."""
    n, w = CaffeNet("ssd_head", seed), lambda c: max(c // width_div, 4)
    classes = 5
    data = n.input("data", (1, 3, image, image))
    f1 = n.relu(n.conv(data, 3, w(32), 3, 2, 1, name="conv1"))
    f1 = n.layer("Normalize", "conv1_norm", [f1], blobs=[n.rng.uniform(5, 20, w(32))
                 .astype(np.float32)], norm_param={"across_spatial": False,
                                                   "channel_shared": False})[0]
    f2 = n.relu(n.conv(f1, w(32), w(64), 3, 2, 1, name="conv2"))
    locs, confs, priors = [], [], []
    for k, (f, c, size) in enumerate(((f1, w(32), 8.0), (f2, w(64), 20.0))):
        num_priors = 2 + 2      # min, max, aspect ratio 2 and 1/2
        loc = n.conv(f, c, num_priors * 4, 3, 1, 1, name=f"mbox{k}_loc", std=0.02)
        loc = n.layer("Permute", f"mbox{k}_loc_perm", [loc], permute_param={"order":
                                                                              [0, 2, 3, 1]})[0]
        locs.append(n.layer("Flatten", f"mbox{k}_loc_flat", [loc])[0])
        conf = n.conv(f, c, num_priors * classes, 3, 1, 1, name=f"mbox{k}_conf", std=0.05)
        conf = n.layer("Permute", f"mbox{k}_conf_perm", [conf], permute_param={"order":
                                                                                 [0, 2, 3, 1]})[0]
        confs.append(n.layer("Flatten", f"mbox{k}_conf_flat", [conf])[0])
        priors.append(n.layer("PriorBox", f"mbox{k}_priorbox", [f, data], prior_box_param={
            "min_size": [size], "max_size": [size * 2], "aspect_ratio": [2.0], "flip": True,
            "clip": False, "variance": [0.1, 0.1, 0.2, 0.2], "offset": 0.5})[0])
    loc = n.layer("Concat", "mbox_loc", locs, concat_param={"axis": 1})[0]
    conf = n.layer("Concat", "mbox_conf", confs, concat_param={"axis": 1})[0]
    prior = n.layer("Concat", "mbox_priorbox", priors, concat_param={"axis": 2})[0]
    conf = n.layer("Reshape", "mbox_conf_reshape", [conf],
                   reshape_param={"shape": {"dim": [0, -1, classes]}})[0]
    conf = n.layer("Softmax", "mbox_conf_softmax", [conf], softmax_param={"axis": 2})[0]
    conf = n.layer("Flatten", "mbox_conf_flatten", [conf])[0]
    n.layer(detection_type, "detection_out", [loc, conf, prior], detection_output_param={
        "num_classes": classes, "share_location": True, "background_label_id": 0,
        "nms_param": {"nms_threshold": 0.45, "top_k": 100}, "code_type": 2,
        "keep_top_k": keep_top_k, "confidence_threshold": 0.01})
    return n


NETS = {"alexnet": alexnet, "vgg16": vgg16, "googlenet": googlenet, "squeezenet": squeezenet,
        "resnet50": resnet50, "mobilenet": mobilenet, "ssd_head": ssd_head}
