"""CommonLSTM / CommonGRU / CommonRNN (ONNX semantics, ge/ops/defs/recurrent.py) in float32 on
OpenBLAS: per direction one sgemm computes x·Wᵀ for every time step at once, then each step
adds h·Rᵀ with one sgemm over the batch and runs the gate arithmetic row by row.

Workspace (floats): xw [S·B, G·H] | g [B, G·H] | h [B, H] | c [B, H] | tmp [B, H], then the
sequence lengths as int32 [B].  Directions are unrolled at generation time (each has its own
activations).  The kernel returns 1 (and writes nothing) when a sequence_lens value is outside
[0, S] (docs/kernel-abi.md, "Status codes").
"""
from __future__ import annotations

from ge import blas
from ge.ops.defs.recurrent import spec_of

from .fastmath import FAST_MATH
from .cgen import KernelSource, Unsupported, flit, io_decls, kernel_file, require_dtypes

__all__ = ["VERSION", "render_recurrent", "STATUS_BAD_LENGTHS"]

VERSION = 2
STATUS_BAD_LENGTHS = 1
SGEMM = blas.symbol("cblas_sgemm")
F = ("DT_FLOAT",)

# ONNX activation -> C expression of x ({a}, {b}: the alpha / beta literals)
_ACT_C = {
    "Relu": "x > 0.0f ? x : 0.0f",
    "Tanh": "ge_tanh(x)",
    "Sigmoid": "1.0f / (1.0f + ge_exp(-x))",
    "Affine": "{a} * x + {b}",
    "LeakyRelu": "x >= 0.0f ? x : {a} * x",
    "ThresholdedRelu": "x > {a} ? x : 0.0f",
    "ScaledTanh": "{a} * tanhf({b} * x)",
    "HardSigmoid": "fminf(fmaxf({a} * x + {b}, 0.0f), 1.0f)",
    "Elu": "x >= 0.0f ? x : {a} * (expf(x) - 1.0f)",
    "Softsign": "x / (1.0f + fabsf(x))",
    "Softplus": "x > 0.0f ? x + log1pf(expf(-x)) : log1pf(expf(x))",
}


def _act_helpers(spec) -> list:
    lines = [FAST_MATH]
    for d, acts in enumerate(spec.activations):
        for j, (name, alpha, beta) in enumerate(acts):
            expr = _ACT_C[name].format(a=flit(alpha), b=flit(beta))
            lines.append(f"static inline float act{d}_{j}(float x) {{ return {expr}; }}")
    if spec.clip > 0:
        c = flit(spec.clip)
        lines.append(f"static inline float clipv(float v) {{ return v < -{c} ? -{c} : "
                     f"(v > {c} ? {c} : v); }}")
    else:
        lines.append("static inline float clipv(float v) { return v; }")
    return lines + [""]


def _gemm(m, n, k, a, lda, b, ldb, beta, c, ldc) -> str:
    """c[m, n] = a[m, k] · b[n, k]ᵀ + beta·c (row major)."""
    return (f"{SGEMM}(CblasRowMajor, CblasNoTrans, CblasTrans, {m}, {n}, {k}, 1.0f, {a}, {lda}, "
            f"{b}, {ldb}, {beta}, {c}, {ldc});")


