"""Recurrent layers with ONNX semantics: CommonLSTM, CommonGRU (CANN's IR ops for ONNX LSTM and
GRU) and CommonRNN (ours: CANN's ONNX parser has no RNN plugin; same shape as the other two).

Layout is ONNX's layout 0 (the parser transposes layout-1 models): x [S, B, I], w [D, G*H, I],
r [D, G*H, H], b [D, 2*G*H], sequence_lens [B] (int32), initial_h / initial_c [D, B, H],
p [D, 3*H]; y [S, D, B, H], y_h / y_c [D, B, H].  G = 4 (gates i, o, f, c), 3 (z, r, h) or 1.
`clip` -1 = no clip (CANN's default); `activations` / `activation_alpha` / `activation_beta`
mean what they mean in ONNX (alphas and betas are consumed in order by the activations that
take one).  A batch entry of length L (sequence_lens) runs L steps (a reverse direction runs
its own L steps backwards); y past L is zero, and so are y_h / y_c of a length-0 entry
(onnxruntime's behaviour).  `check_attrs`, `activation_list` and `spec_of` are the one reading
of the attributes: inference, the reference kernels, the C generator and the ONNX parser use them.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ge.errors import GeError

from ._common import VT, AttrSpec, OpDef, Port, dtype_of, register, shape_of

__all__ = ["CELLS", "DIRECTIONS", "ACTIVATION_ARGS", "ACTIVATION_FUNCS", "RecurrentSpec",
           "activation_list", "check_attrs", "spec_of", "apply_activation", "check_lengths"]

FAMILY = "recurrent"

DIRECTIONS = {"forward": 1, "reverse": 1, "bidirectional": 2}

# ONNX activation name -> (takes alpha, takes beta, default alpha, default beta).  Defaults are
# onnxruntime's (LeakyRelu 0.01, HardSigmoid 0.2 / 0.5, Elu 1.0, every other one 0).
ACTIVATION_ARGS = {
    "Relu": (False, False, 0.0, 0.0), "Tanh": (False, False, 0.0, 0.0),
    "Sigmoid": (False, False, 0.0, 0.0), "Affine": (True, True, 0.0, 0.0),
    "LeakyRelu": (True, False, 0.01, 0.0), "ThresholdedRelu": (True, False, 0.0, 0.0),
    "ScaledTanh": (True, True, 0.0, 0.0), "HardSigmoid": (True, True, 0.2, 0.5),
    "Elu": (True, False, 1.0, 0.0), "Softsign": (False, False, 0.0, 0.0),
    "Softplus": (False, False, 0.0, 0.0),
}
_BY_LOWER = {name.lower(): name for name in ACTIVATION_ARGS}

_COMMON_ATTRS = (AttrSpec("activation_alpha", VT.VT_LIST_FLOAT, []),
                 AttrSpec("activation_beta", VT.VT_LIST_FLOAT, []),
                 AttrSpec("activations", VT.VT_LIST_STRING, []),
                 AttrSpec("clip", VT.VT_FLOAT, -1.0),
                 AttrSpec("direction", VT.VT_STRING, "forward"),
                 AttrSpec("hidden_size", VT.VT_INT))
_INPUTS = (Port("x"), Port("w"), Port("r"), Port("b", "optional"),
           Port("sequence_lens", "optional"), Port("initial_h", "optional"))
_LSTM_STATE = (Port("initial_c", "optional"), Port("p", "optional"))
_SLOT_NAMES = tuple(port.name for port in _INPUTS + _LSTM_STATE)


@dataclass(frozen=True)
class CellKind:
    gates: int              # G: gate blocks in w / r
    defaults: tuple         # default activations of one direction
    state_outputs: int      # y_h (+ y_c)


CELLS = {
    "CommonLSTM": CellKind(4, ("Sigmoid", "Tanh", "Tanh"), 2),
    "CommonGRU": CellKind(3, ("Sigmoid", "Tanh"), 1),
    "CommonRNN": CellKind(1, ("Tanh",), 1),
}


@dataclass(frozen=True)
class RecurrentSpec:
    """Everything a kernel needs: sizes and the resolved attributes."""
    op_type: str
    seq: int
    batch: int
    input_size: int
    hidden: int
    directions: tuple       # ("forward",) / ("reverse",) / ("forward", "reverse")
    activations: tuple      # per direction: ((name, alpha, beta), ...)
    clip: float             # <= 0: no clip
    input_forget: bool      # LSTM
    linear_before_reset: bool   # GRU

    @property
    def gates(self) -> int:
        return CELLS[self.op_type].gates


def activation_list(op_type: str, attrs: dict) -> list:
    """[(name, alpha, beta)] per direction (a list per direction), ONNX rules: the names, or
    the op's defaults; one direction's list serves both of a bidirectional layer; alphas and
    betas are consumed in order.  ValueError names what is wrong."""
    cell = CELLS[op_type]
    direction = attrs.get("direction", "forward")
    if direction not in DIRECTIONS:
        raise ValueError(f"direction {direction!r} is not one of {', '.join(DIRECTIONS)}")
    n_dir, per = DIRECTIONS[direction], len(cell.defaults)
    names = list(attrs.get("activations") or [])
    if not names:
        names = list(cell.defaults) * n_dir
    elif len(names) == per and n_dir == 2:
        names = names * 2
    elif op_type == "CommonRNN" and n_dir == 1 and len(names) == 2:
        names = names[:1]   # the ONNX RNN schema's own default lists two
    if len(names) != per * n_dir:
        raise ValueError(f"activations has {len(names)} entries; a {direction} "
                         f"{op_type[6:]} takes {per * n_dir} ({per} per direction)")
    alphas = list(attrs.get("activation_alpha") or [])
    betas = list(attrs.get("activation_beta") or [])
    resolved = []
    for raw in names:
        name = _BY_LOWER.get(str(raw).lower())
        if name is None:
            raise ValueError(f"activation {raw!r} is not one of {', '.join(ACTIVATION_ARGS)}")
        takes_a, takes_b, alpha, beta = ACTIVATION_ARGS[name]
        if takes_a and alphas:
            alpha = float(alphas.pop(0))
        if takes_b and betas:
            beta = float(betas.pop(0))
        resolved.append((name, float(alpha), float(beta)))
    return [tuple(resolved[d * per:(d + 1) * per]) for d in range(n_dir)]


def check_attrs(op_type: str, attrs: dict) -> None:
    """ValueError when the attributes cannot describe a layer (shapes aside)."""
    hidden = attrs.get("hidden_size")
    if hidden is None or int(hidden) <= 0:
        raise ValueError(f"hidden_size must be a positive integer, got {hidden}")
    clip = float(attrs.get("clip", -1.0))
    if clip != -1.0 and not clip > 0:
        raise ValueError(f"clip must be positive, got {clip}")
    activation_list(op_type, attrs)


def expected_shapes(op_type: str, attrs: dict, seq: int, batch: int, input_size: int) -> dict:
    """Input slot -> the shape ONNX requires of it (-1 where x's dim is unknown)."""
    d, h, g = DIRECTIONS[attrs["direction"]], int(attrs["hidden_size"]), CELLS[op_type].gates
    shapes = {1: (d, g * h, input_size), 2: (d, g * h, h), 3: (d, 2 * g * h), 4: (batch,),
              5: (d, batch, h)}
    if op_type == "CommonLSTM":
        shapes.update({6: (d, batch, h), 7: (d, 3 * h)})
    return shapes


def invalid(op_name: str, op_type: str, reason: str):
    raise GeError("EP0130", {"opname": op_name, "optype": op_type, "reason": reason})


def _dims_match(got, want) -> bool:
    return len(got) == len(want) and all(a < 0 or b < 0 or a == b for a, b in zip(got, want))


def infer_recurrent(ctx):
    """y [S, D, B, H], y_h (and y_c) [D, B, H]; EP0130 names the node when the attributes,
    the input shapes or constant sequence lengths do not fit together."""
    try:
        check_attrs(ctx.op_type, ctx.attrs)
    except ValueError as exc:
        invalid(ctx.op_name, ctx.op_type, str(exc))
    x = shape_of(ctx, 0)
    dt = dtype_of(ctx, 0)
    d, h = DIRECTIONS[ctx.attrs["direction"]], int(ctx.attrs["hidden_size"])
    n_out = 1 + CELLS[ctx.op_type].state_outputs
    if x is None:
        return [(None, dt)] * n_out
    if len(x) != 3:
        invalid(ctx.op_name, ctx.op_type, f"x must be [seq_length, batch, input_size], got "
                                          f"shape {list(x)}")
    seq, batch, input_size = x
    if seq == 0:
        invalid(ctx.op_name, ctx.op_type, "x has a zero-length sequence axis (seq_length 0)")
    for slot, want in expected_shapes(ctx.op_type, ctx.attrs, seq, batch, input_size).items():
        got = shape_of(ctx, slot) if slot < len(ctx.ins) else None
        if got is not None and not _dims_match(got, want):
            invalid(ctx.op_name, ctx.op_type, f"input {_SLOT_NAMES[slot]} has shape {list(got)}; "
                    f"hidden_size {h}, direction {ctx.attrs['direction']} and x "
                    f"{list(x)} require {list(want)}")
    lens = ctx.ins[4].value if len(ctx.ins) > 4 and ctx.ins[4] is not None else None
    if lens is not None and seq >= 0:
        check_lengths(ctx.op_name, ctx.op_type, np.asarray(lens), seq)
    state = (d, batch, h)
    return [((seq, d, batch, h), dt)] + [(state, dt)] * (n_out - 1)


def check_lengths(op_name: str, op_type: str, lens: np.ndarray, seq: int) -> None:
    bad = [(i, int(v)) for i, v in enumerate(lens.reshape(-1)) if not 0 <= int(v) <= seq]
    if bad:
        i, v = bad[0]
        invalid(op_name, op_type, f"sequence_lens[{i}] = {v} is outside [0, {seq}] "
                                  f"(seq_length of x)")


def spec_of(op_type: str, attrs: dict, x_shape) -> RecurrentSpec:
    direction = attrs.get("direction", "forward")
    dirs = ("forward", "reverse") if direction == "bidirectional" else (direction,)
    seq, batch, input_size = (int(v) for v in x_shape)
    return RecurrentSpec(op_type, seq, batch, input_size, int(attrs["hidden_size"]), dirs,
                         tuple(activation_list(op_type, attrs)),
                         float(attrs.get("clip", -1.0)), bool(attrs.get("input_forget", 0)),
                         bool(attrs.get("linear_before_reset", 0)))


# -- reference kernels (float32 arithmetic, like the compiled kernels) --------------------------

# ONNX activation name -> f(x, alpha, beta)
ACTIVATION_FUNCS = {
    "Relu": lambda x, a, b: np.maximum(x, 0),
    "Tanh": lambda x, a, b: np.tanh(x),
    "Sigmoid": lambda x, a, b: 1 / (1 + np.exp(-x)),
    "Affine": lambda x, a, b: a * x + b,
    "LeakyRelu": lambda x, a, b: np.where(x >= 0, x, a * x),
    "ThresholdedRelu": lambda x, a, b: np.where(x > a, x, 0),
    "ScaledTanh": lambda x, a, b: a * np.tanh(b * x),
    "HardSigmoid": lambda x, a, b: np.clip(a * x + b, 0, 1),
    "Elu": lambda x, a, b: np.where(x >= 0, x, a * (np.exp(np.minimum(x, 0)) - 1)),
    "Softsign": lambda x, a, b: x / (1 + np.abs(x)),
    "Softplus": lambda x, a, b: np.logaddexp(0, x),
}


def apply_activation(x: np.ndarray, act: tuple) -> np.ndarray:
    name, alpha, beta = act
    with np.errstate(over="ignore"):
        return ACTIVATION_FUNCS[name](x, np.float32(alpha), np.float32(beta)).astype(np.float32)


def _cell_step(spec: RecurrentSpec, acts, gates, h, c, r, rb, p):
    """One time step of every batch row: gates = x W^T + Wb (+ Rb); returns (h, c)."""
    hid = spec.hidden

    def clip(v):
        return np.clip(v, -spec.clip, spec.clip) if spec.clip > 0 else v
    if spec.op_type == "CommonRNN":
        return apply_activation(clip(gates + h @ r.T), acts[0]), c
    if spec.op_type == "CommonGRU":
        zr = gates[:, :2 * hid] + h @ r[:2 * hid].T
        z = apply_activation(clip(zr[:, :hid]), acts[0])
        rg = apply_activation(clip(zr[:, hid:]), acts[0])
        rh = r[2 * hid:]
        if spec.linear_before_reset:
            cand = gates[:, 2 * hid:] + rg * (h @ rh.T + rb[2 * hid:])
        else:
            cand = gates[:, 2 * hid:] + (rg * h) @ rh.T + rb[2 * hid:]
        cand = apply_activation(clip(cand), acts[1])
        return (1 - z) * cand + z * h, c
    g = gates + h @ r.T
    pi, po, pf = (p[:hid], p[hid:2 * hid], p[2 * hid:]) if p is not None else (0, 0, 0)
    i = apply_activation(clip(g[:, :hid] + pi * c), acts[0])
    if spec.input_forget:
        f = 1 - i
    else:
        f = apply_activation(clip(g[:, 2 * hid:3 * hid] + pf * c), acts[0])
    c_new = f * c + i * apply_activation(clip(g[:, 3 * hid:]), acts[1])
    o = apply_activation(clip(g[:, hid:2 * hid] + po * c_new), acts[0])
    return o * apply_activation(c_new, acts[2]), c_new


def kernel_recurrent(op_type: str):
    def kernel(ins, attrs):
        ins = list(ins) + [None] * (8 - len(ins))
        x, w, r, b, lens, h0, c0, p = ins
        out_dtype = x.dtype
        f32 = [None if a is None or i == 4 else np.asarray(a, np.float32)
               for i, a in enumerate(ins)]
        x, w, r, b, _, h0, c0, p = f32
        spec = spec_of(op_type, attrs, x.shape)
        hid = spec.hidden
        seq, batch = spec.seq, spec.batch
        if lens is None:
            lens = np.full(batch, seq, np.int64)
        lens = np.asarray(lens).astype(np.int64).reshape(-1)
        if np.any((lens < 0) | (lens > seq)):
            bad = int(np.flatnonzero((lens < 0) | (lens > seq))[0])
            raise ValueError(f"sequence_lens[{bad}] = {int(lens[bad])} is outside [0, {seq}]")
        n_dir, g = len(spec.directions), spec.gates
        y = np.zeros((seq, n_dir, batch, hid), np.float32)
        y_h = np.zeros((n_dir, batch, hid), np.float32)
        y_c = np.zeros((n_dir, batch, hid), np.float32)
        rows = np.arange(batch)
        for d, direction in enumerate(spec.directions):
            wb = b[d, :g * hid] if b is not None else np.zeros(g * hid, np.float32)
            rb = b[d, g * hid:] if b is not None else np.zeros(g * hid, np.float32)
            # GRU keeps Rbh apart (it sits inside or after the reset product)
            bias = wb + rb if op_type != "CommonGRU" else wb + np.concatenate(
                [rb[:2 * hid], np.zeros(hid, np.float32)])
            xw = x @ w[d].T + bias
            h = h0[d].copy() if h0 is not None else np.zeros((batch, hid), np.float32)
            c = c0[d].copy() if c0 is not None else np.zeros((batch, hid), np.float32)
            for s in range(seq):
                live = s < lens
                t = np.where(live, s if direction == "forward" else lens - 1 - s, 0)
                h_new, c_new = _cell_step(spec, spec.activations[d], xw[t, rows], h, c, r[d],
                                          rb, None if p is None else p[d])
                h = np.where(live[:, None], h_new, h).astype(np.float32)
                c = np.where(live[:, None], c_new, c).astype(np.float32)
                y[t[live], d, rows[live]] = h[live]
            done = lens > 0
            y_h[d] = np.where(done[:, None], h, 0)
            y_c[d] = np.where(done[:, None], c, 0)
        outs = [y, y_h, y_c][:1 + CELLS[op_type].state_outputs]
        return [o.astype(out_dtype) for o in outs]
    return kernel


register(OpDef("CommonLSTM", kernel_gen="recurrent",
               inputs=_INPUTS + _LSTM_STATE,
               outputs=(Port("y"), Port("y_h"), Port("y_c")),
               attrs=_COMMON_ATTRS + (AttrSpec("input_forget", VT.VT_INT, 0),),
               infer=infer_recurrent, kernel=kernel_recurrent("CommonLSTM"), family=FAMILY,
               doc="one LSTM layer, ONNX semantics (gates i, o, f, c; peepholes p)"))
register(OpDef("CommonGRU", kernel_gen="recurrent", inputs=_INPUTS,
               outputs=(Port("y"), Port("y_h")),
               attrs=_COMMON_ATTRS + (AttrSpec("linear_before_reset", VT.VT_INT, 0),),
               infer=infer_recurrent, kernel=kernel_recurrent("CommonGRU"), family=FAMILY,
               doc="one GRU layer, ONNX semantics (gates z, r, h)"))
register(OpDef("CommonRNN", kernel_gen="recurrent", inputs=_INPUTS,
               outputs=(Port("y"), Port("y_h")), attrs=_COMMON_ATTRS,
               infer=infer_recurrent, kernel=kernel_recurrent("CommonRNN"), family=FAMILY,
               doc="one simple RNN layer, ONNX semantics (ours: CANN has no ONNX RNN plugin)"))
