"""Elementwise kernels with numpy broadcasting: arithmetic, comparisons, select, clip, N-ary sum
and activations.  One table maps an op type to its operand dtypes and a C expression over the
operands `a`, `b`, `c`, ...; one emitter turns any row into a coalesced loop nest.  A row with a
`precise` expression has two variants (docs/precision.md, "Kernel variants"): `expr` is the
high-performance one (float, fastmath polynomials or libm's float functions), `precise` the
high-precision one (evaluated in double, rounded once to float), chosen by the node's
implementation mode.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .fastmath import WIDE, helpers_for
from .cgen import (C_TYPE, KernelSource, Unsupported, broadcast_strides, coalesce, flit,
                   high_precision, io_decls, kernel_file, loop_nest, offset_expr)

__all__ = ["ELEMENTWISE", "VERSION", "render_elementwise", "expression"]

VERSION = 2
F, B = "DT_FLOAT", "DT_BOOL"


@dataclass(frozen=True)
class Ew:
    arity: int                         # number of operands; 0 = dynamic (all inputs)
    expr: Callable                     # (operand names, sig) -> C expression
    in_dtypes: tuple = ()              # per operand; empty = all DT_FLOAT
    out_dtype: str = F
    slots: tuple = ()                  # input slots read as operands; empty = every present one
    precise: Callable = None           # the high-precision variant's expression, if it differs


def _a(f):
    """An expression that only uses the first operand."""
    return lambda ops, sig: f(ops[0], sig)


# Exp / Log with CANN's base, scale and shift (y = f(scale * x + shift), base -1 = e): the
# C text of (float variant, double variant), each (without a base, with one); {a} argument,
# {b} base.  The double variant evaluates the argument in double too and rounds once.
_EXP_LIKE = {
    "Exp": (("expf({a})", "powf({b}, {a})"), ("(float)exp({a})", "(float)pow({b}, {a})")),
    "Log": (("logf({a})", "logf({a}) / logf({b})"),
            ("(float)log({a})", "(float)(log({a}) / log({b}))")),
}


def _exp_like(op: str, double: bool = False):
    plain, based = _EXP_LIKE[op][double]

    def expr(x, sig):
        base = float(sig.attr("base", -1.0))
        scale, shift = float(sig.attr("scale", 1.0)), float(sig.attr("shift", 0.0))
        if double:
            arg, b = f"({scale!r} * (double){x} + {shift!r})", repr(base)
        else:
            arg, b = f"({flit(scale)} * {x} + {flit(shift)})", flit(base)
        return (plain if base == -1.0 else based).format(a=arg, b=b)
    return expr


def _double(template: str):
    """A one-operand expression evaluated in double: `template` over {d} = (double)x."""
    return _a(lambda x, s: "(float)(" + template.format(d=f"(double){x}") + ")")


def _gelu_double(x: str, approximate: str) -> str:
    d = f"(double){x}"
    if approximate == "none":      # x/2 erfc(-x/sqrt2): no cancellation in either tail
        return f"(float)(0.5 * {d} * erfc(-0.70710678118654752 * {d}))"
    if approximate == "tanh":
        return (f"(float)(0.5 * {d} * (1.0 + tanh(0.79788456080286536 * "
                f"({d} + 0.044715 * {d} * {d} * {d}))))")
    raise Unsupported(f"GeluV2 approximate {approximate!r}")


def _gelu(x: str, approximate: str) -> str:
    if approximate == "none":
        return f"ge_gelu_erf({x})"
    if approximate == "tanh":
        return (f"0.5f * {x} * (1.0f + ge_tanh(0.79788456080286536f * "
                f"({x} + 0.044715f * {x} * {x} * {x})))")
    raise Unsupported(f"GeluV2 approximate {approximate!r}")


ELEMENTWISE = {
    # binary arithmetic
    "Add": Ew(2, lambda o, s: f"{o[0]} + {o[1]}"),
    "Sub": Ew(2, lambda o, s: f"{o[0]} - {o[1]}"),
    "Mul": Ew(2, lambda o, s: f"{o[0]} * {o[1]}"),
    "RealDiv": Ew(2, lambda o, s: f"{o[0]} / {o[1]}"),
    "Maximum": Ew(2, lambda o, s: f"({o[0]} >= {o[1]} || {o[0]} != {o[0]}) ? {o[0]} : {o[1]}"),
    "Minimum": Ew(2, lambda o, s: f"({o[0]} <= {o[1]} || {o[0]} != {o[0]}) ? {o[0]} : {o[1]}"),
    "Pow": Ew(2, lambda o, s: f"powf({o[0]}, {o[1]})",
              precise=lambda o, s: f"(float)pow((double){o[0]}, (double){o[1]})"),
    # comparisons (bool out)
    "Equal": Ew(2, lambda o, s: f"{o[0]} == {o[1]}", out_dtype=B),
    "Less": Ew(2, lambda o, s: f"{o[0]} < {o[1]}", out_dtype=B),
    "Greater": Ew(2, lambda o, s: f"{o[0]} > {o[1]}", out_dtype=B),
    "LessEqual": Ew(2, lambda o, s: f"{o[0]} <= {o[1]}", out_dtype=B),
    "GreaterEqual": Ew(2, lambda o, s: f"{o[0]} >= {o[1]}", out_dtype=B),
    # ternary / N-ary
    "SelectV2": Ew(3, lambda o, s: f"{o[0]} ? {o[1]} : {o[2]}", in_dtypes=(B, F, F)),
    "ClipByValue": Ew(3, lambda o, s: f"fminf(fmaxf({o[0]}, {o[1]}), {o[2]})"),
    "AccumulateNV2": Ew(0, lambda o, s: " + ".join(o)),
    # broadcasting copy (the shape input only fixes the output shape, known at compile time)
    "BroadcastTo": Ew(1, _a(lambda x, s: x), slots=(0,)),
    "Expand": Ew(1, _a(lambda x, s: x), slots=(0,)),
    # scalar-attribute ops
    "Muls": Ew(1, _a(lambda x, s: f"{x} * {flit(s.attr('value'))}")),
    "Adds": Ew(1, _a(lambda x, s: f"{x} + {flit(s.attr('value'))}")),
    # unary math
    "Abs": Ew(1, _a(lambda x, s: f"fabsf({x})")),
    "Neg": Ew(1, _a(lambda x, s: f"-{x}")),
    "Sqrt": Ew(1, _a(lambda x, s: f"sqrtf({x})")),
    "Rsqrt": Ew(1, _a(lambda x, s: f"1.0f / sqrtf({x})"), precise=_double("1.0 / sqrt({d})")),
    "Reciprocal": Ew(1, _a(lambda x, s: f"1.0f / {x}")),
    "Exp": Ew(1, _a(_exp_like("Exp")), precise=_a(_exp_like("Exp", double=True))),
    "Log": Ew(1, _a(_exp_like("Log")), precise=_a(_exp_like("Log", double=True))),
    "Erf": Ew(1, _a(lambda x, s: f"ge_erf({x})"), precise=_double("erf({d})")),
    "Sign": Ew(1, _a(lambda x, s: f"(float)(({x} > 0.0f) - ({x} < 0.0f))")),
    "Floor": Ew(1, _a(lambda x, s: f"floorf({x})")),
    "Ceil": Ew(1, _a(lambda x, s: f"ceilf({x})")),
    "Sin": Ew(1, _a(lambda x, s: f"sinf({x})")),
    "Cos": Ew(1, _a(lambda x, s: f"cosf({x})")),
    "Tanh": Ew(1, _a(lambda x, s: f"tanhf({x})"), precise=_double("tanh({d})")),
    # activations
    "Relu": Ew(1, _a(lambda x, s: f"{x} > 0.0f ? {x} : 0.0f")),
    "LeakyRelu": Ew(1, _a(lambda x, s:
                          f"{x} > 0.0f ? {x} : {flit(s.attr('negative_slope', 0.0))} * {x}")),
    "Sigmoid": Ew(1, _a(lambda x, s: f"1.0f / (1.0f + expf(-{x}))"),
                  precise=_double("1.0 / (1.0 + exp(-{d}))")),
    "HardSigmoid": Ew(1, _a(lambda x, s: f"fminf(1.0f, fmaxf(0.0f, "
                            f"{flit(s.attr('alpha', 1.0 / 6))} * {x} + "
                            f"{flit(s.attr('beta', 0.5))}))")),
    "HardSwish": Ew(1, _a(lambda x, s: f"{x} * fminf(6.0f, fmaxf(0.0f, {x} + 3.0f)) / 6.0f")),
    "Softplus": Ew(1, _a(lambda x, s: f"({x} > 20.0f ? {x} : log1pf(expf({x})))")),
    "Softsign": Ew(1, _a(lambda x, s: f"{x} / (1.0f + fabsf({x}))")),
    "Mish": Ew(1, _a(lambda x, s: f"{x} * tanhf({x} > 20.0f ? {x} : log1pf(expf({x})))")),
    "Elu": Ew(1, _a(lambda x, s: f"{flit(s.attr('scale', 1.0))} * ({x} > 0.0f ? {x} : "
                    f"{flit(s.attr('alpha', 1.0))} * "
                    f"(expf({flit(s.attr('input_scale', 1.0))} * {x}) - 1.0f))")),
    "GeluV2": Ew(1, _a(lambda x, s: _gelu(x, s.attr("approximate", "none"))),
                 precise=_a(lambda x, s: _gelu_double(x, s.attr("approximate", "none")))),
    "Selu": Ew(1, _a(lambda x, s: f"1.0507009873554805f * ({x} > 0.0f ? {x} : "
                     f"1.6732632423543772f * (expf({x}) - 1.0f))")),
}


def expression(row: Ew, operands: list, sig) -> str:
    """The row's C expression for the signature's variant (high precision when asked for and
    the row has one)."""
    fn = row.precise if row.precise is not None and high_precision(sig) else row.expr
    return fn(operands, sig)


def render_elementwise(sig) -> KernelSource:
    row = ELEMENTWISE[sig.op_type]
    operands = [k for k, t in enumerate(sig.inputs)
                if t is not None and (not row.slots or k in row.slots)]
    if row.arity and len(operands) != row.arity:
        raise Unsupported(f"{sig.op_type} expects {row.arity} inputs, got {len(operands)}")
    if not operands or len(sig.outputs) != 1:
        raise Unsupported("no operands")
    in_dtypes = row.in_dtypes or (F,) * len(operands)
    for k, want in zip(operands, in_dtypes if row.arity else (F,) * len(operands)):
        if sig.inputs[k].dtype != want:
            raise Unsupported(f"input {k} dtype {sig.inputs[k].dtype} (fp32 kernels only)")
    out = sig.outputs[0]
    if out.dtype != row.out_dtype:
        raise Unsupported(f"output dtype {out.dtype}")
    if any(d <= 0 for d in out.shape):
        raise Unsupported("empty or unknown output shape")
    strides = [broadcast_strides(sig.inputs[k].shape, out.shape) for k in operands]
    out_strides = broadcast_strides(out.shape, out.shape)
    dims, all_strides = coalesce(list(out.shape) or [1], [out_strides] + strides
                                 if out.shape else [[0]] + [[0] for _ in strides])
    names = [f"x{k}[{offset_expr(st)}]" for k, st in zip(operands, all_strides[1:])]
    expr = expression(row, names, sig)
    body = loop_nest(dims, [f"y0[{offset_expr(all_strides[0])}] = "
                            f"({C_TYPE[out.dtype]})({expr});"])
    helpers = helpers_for(expr)
    if not helpers:
        return KernelSource(kernel_file(sig, "elementwise", VERSION, io_decls(sig), body))
    # the fast-math helpers' loop in a function compiled twice (fastmath.WIDE)
    loop = ([f"{WIDE} static void ge_loop(void *const *inputs, void *const *outputs)", "{"]
            + ["    " + d for d in io_decls(sig)] + body + ["}", ""])
    return KernelSource(kernel_file(sig, "elementwise", VERSION, [],
                                    ["    ge_loop(inputs, outputs);"], helpers=helpers + loop))