def _cell(spec, d: int) -> list:
    """Gate arithmetic of one step: g holds x·Wᵀ + biases for every row; updates h (and c)
    of the live rows in place."""
    hid, gh, bat = spec.hidden, spec.gates * spec.hidden, spec.batch
    live = "if (s >= len[b]) continue;"
    if spec.op_type == "CommonRNN":
        return ["        " + _gemm(bat, hid, hid, "h", hid, "R", hid, "1.0f", "g", gh),
                f"        for (int64_t b = 0; b < {bat}; ++b) {{ {live}",
                f"            for (int64_t k = 0; k < {hid}; ++k) h[b * {hid} + k] = "
                f"act{d}_0(clipv(g[b * {gh} + k]));",
                "        }"]
    if spec.op_type == "CommonGRU":
        lines = ["        " + _gemm(bat, 2 * hid, hid, "h", hid, "R", hid, "1.0f", "g", gh),
                 f"        for (int64_t i = 0; i < {bat}; ++i) for (int64_t k = 0; k < {2 * hid};"
                 f" ++k) g[i * {gh} + k] = act{d}_0(clipv(g[i * {gh} + k]));"]
        if spec.linear_before_reset:
            lines += ["        " + _gemm(bat, hid, hid, "h", hid, f"R + {2 * hid * hid}", hid,
                                         "0.0f", "tmp", hid),
                      f"        for (int64_t i = 0; i < {bat}; ++i) for (int64_t k = 0; k < {hid};"
                      f" ++k) g[i * {gh} + {2 * hid} + k] += g[i * {gh} + {hid} + k] * "
                      f"(tmp[i * {hid} + k] + (Bs ? Bs[{gh + 2 * hid} + k] : 0.0f));"]
        else:
            lines += [f"        for (int64_t i = 0; i < {bat}; ++i) for (int64_t k = 0; k < {hid};"
                      f" ++k) tmp[i * {hid} + k] = g[i * {gh} + {hid} + k] * h[i * {hid} + k];",
                      "        " + _gemm(bat, hid, hid, "tmp", hid, f"R + {2 * hid * hid}", hid,
                                         "1.0f", f"g + {2 * hid}", gh)]
        return lines + [
            f"        for (int64_t b = 0; b < {bat}; ++b) {{ {live}",
            f"            for (int64_t k = 0; k < {hid}; ++k) {{",
            f"                const float z = g[b * {gh} + k];",
            f"                const float n = act{d}_1(clipv(g[b * {gh} + {2 * hid} + k]));",
            f"                h[b * {hid} + k] = (1.0f - z) * n + z * h[b * {hid} + k];",
            "            }", "        }"]
    forget = ("1.0f - i" if spec.input_forget else
              f"act{d}_0(clipv(gb[{2 * hid} + k] + (P ? P[{2 * hid} + k] * cp : 0.0f)))")
    return ["        " + _gemm(bat, gh, hid, "h", hid, "R", hid, "1.0f", "g", gh),
            f"        for (int64_t b = 0; b < {bat}; ++b) {{ {live}",
            f"            const float *gb = g + b * {gh};",
            f"            for (int64_t k = 0; k < {hid}; ++k) {{",
            f"                const float cp = c[b * {hid} + k];",
            f"                const float i = act{d}_0(clipv(gb[k] + (P ? P[k] * cp : 0.0f)));",
            f"                const float f = {forget};",
            f"                const float cn = f * cp + i * act{d}_1(clipv(gb[{3 * hid} + k]));",
            f"                const float o = act{d}_0(clipv(gb[{hid} + k] + "
            f"(P ? P[{hid} + k] * cn : 0.0f)));",
            f"                c[b * {hid} + k] = cn;",
            f"                h[b * {hid} + k] = o * act{d}_2(cn);",
            "            }", "        }"]


