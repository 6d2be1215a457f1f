"""A small graph builder shared by the model generators.

Each generator describes its network as calls on ``GraphBuilder``: ``node`` appends one ONNX node
and returns its output name, ``const`` adds an initializer. Names are derived from a scope prefix
and a per-prefix counter, so the same build arguments always give byte-identical models.

Weights are drawn from one ``numpy.random.Generator`` with a fixed seed. The CNN helpers also
push a small calibration batch through each layer in numpy while the graph is built, and
BatchNormalization takes its running statistics from it, as a trained network's come from its
data: every BN then sees inputs of the variance its statistics describe, and activations neither
explode nor vanish across 50 layers.
"""

from __future__ import annotations

import math

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

__all__ = ["GraphBuilder", "Act", "SEED", "float_input"]

SEED = 20240601
"""Fixed seed of every generator: the same arguments give the same weights."""


class Act:
    """A tensor flowing through a CNN: its name, channel count and calibration value.

    ``value`` is what the tensor holds for the builder's calibration input (a small batch of
    standard-normal images), computed in numpy while the graph is built. Batch-norm layers take
    their running statistics from it, as a trained network's would come from its data.
    """

    __slots__ = ("name", "channels", "value")

    def __init__(self, name: str, channels: int, value: np.ndarray) -> None:
        self.name = name
        self.channels = channels
        self.value = value


