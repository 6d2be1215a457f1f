"""A BERT-base-style encoder with random weights, in the shape transformers' ONNX export has.

Inputs ``input_ids`` and ``attention_mask`` (int64 [batch, seq]); output ``last_hidden_state``
(float32 [batch, seq, hidden]).

- Embeddings: Gather of the word table by ``input_ids`` + Gather of the position table by a
  constant ``position_ids`` + Gather of the token-type table by constant zeros, then layer norm.
- Mask: Unsqueeze to [batch, 1, 1, seq], Cast to float, ``(1 - mask) * -10000`` (Sub, Mul).
- Each layer: Q/K/V as MatMul + Add, Reshape [0, 0, heads, head_dim] and Transpose (K to
  [batch, heads, head_dim, seq]), MatMul, Div by sqrt(head_dim), Add mask, Softmax, MatMul,
  Transpose, Reshape [0, 0, hidden], output MatMul + Add, residual Add, layer norm; FFN MatMul +
  Add, GELU as ``x * 0.5 * (1 + erf(x / sqrt(2)))`` (Div, Erf, Add, Mul, Mul), MatMul + Add,
  residual Add, layer norm.
- Layer norm: one LayerNormalization node (opset >= 17, the default) or, with
  ``layernorm="decomposed"``, ReduceMean / Sub / Pow / ReduceMean / Add / Sqrt / Div / Mul / Add.

``size="full"``: 12 layers, hidden 768, 12 heads, FFN 3072, vocab 30522, 512 positions, seq 128.
``size="ci"``: 2 layers, hidden 64, 4 heads, FFN 256, vocab 100, 16 positions, seq 8.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make ``bench.models`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402

from bench.models._graph import GraphBuilder  # noqa: E402

__all__ = ["build", "SIZES", "DEFAULT_OPSET", "LAYERNORM_MODES"]

DEFAULT_OPSET = 17
MIN_OPSET = 11
LAYERNORM_OPSET = 17
LAYERNORM_MODES = ("fused", "decomposed")
LN_EPSILON = 1e-12
MASK_VALUE = -10000.0

SIZES = {
    "full": {"layers": 12, "hidden": 768, "heads": 12, "ffn": 3072, "vocab": 30522,
             "positions": 512, "type_vocab": 2, "seq": 128},
    "ci": {"layers": 2, "hidden": 64, "heads": 4, "ffn": 256, "vocab": 100,
           "positions": 16, "type_vocab": 2, "seq": 8},
}


class _Encoder:
    """Emits the encoder's nodes into a ``GraphBuilder`` for one opset and layer-norm form."""

    def __init__(self, g: GraphBuilder, opset: int, layernorm: str, hidden: int) -> None:
        self.g = g
        self.opset = opset
        self.layernorm_mode = layernorm
        self.hidden = hidden

    def scalar(self, value: float) -> str:
        return self.g.shared_const("const", np.array(value, np.float32))

    def int64s(self, values: list[int]) -> str:
        return self.g.shared_const("const_i64", np.array(values, np.int64))

    def linear(self, x: str, in_f: int, out_f: int, name: str) -> str:
        """MatMul by a [in, out] weight (``std = sqrt(1 / in)``) then Add of the bias."""
        g = self.g
        w = g.const(f"{name}.weight", g.normal((in_f, out_f), math.sqrt(1.0 / in_f)))
        b = g.const(f"{name}.bias", g.normal((out_f,), 0.02))
        y = g.node("MatMul", [x, w], f"{name}.matmul")
        return g.node("Add", [y, b], f"{name}.add")

    def unsqueeze(self, x: str, axes: list[int], name: str) -> str:
        if self.opset >= 13:
            return self.g.node("Unsqueeze", [x, self.int64s(axes)], name)
        return self.g.node("Unsqueeze", [x], name, axes=axes)

    def reduce_mean(self, x: str, name: str) -> str:
        if self.opset >= 18:
            return self.g.node("ReduceMean", [x, self.int64s([-1])], name, keepdims=1)
        return self.g.node("ReduceMean", [x], name, axes=[-1], keepdims=1)

    def layernorm(self, x: str, name: str, out_name: str | None = None) -> str:
        g = self.g
        gamma = g.const(f"{name}.weight", g.uniform((self.hidden,), 0.8, 1.2))
        beta = g.const(f"{name}.bias", g.normal((self.hidden,), 0.05))
        if self.layernorm_mode == "fused":
            return g.node("LayerNormalization", [x, gamma, beta], name, out_name, axis=-1,
                          epsilon=LN_EPSILON)
        mean = self.reduce_mean(x, f"{name}.mean")
        centred = g.node("Sub", [x, mean], f"{name}.sub")
        square = g.node("Pow", [centred, self.scalar(2.0)], f"{name}.pow")
        var = self.reduce_mean(square, f"{name}.var")
        std = g.node("Sqrt", [g.node("Add", [var, self.scalar(LN_EPSILON)], f"{name}.add_eps")],
                     f"{name}.sqrt")
        normed = g.node("Div", [centred, std], f"{name}.div")
        scaled = g.node("Mul", [normed, gamma], f"{name}.mul")
        return g.node("Add", [scaled, beta], f"{name}.add", out_name)

    def gelu(self, x: str, name: str) -> str:
        g = self.g
        e = g.node("Erf", [g.node("Div", [x, self.scalar(math.sqrt(2.0))], f"{name}.div")],
                   f"{name}.erf")
        one_plus = g.node("Add", [e, self.scalar(1.0)], f"{name}.add")
        return g.node("Mul", [g.node("Mul", [x, one_plus], f"{name}.mul"), self.scalar(0.5)],
                      f"{name}.mul_half")

    def attention(self, x: str, mask_bias: str, heads: int, name: str) -> str:
        g, h = self.g, self.hidden
        head_dim = h // heads
        split = self.int64s([0, 0, heads, head_dim])

        def project(part: str, perm: list[int]) -> str:
            y = self.linear(x, h, h, f"{name}.self.{part}")
            y = g.node("Reshape", [y, split], f"{name}.self.{part}.reshape")
            return g.node("Transpose", [y], f"{name}.self.{part}.transpose", perm=perm)

        q = project("query", [0, 2, 1, 3])
        k = project("key", [0, 2, 3, 1])
        v = project("value", [0, 2, 1, 3])
        scores = g.node("MatMul", [q, k], f"{name}.self.scores")
        scores = g.node("Div", [scores, self.scalar(math.sqrt(head_dim))], f"{name}.self.scale")
        scores = g.node("Add", [scores, mask_bias], f"{name}.self.mask")
        probs = g.node("Softmax", [scores], f"{name}.self.softmax", axis=-1)
        ctx = g.node("MatMul", [probs, v], f"{name}.self.context")
        ctx = g.node("Transpose", [ctx], f"{name}.self.context.transpose", perm=[0, 2, 1, 3])
        ctx = g.node("Reshape", [ctx, self.int64s([0, 0, h])], f"{name}.self.context.reshape")
        out = self.linear(ctx, h, h, f"{name}.output.dense")
        out = g.node("Add", [out, x], f"{name}.output.residual")
        return self.layernorm(out, f"{name}.output.LayerNorm")

    def ffn(self, x: str, ffn: int, name: str, out_name: str | None) -> str:
        g, h = self.g, self.hidden
        y = self.gelu(self.linear(x, h, ffn, f"{name}.intermediate.dense"),
                      f"{name}.intermediate.gelu")
        y = self.linear(y, ffn, h, f"{name}.output.dense")
        y = g.node("Add", [y, x], f"{name}.output.residual")
        return self.layernorm(y, f"{name}.output.LayerNorm", out_name)


