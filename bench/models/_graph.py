"""A small graph builder shared by the model generators.

Each generator describes its network as calls on ``GraphBuilder``: ``node`` appends one ONNX node
and returns its output name, ``const`` adds an initializer. Names are derived from a scope prefix
and a per-prefix counter, so the same build arguments always give byte-identical models.

Weights are drawn from one ``numpy.random.Generator`` seeded by the caller. The convolution
helpers keep a running estimate of the activations' second moment so that batch-norm statistics
can be set to what a trained network would hold: each BatchNormalization then sees inputs of
roughly the variance its running statistics describe, and activations neither explode nor vanish
across many layers.
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
    """A tensor flowing through a CNN: its name, channel count and estimated E[x**2]."""

    __slots__ = ("name", "channels", "msq")

    def __init__(self, name: str, channels: int, msq: float) -> None:
        self.name = name
        self.channels = channels
        self.msq = msq


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

    def node_outputs(self, op_type: str, inputs: list[str], name: str, n_out: int,
                     **attrs: object) -> list[str]:
        """Append one node with ``n_out`` outputs named ``<name>``, ``<name>:1``, ..."""
        node_name = self.fresh(name)
        outputs = [node_name if i == 0 else f"{node_name}:{i}" for i in range(n_out)]
        self.nodes.append(helper.make_node(op_type, inputs, outputs, name=node_name, **attrs))
        return outputs

    # -- random weights -----------------------------------------------------------------------

    def normal(self, shape: tuple[int, ...], std: float) -> np.ndarray:
        return (self.rng.standard_normal(shape, dtype=np.float32) * np.float32(std))

    def uniform(self, shape: tuple[int, ...], low: float, high: float) -> np.ndarray:
        return self.rng.uniform(low, high, shape).astype(np.float32)

    # -- CNN building blocks ------------------------------------------------------------------

    def conv(self, x: Act, out_ch: int, kernel: int, stride: int, name: str,
             group: int = 1, bias: bool = False) -> Act:
        """Conv with He-normal weights (``std = sqrt(2 / fan_in)``), 'same'-style padding."""
        fan_in = (x.channels // group) * kernel * kernel
        w = self.const(f"{name}.weight",
                       self.normal((out_ch, x.channels // group, kernel, kernel),
                                   math.sqrt(2.0 / fan_in)))
        inputs = [x.name, w]
        if bias:
            inputs.append(self.const(f"{name}.bias", np.zeros(out_ch, np.float32)))
        pad = kernel // 2
        out = self.node("Conv", inputs, name, kernel_shape=[kernel, kernel],
                        strides=[stride, stride], pads=[pad, pad, pad, pad],
                        dilations=[1, 1], group=group)
        # Var of a He-normal conv output is 2 * E[x**2] of its input.
        return Act(out, out_ch, 2.0 * x.msq)

    def batchnorm(self, x: Act, name: str, gamma: tuple[float, float] = (0.8, 1.2)) -> Act:
        """Inference BatchNormalization with statistics matching the estimated input scale.

        ``running_var`` is the estimated variance jittered per channel, ``running_mean`` a small
        offset of it, ``scale`` uniform in ``gamma`` and ``bias`` a small normal: the output is
        then close to ``N(bias, scale**2)`` per channel, as in a trained network.
        """
        c = x.channels
        var = np.float32(x.msq) * self.uniform((c,), 0.7, 1.4)
        mean = self.normal((c,), 0.1) * np.sqrt(var)
        scale = self.uniform((c,), *gamma)
        bias = self.normal((c,), 0.1)
        params = [self.const(f"{name}.{p}", v)
                  for p, v in (("weight", scale), ("bias", bias),
                               ("running_mean", mean), ("running_var", var))]
        out = self.node("BatchNormalization", [x.name, *params], name, epsilon=1e-5,
                        momentum=0.9)
        msq = float(np.mean(scale.astype(np.float64) ** 2 + bias.astype(np.float64) ** 2))
        return Act(out, c, msq)

    def relu(self, x: Act, name: str) -> Act:
        # Half of a symmetric distribution survives.
        return Act(self.node("Relu", [x.name], name), x.channels, 0.5 * x.msq)

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