class GraphBuilder:
    """Accumulates nodes and initializers of one graph with deterministic names."""

    def __init__(self, seed: int = SEED) -> None:
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self._counts: dict[str, int] = {}
        self._consts: dict[tuple[str, bytes, tuple[int, ...]], str] = {}

    # -- naming -------------------------------------------------------------------------------

    def fresh(self, base: str) -> str:
        """A new unique name starting with ``base``."""
        n = self._counts.get(base, 0)
        self._counts[base] = n + 1
        return base if n == 0 else f"{base}_{n}"

    # -- graph content ------------------------------------------------------------------------

    def const(self, base: str, value: np.ndarray) -> str:
        """Add ``value`` as an initializer and return its name."""
        name = self.fresh(base)
        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def shared_const(self, base: str, value: np.ndarray) -> str:
        """Like ``const`` but reuses one initializer for equal small constants."""
        arr = np.ascontiguousarray(value)
        key = (arr.dtype.str, arr.tobytes(), arr.shape)
        if key not in self._consts:
            self._consts[key] = self.const(base, arr)
        return self._consts[key]

    def node(self, op_type: str, inputs: list[str], name: str, out_name: str | None = None,
             **attrs: object) -> str:
        """Append one single-output node and return its output name.

        ``name`` becomes the node name and, unless ``out_name`` is given, its output name.
        """
        node_name = self.fresh(name)
        output = out_name or node_name
        self.nodes.append(helper.make_node(op_type, inputs, [output], name=node_name, **attrs))
        return output

    # -- random weights -----------------------------------------------------------------------

    def normal(self, shape: tuple[int, ...], std: float) -> np.ndarray:
        return (self.rng.standard_normal(shape, dtype=np.float32) * np.float32(std))

    def uniform(self, shape: tuple[int, ...], low: float, high: float) -> np.ndarray:
        return self.rng.uniform(low, high, shape).astype(np.float32)

    # -- CNN building blocks ------------------------------------------------------------------

    def calibration_images(self, image: int, channels: int = 3) -> np.ndarray:
        """Standard-normal calibration batch, large enough for >= 64 positions at stride 32."""
        count = max(2, -(-64 // max(1, (image // 32) ** 2)))
        rng = np.random.default_rng(SEED + 1)
        return rng.standard_normal((count, channels, image, image), dtype=np.float32)

    def conv(self, x: Act, out_ch: int, kernel: int, stride: int, name: str,
             group: int = 1, bias: bool = False) -> Act:
        """Conv with He-normal weights (``std = sqrt(2 / fan_in)``), 'same'-style padding."""
        fan_in = (x.channels // group) * kernel * kernel
        weight = self.normal((out_ch, x.channels // group, kernel, kernel),
                             math.sqrt(2.0 / fan_in))
        inputs = [x.name, self.const(f"{name}.weight", weight)]
        if bias:
            inputs.append(self.const(f"{name}.bias", np.zeros(out_ch, np.float32)))
        pad = kernel // 2
        out = self.node("Conv", inputs, name, kernel_shape=[kernel, kernel],
                        strides=[stride, stride], pads=[pad, pad, pad, pad],
                        dilations=[1, 1], group=group)
        return Act(out, out_ch, _conv_ref(x.value, weight, stride, pad, group))

    def batchnorm(self, x: Act, name: str, gamma: tuple[float, float] = (0.8, 1.2)) -> Act:
        """Inference BatchNormalization with running statistics taken from calibration.

        ``running_mean``/``running_var`` are the per-channel statistics of the calibration
        value, jittered a little; ``scale`` is uniform in ``gamma`` and ``bias`` a small normal,
        so the output is close to ``N(bias, scale**2)`` per channel as in a trained network.
        """
        c = x.channels
        axes = (0, 2, 3)
        mean = x.value.mean(axis=axes) + self.normal((c,), 0.05) * x.value.std(axis=axes)
        var = x.value.var(axis=axes) * self.uniform((c,), 0.8, 1.25) + np.float32(1e-3)
        scale = self.uniform((c,), *gamma)
        bias = self.normal((c,), 0.1)
        params = [self.const(f"{name}.{p}", v.astype(np.float32))
                  for p, v in (("weight", scale), ("bias", bias),
                               ("running_mean", mean), ("running_var", var))]
        out = self.node("BatchNormalization", [x.name, *params], name, epsilon=1e-5,
                        momentum=0.9)
        bc = (1, c, 1, 1)
        y = ((x.value - mean.reshape(bc)) / np.sqrt(var.reshape(bc) + 1e-5) * scale.reshape(bc)
             + bias.reshape(bc))
        return Act(out, c, y.astype(np.float32))

    def relu(self, x: Act, name: str) -> Act:
        return Act(self.node("Relu", [x.name], name), x.channels, np.maximum(x.value, 0))

    def relu6(self, x: Act, name: str) -> Act:
        """ReLU6 as opset-11+ Clip with its bounds as (shared) scalar initializers."""
        lo = self.shared_const("clip_min", np.array(0.0, np.float32))
        hi = self.shared_const("clip_max", np.array(6.0, np.float32))
        return Act(self.node("Clip", [x.name, lo, hi], name), x.channels,
                   np.clip(x.value, 0.0, 6.0))

    def add(self, a: Act, b: Act, name: str) -> Act:
        return Act(self.node("Add", [a.name, b.name], name), a.channels, a.value + b.value)

    def maxpool(self, x: Act, kernel: int, stride: int, name: str) -> Act:
        pad = kernel // 2
        out = self.node("MaxPool", [x.name], name, kernel_shape=[kernel, kernel],
                        strides=[stride, stride], pads=[pad, pad, pad, pad])
        padded = np.pad(x.value, ((0, 0), (0, 0), (pad, pad), (pad, pad)),
                        constant_values=-np.inf)
        win = _windows(padded, kernel, stride)
        return Act(out, x.channels, win.max(axis=(4, 5)))

    def fc(self, x: str, in_f: int, out_f: int, name: str,
           out_name: str | None = None) -> str:
        """Gemm with ``transB=1`` (PyTorch Linear layout), weights ``std = sqrt(1 / in_f)``."""
        w = self.const(f"{name}.weight", self.normal((out_f, in_f), math.sqrt(1.0 / in_f)))
        b = self.const(f"{name}.bias", self.normal((out_f,), 0.01))
        return self.node("Gemm", [x, w, b], name, out_name, alpha=1.0, beta=1.0, transB=1)

    # -- model assembly -----------------------------------------------------------------------

    def model(self, graph_name: str, inputs: list[onnx.ValueInfoProto],
              outputs: list[onnx.ValueInfoProto], opset: int,
              doc: str = "") -> onnx.ModelProto:
        graph = helper.make_graph(self.nodes, graph_name, inputs, outputs, self.initializers,
                                  doc_string=doc)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                                  producer_name="pyatc-bench", producer_version="1")
        # Lowest IR version that carries this opset, so older runtimes load the file.
        model.ir_version = _ir_version_for(opset)
        return model


def _ir_version_for(opset: int) -> int:
    """Lowest IR version whose release supports ``opset`` of the default domain."""
    best = None
    for _release, ir, ai_onnx, *_rest in helper.VERSION_TABLE:
        if ai_onnx >= opset and (best is None or ir < best):
            best = ir
    return best if best is not None else onnx.IR_VERSION


def float_input(name: str, shape: list[int]) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def _windows(x: np.ndarray, kernel: int, stride: int) -> np.ndarray:
    """[N, C, OH, OW, K, K] view of the ``kernel`` windows of an already padded ``x``."""
    win = np.lib.stride_tricks.sliding_window_view(x, (kernel, kernel), axis=(2, 3))
    return win[:, :, ::stride, ::stride]


def _conv_ref(x: np.ndarray, w: np.ndarray, stride: int, pad: int, group: int) -> np.ndarray:
    """Plain numpy convolution (NCHW, OIHW) used only for calibration."""
    k = w.shape[-1]
    padded = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    win = _windows(padded, k, stride)
    n, c, oh, ow = win.shape[:4]
    if group == 1:
        out = np.tensordot(win, w, axes=([1, 4, 5], [1, 2, 3]))  # N, OH, OW, O
        return np.ascontiguousarray(out.transpose(0, 3, 1, 2), dtype=np.float32)
    if group == c and w.shape[0] == c:  # depthwise
        return np.einsum("nchwij,cij->nchw", win, w[:, 0], optimize=True).astype(np.float32)
    cg, og = c // group, w.shape[0] // group
    win = win.reshape(n, group, cg, oh, ow, k, k)
    wg = w.reshape(group, og, cg, k, k)
    out = np.einsum("ngchwij,gocij->ngohw", win, wg, optimize=True)
    return out.reshape(n, group * og, oh, ow).astype(np.float32)