def _direction(spec, d: int, has: dict) -> list:
    seq, bat, inp, hid = spec.seq, spec.batch, spec.input_size, spec.hidden
    gh, n_dir = spec.gates * hid, len(spec.directions)
    lstm = spec.op_type == "CommonLSTM"
    reverse = spec.directions[d] == "reverse"
    # GRU with linear_before_reset keeps Rb of the h gate apart (inside the reset product)
    rb_end = 2 * hid if spec.op_type == "CommonGRU" and spec.linear_before_reset else gh
    lines = ["    {",
             f"    const float *W = x1 + {d * gh * inp};",
             f"    const float *R = x2 + {d * gh * hid};",
             f"    const float *Bs = {f'x3 + {d * 2 * gh}' if has[3] else 'NULL'};",
             f"    const float *P = {f'x7 + {d * 3 * hid}' if has.get(7) else 'NULL'};",
             "    (void)Bs; (void)P;",
             "    " + _gemm(seq * bat, gh, inp, "x0", inp, "W", inp, "0.0f", "xw", gh)]
    if has[3]:
        lines += [f"    for (int64_t i = 0; i < {seq * bat}; ++i)",
                  f"        for (int64_t j = 0; j < {gh}; ++j)",
                  f"            xw[i * {gh} + j] += Bs[j] + (j < {rb_end} ? Bs[{gh} + j] : 0.0f);"]
    for slot, buf in ((5, "h"), (6, "c")):
        if slot == 6 and not lstm:
            continue
        lines.append(f"    memcpy({buf}, x{slot} + {d * bat * hid}, {bat * hid} * sizeof(float));"
                     if has.get(slot) else f"    memset({buf}, 0, {bat * hid} * sizeof(float));")
    step = "len[b] - 1 - s" if reverse else "s"
    lines += [f"    for (int64_t s = 0; s < {seq}; ++s) {{",
              f"        for (int64_t b = 0; b < {bat}; ++b) {{",
              f"            const int64_t t = s < len[b] ? {step} : 0;",
              f"            memcpy(g + b * {gh}, xw + (t * {bat} + b) * {gh}, "
              f"{gh} * sizeof(float));",
              "        }"]
    lines += _cell(spec, d)
    lines += [f"        for (int64_t b = 0; b < {bat}; ++b) {{",
              "            if (s >= len[b]) continue;",
              f"            const int64_t t = {step};",
              f"            memcpy(y0 + ((t * {n_dir} + {d}) * {bat} + b) * {hid}, h + b * {hid}, "
              f"{hid} * sizeof(float));",
              "        }", "    }"]
    states = (("y1", "h"), ("y2", "c")) if lstm else (("y1", "h"),)
    lines += [f"    for (int64_t b = 0; b < {bat}; ++b) {{"]
    for out, buf in states:
        lines += [f"        if (len[b] > 0) memcpy({out} + ({d} * {bat} + b) * {hid}, "
                  f"{buf} + b * {hid}, {hid} * sizeof(float));",
                  f"        else memset({out} + ({d} * {bat} + b) * {hid}, 0, "
                  f"{hid} * sizeof(float));"]
    return lines + ["    }", "    }"]


def render_recurrent(sig) -> KernelSource:
    n_in = len(sig.inputs)
    require_dtypes(sig, {i: ("DT_INT32",) if i == 4 else F for i in range(n_in)},
                   {i: F for i in range(len(sig.outputs))})
    x = sig.inputs[0].shape
    if len(x) != 3 or min(x) <= 0:
        raise Unsupported(f"x shape {list(x)}")
    attrs = dict(sig.attrs)
    spec = spec_of(sig.op_type, attrs, x)
    has = {i: i < n_in and sig.inputs[i] is not None for i in range(8)}
    seq, bat, hid = spec.seq, spec.batch, spec.hidden
    gh = spec.gates * hid
    floats = seq * bat * gh + bat * gh + 3 * bat * hid
    body = ["    float *xw = (float *)workspace;",
            f"    float *g = xw + {seq * bat * gh};",
            f"    float *h = g + {bat * gh};",
            f"    float *c = h + {bat * hid};",
            f"    float *tmp = c + {bat * hid};",
            f"    int32_t *len = (int32_t *)(tmp + {bat * hid});",
            "    (void)c; (void)tmp;"]
    if has[4]:
        body += [f"    for (int64_t b = 0; b < {bat}; ++b) {{",
                 f"        if (x4[b] < 0 || x4[b] > {seq}) return {STATUS_BAD_LENGTHS};",
                 "        len[b] = x4[b];", "    }"]
    else:
        body += [f"    for (int64_t b = 0; b < {bat}; ++b) len[b] = {seq};"]
    body += [f"    memset(y0, 0, {seq * len(spec.directions) * bat * hid} * sizeof(float));"]
    for d in range(len(spec.directions)):
        body += _direction(spec, d, has)
    return KernelSource(kernel_file(sig, "recurrent", VERSION, io_decls(sig), body, blas=True,
                                    helpers=_act_helpers(spec)),
                        workspace_bytes=4 * floats + 4 * bat, needs_blas=True)