def build(size: str = "ci", batch: int = 1, opset: int = DEFAULT_OPSET,
          layernorm: str | None = None, seq: int | str | None = None) -> onnx.ModelProto:
    """BERT encoder: ``input_ids``, ``attention_mask`` -> ``last_hidden_state``.

    ``layernorm`` is ``"fused"`` (one LayerNormalization node, needs opset >= 17) or
    ``"decomposed"``; by default fused when the opset allows it. ``seq`` overrides the
    size's sequence length (at most its position count).
    """
    if size not in SIZES:
        raise ValueError(f"size must be one of {sorted(SIZES)}, got {size!r}")
    if opset < MIN_OPSET:
        raise ValueError(f"opset must be >= {MIN_OPSET}, got {opset}")
    if layernorm is None:
        layernorm = "fused" if opset >= LAYERNORM_OPSET else "decomposed"
    if layernorm not in LAYERNORM_MODES:
        raise ValueError(f"layernorm must be one of {LAYERNORM_MODES}, got {layernorm!r}")
    if layernorm == "fused" and opset < LAYERNORM_OPSET:
        raise ValueError(f"LayerNormalization needs opset >= {LAYERNORM_OPSET}, got {opset}")
    cfg = dict(SIZES[size])
    seq_len = int(seq) if seq is not None else cfg["seq"]
    if not 1 <= seq_len <= cfg["positions"]:
        raise ValueError(f"seq must be in 1..{cfg['positions']}, got {seq_len}")
    hidden = cfg["hidden"]

    g = GraphBuilder()
    enc = _Encoder(g, opset, layernorm, hidden)

    word = g.const("embeddings.word_embeddings.weight", g.normal((cfg["vocab"], hidden), 0.02))
    pos = g.const("embeddings.position_embeddings.weight",
                  g.normal((cfg["positions"], hidden), 0.02))
    types = g.const("embeddings.token_type_embeddings.weight",
                    g.normal((cfg["type_vocab"], hidden), 0.02))
    position_ids = g.const("embeddings.position_ids", np.arange(seq_len, dtype=np.int64)[None])
    type_ids = g.const("embeddings.token_type_ids", np.zeros((1, seq_len), np.int64))
    x = g.node("Gather", [word, "input_ids"], "embeddings.word", axis=0)
    x = g.node("Add", [x, g.node("Gather", [types, type_ids], "embeddings.token_type", axis=0)],
               "embeddings.add_token_type")
    x = g.node("Add", [x, g.node("Gather", [pos, position_ids], "embeddings.position", axis=0)],
               "embeddings.add_position")
    x = enc.layernorm(x, "embeddings.LayerNorm")

    mask = enc.unsqueeze("attention_mask", [1, 2], "mask.unsqueeze")
    mask = g.node("Cast", [mask], "mask.cast", to=TensorProto.FLOAT)
    mask = g.node("Sub", [enc.scalar(1.0), mask], "mask.invert")
    mask_bias = g.node("Mul", [mask, enc.scalar(MASK_VALUE)], "mask.bias")

    for i in range(cfg["layers"]):
        name = f"encoder.layer.{i}"
        x = enc.attention(x, mask_bias, cfg["heads"], f"{name}.attention")
        last = i == cfg["layers"] - 1
        x = enc.ffn(x, cfg["ffn"], name, "last_hidden_state" if last else None)

    ids = [helper.make_tensor_value_info(n, TensorProto.INT64, [batch, seq_len])
           for n in ("input_ids", "attention_mask")]
    out = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT,
                                        [batch, seq_len, hidden])
    return g.model(f"bert_{size}", ids, [out], opset,
                   doc=f"BERT encoder ({size}, layernorm={layernorm}), random weights")


if __name__ == "__main__":
    from bench.models._cli import main

    sys.exit(main(build, "Write a BERT encoder ONNX model with random weights.", DEFAULT_OPSET))
