"""A generated decoder-only transformer in ONNX with its weights in one external-data file,
written tensor by tensor (the weights never sit in memory together).  Used by
bench/bench_large_model.py and tests/om/test_external_weights.py.

    write_decoder(directory, Shape(d_model=256, layers=2, heads=4, vocab=512, seq=8))

Inputs: `input_ids` int64 [1, seq].  Output: `logits` float32 [1, seq, vocab].  Per layer:
LayerNorm, q/k/v/o projections with bias, causal softmax attention, LayerNorm, a GELU MLP of
4 * d_model, residual adds.  Token and position embeddings, a final LayerNorm and an LM head.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import TensorProto, helper

__all__ = ["Shape", "write_decoder", "weight_bytes", "shape_for_bytes", "DATA_NAME"]

DATA_NAME = "model.onnx.data"


@dataclass(frozen=True)
class Shape:
    d_model: int
    layers: int
    heads: int
    vocab: int
    seq: int = 8

    @property
    def label(self) -> str:
        return f"d{self.d_model}-l{self.layers}-v{self.vocab}"


def _tensors(s: Shape):
    """(name, shape, init scale) of every weight, in file order."""
    d, f = s.d_model, 4 * s.d_model
    yield "wte", (s.vocab, d), 0.02
    yield "wpe", (s.seq, d), 0.02
    for i in range(s.layers):
        p = f"h{i}."
        yield p + "ln1.g", (d,), None
        yield p + "ln1.b", (d,), 0.0
        for w in ("q", "k", "v", "o"):
            yield p + w + ".w", (d, d), 1 / math.sqrt(d)
            yield p + w + ".b", (d,), 0.02
        yield p + "ln2.g", (d,), None
        yield p + "ln2.b", (d,), 0.0
        yield p + "fc.w", (d, f), 1 / math.sqrt(d)
        yield p + "fc.b", (f,), 0.02
        yield p + "proj.w", (f, d), 1 / math.sqrt(f)
        yield p + "proj.b", (d,), 0.02
    yield "lnf.g", (d,), None
    yield "lnf.b", (d,), 0.0
    yield "head.w", (d, s.vocab), 1 / math.sqrt(d)


def weight_bytes(s: Shape) -> int:
    return sum(4 * math.prod(shape) for _, shape, _ in _tensors(s))


def shape_for_bytes(target: int, seq: int = 8) -> Shape:
    """A shape whose weights come close to `target` bytes (d_model a multiple of 64)."""
    layers = 8 if target >= 1 << 30 else 4 if target >= 64 << 20 else 2
    d = 64
    while weight_bytes(Shape(d + 64, layers, 8, 8192, seq)) <= target:
        d += 64
    return Shape(d, layers, max(1, d // 128), 8192, seq)


def _values(rng, shape, scale) -> np.ndarray:
    if scale is None:
        return np.ones(shape, np.float32)
    if scale == 0.0:
        return np.zeros(shape, np.float32)
    out = rng.random(shape, dtype=np.float32)
    out -= 0.5
    out *= 2 * math.sqrt(3) * scale          # uniform with that standard deviation
    return out


def _initializer(name, shape, offset, length) -> TensorProto:
    t = TensorProto()
    t.name, t.data_type = name, TensorProto.FLOAT
    t.dims.extend(shape)
    t.data_location = TensorProto.EXTERNAL
    for key, value in (("location", DATA_NAME), ("offset", offset), ("length", length)):
        entry = t.external_data.add()
        entry.key, entry.value = key, str(value)
    return t


def _const(name, array) -> TensorProto:
    return onnx.numpy_helper.from_array(np.asarray(array), name)


def _graph_nodes(s: Shape):
    d, h = s.d_model, s.heads
    dh = d // h
    nodes, consts = [], [
        _const("pos_ids", np.arange(s.seq, dtype=np.int64)),
        _const("heads_shape", np.array([1, s.seq, h, dh], np.int64)),
        _const("model_shape", np.array([1, s.seq, d], np.int64)),
        _const("scale", np.array(1 / math.sqrt(dh), np.float32)),
        _const("mask", np.triu(np.full((s.seq, s.seq), -1e4, np.float32), 1)),
        _const("half", np.array(0.5, np.float32)), _const("one", np.array(1.0, np.float32)),
        _const("rsqrt2", np.array(1 / math.sqrt(2), np.float32)),
    ]

    def node(op, ins, out, **attrs):
        nodes.append(helper.make_node(op, ins, [out], name=out, **attrs))
        return out

    def ln(x, p):
        return node("LayerNormalization", [x, p + ".g", p + ".b"], p + ".out", axis=-1,
                    epsilon=1e-5)

    def linear(x, p, out):
        return node("Add", [node("MatMul", [x, p + ".w"], out + ".mm"), p + ".b"], out)

    x = node("Add", [node("Gather", ["wte", "input_ids"], "tok"),
                     node("Gather", ["wpe", "pos_ids"], "pos")], "emb")
    for i in range(s.layers):
        p = f"h{i}."
        a = ln(x, p + "ln1")
        heads = {}
        for w in ("q", "k", "v"):
            y = linear(a, p + w, p + w + ".y")
            y = node("Reshape", [y, "heads_shape"], p + w + ".r")
            heads[w] = node("Transpose", [y], p + w + ".t", perm=[0, 2, 1, 3])
        kt = node("Transpose", [heads["k"]], p + "kT", perm=[0, 1, 3, 2])
        sc = node("Mul", [node("MatMul", [heads["q"], kt], p + "qk"), "scale"], p + "qk.s")
        pr = node("Softmax", [node("Add", [sc, "mask"], p + "qk.m")], p + "att", axis=-1)
        ctx = node("Transpose", [node("MatMul", [pr, heads["v"]], p + "ctx")], p + "ctx.t",
                   perm=[0, 2, 1, 3])
        ctx = node("Reshape", [ctx, "model_shape"], p + "ctx.r")
        x = node("Add", [x, linear(ctx, p + "o", p + "o.y")], p + "res1")
        m = linear(ln(x, p + "ln2"), p + "fc", p + "fc.y")
        erf = node("Erf", [node("Mul", [m, "rsqrt2"], p + "g.s")], p + "g.e")
        gelu = node("Mul", [node("Mul", [m, "half"], p + "g.h"),
                            node("Add", [erf, "one"], p + "g.1")], p + "gelu")
        x = node("Add", [x, linear(gelu, p + "proj", p + "proj.y")], p + "res2")
    x = ln(x, "lnf")
    node("MatMul", [x, "head.w"], "logits")
    return nodes, consts


def write_decoder(directory: str, s: Shape, seed: int = 0) -> str:
    """Write `model.onnx` and `model.onnx.data` into `directory`; returns the model path."""
    os.makedirs(directory, exist_ok=True)
    rng = np.random.default_rng(seed)
    inits, offset = [], 0
    with open(os.path.join(directory, DATA_NAME), "wb") as f:
        for name, shape, scale in _tensors(s):
            values = _values(rng, shape, scale)
            f.write(memoryview(values).cast("B"))
            inits.append(_initializer(name, shape, offset, values.nbytes))
            offset += values.nbytes
            del values
    nodes, consts = _graph_nodes(s)
    graph = helper.make_graph(
        nodes, "decoder",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, s.seq])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, s.seq, s.vocab])],
        inits + consts)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    path = os.path.join(directory, "model.onnx")
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    return path
