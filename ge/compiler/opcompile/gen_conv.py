"""Conv2D in NCHW for the host: three loop shapes chosen from the signature.

- direct 1x1 (stride 1, no padding): the input image is already the sgemm's B matrix;
- channel-wise (one input channel per group: depthwise, with any channel multiplier): a direct
  loop over the kernel taps, no im2col and no sgemm;
- everything else: im2col in blocks of output rows into the workspace, one sgemm per block,
  so the column buffer stays in the cache and the workspace is a block, not the image.

Bias, a residual input (ConvAddFusionPass) and a fused activation (`fused_activation`, set
by the ConvActivationFusionPass) are applied to each block while it is still in the cache.
The blocked convolution runs in the support object (support.py, `ge_support_conv`) from the
kernel's plan (`_split`, `_plan`): it splits its work over the model's threads itself, im2col
and the epilogue in parallel too, OpenBLAS staying on one thread, whose workers would
otherwise spin beside the pool's between kernels.  Its kernels differ only in their data, so
they are built from one template per process (cgen.DataTemplate).  They also have prepared
constants (docs/kernel-abi.md): a loader that sees the filter is a weight has it packed once
and runs the product of our own on it (conv_product.py, in the kernel's text) instead of the
sgemm.
"""
from __future__ import annotations

import struct

from ge.kernel_abi import (CONSTANT_INPUTS_SYMBOL, PREPARE_SYMBOL, PREPARED_SYMBOL,
                           STATE_SYMBOL)
from ge.ops.defs._common import FUSED_ACTIVATION
from ge.ops.defs.conv import FILTER_SLOT, RESIDUAL_SLOT

from . import conv_product
from .cgen import (SIGNATURE_CAPACITY, DataTemplate, KernelSource, Unsupported, abi_patches,
                   hw_pair, io_decls, kernel_file, require_dtypes)
from .fastmath import helpers_for
from .gen_elementwise import ELEMENTWISE, expression
from .support import CONV_DECLS, CONV_MODES, CONV_PLAN, CONV_SHARE

__all__ = ["render_conv2d", "epilogue", "epilogue_helpers", "FUSED_ACTIVATIONS", "BLOCK_BYTES",
           "VERSION"]

VERSION = 9
PLAN_SYMBOL = "ge_plan"
F = ("DT_FLOAT",)
BLOCK_BYTES = 1 << 20           # im2col block bytes (measured on ResNet-50: docs/kernel-abi.md)
MIN_BLOCK_COLUMNS = 1024        # narrower sgemm calls lose more than the cache gains
# Threads (jobs.py): one job per thread (the model's count, up to SLOTS), each its share of the
# output rows (in blocks, its own im2col buffer), or of one block's columns or channel groups
THREAD_CHANNELS = CONV_SHARE["channels"]    # channel shares: multiples (OpenBLAS's row tiles)
THREAD_COLUMNS = CONV_SHARE["columns"]      # column shares of a single block: multiples of it
THREAD_PIXELS = 128             # smaller single blocks are shared by output channels (7x7:
                                # the filter is the larger operand; 14x14 by columns, 1.2x
                                # faster with 2 threads on layer 3 of ResNet-50)
SLOTS = 4                       # im2col buffers: at most this many threads per convolution
# activations a matrix kernel applies to its own output (attribute-free rows of ELEMENTWISE)
FUSED_ACTIVATIONS = ("Relu", "GeluV2")


def _fused(sig) -> str:
    """The signature's `fused_activation`, or ""."""
    return sig.attr(FUSED_ACTIVATION, "") or ""


def _activation(sig) -> str:
    """The C expression of the signature's `fused_activation` over `v`, or ""."""
    act = _fused(sig)
    if not act:
        return ""
    if act not in FUSED_ACTIVATIONS:
        raise Unsupported(f"fused activation {act}")
    return expression(ELEMENTWISE[act], ["v"], sig)


def epilogue_helpers(sig) -> list:
    """The helper functions the epilogue's expression calls (fastmath)."""
    return helpers_for(_activation(sig))


def epilogue(sig, ptr: str, count: str, indent: str, residual: str = "") -> list:
    """C lines adding the `count` floats at `residual` (a C pointer, "" = none) to the
    `count` floats at `ptr`, then applying the signature's `fused_activation`: one pass."""
    expr = _activation(sig)
    if not expr and not residual:
        return []
    value = f"{ptr}[e] + {residual}[e]" if residual else f"{ptr}[e]"
    return [f"{indent}for (int64_t e = 0; e < {count}; ++e) {{",
            f"{indent}    const float v = {value};",
            f"{indent}    {ptr}[e] = {expr or 'v'};",
            f"{indent}}}"]


def _has_residual(sig) -> bool:
    return len(sig.inputs) > RESIDUAL_SLOT and sig.inputs[RESIDUAL_SLOT] is not None


def _residual(sig, ptr: str) -> str:
    """The C pointer into the residual input (ConvAddFusionPass) at output pointer `ptr`, or
    "" without one: the residual has y's shape (Conv2D's shape inference refuses any other),
    so y's offsets index it."""
    return f"(x{RESIDUAL_SLOT} + ({ptr} - y0))" if _has_residual(sig) else ""


def _geometry(sig) -> dict:
    if sig.attr("data_format", "NHWC") != "NCHW":
        raise Unsupported("Conv2D kernels are generated for data_format NCHW only")
    x, w, y = sig.inputs[0].shape, sig.inputs[1].shape, sig.outputs[0].shape
    if len(x) != 4 or len(w) != 4 or len(y) != 4:
        raise Unsupported("Conv2D operands must be 4-D")
    nb, c, h, wd = x
    co, cg, kh, kw = w
    groups = int(sig.attr("groups", 1))
    pads = list(sig.attr("pads", [0, 0, 0, 0]))
    if len(pads) != 4:
        raise Unsupported("pads must have 4 values")
    if groups <= 0 or c != cg * groups or co % groups or y[1] != co or y[0] != nb:
        raise Unsupported("inconsistent Conv2D channels / groups")
    sh, sw = hw_pair(sig.attr("strides"), "strides")
    dh, dw = hw_pair(sig.attr("dilations", [1, 1, 1, 1]), "dilations")
    return dict(nb=nb, c=c, h=h, wd=wd, co=co, cg=cg, kh=kh, kw=kw, oh=y[2], ow=y[3],
                groups=groups, sh=sh, sw=sw, dh=dh, dw=dw, pt=int(pads[0]), pl=int(pads[2]),
                cog=co // groups, has_bias=len(sig.inputs) > 2 and sig.inputs[2] is not None)


def _column_range(g: dict, pad: str) -> list:
    """`jlo`/`jhi`: the output columns whose tap `kj` reads inside the input row."""
    return [f"{pad}const int64_t wofs = kj * {g['dw']} - {g['pl']};",
            f"{pad}int64_t jlo = wofs >= 0 ? 0 : (-wofs + {g['sw'] - 1}) / {g['sw']};",
            f"{pad}int64_t jhi = wofs >= {g['wd']} ? 0 : ({g['wd'] - 1} - wofs) / {g['sw']} + 1;",
            f"{pad}if (jlo > {g['ow']}) jlo = {g['ow']};",
            f"{pad}if (jhi > {g['ow']}) jhi = {g['ow']};",
            f"{pad}if (jhi < jlo) jhi = jlo;"]


def _channelwise(sig, g: dict) -> list:
    """One input channel per group: y[o] = sum over taps of w[o, tap] * shifted x[o / cog]."""
    ohw = g["oh"] * g["ow"]
    body = [f"    for (int64_t n = 0; n < {g['nb']}; ++n)",
            f"    for (int64_t o = 0; o < {g['co']}; ++o) {{",
            f"        const float *xc = x0 + (n * {g['c']} + o / {g['cog']})"
            f" * {g['h'] * g['wd']};",
            f"        float *yc = y0 + (n * {g['co']} + o) * {ohw};",
            f"        const float *wk = x1 + o * {g['kh'] * g['kw']};",
            f"        const float init = {'x2[o]' if g['has_bias'] else '0.0f'};",
            f"        for (int64_t p = 0; p < {ohw}; ++p) yc[p] = init;",
            f"        for (int64_t ki = 0; ki < {g['kh']}; ++ki)",
            f"        for (int64_t kj = 0; kj < {g['kw']}; ++kj) {{",
            f"            const float wv = wk[ki * {g['kw']} + kj];"]
    body += _column_range(g, "            ")
    body += [f"            for (int64_t oi = 0; oi < {g['oh']}; ++oi) {{",
             f"                const int64_t hi = oi * {g['sh']} - {g['pt']} + ki * {g['dh']};",
             f"                if (hi < 0 || hi >= {g['h']}) continue;",
             f"                const float *xr = xc + hi * {g['wd']} + wofs;",
             f"                float *yr = yc + oi * {g['ow']};",
             f"                for (int64_t oj = jlo; oj < jhi; ++oj) "
             f"yr[oj] += wv * xr[oj * {g['sw']}];",
             "            }",
             "        }"]
    body += epilogue(sig, "yc", str(ohw), "        ", _residual(sig, "yc"))
    body += ["    }"]
    return body


def _split(g: dict, direct: bool) -> dict:
    """Blocks of output rows whose im2col stays in the cache (a direct 1x1: one block of every
    pixel), and how threads share the work (`mode`): output rows; of a single block, columns
    (each thread packs its part of the image, all of the filter), or for a small image (whose
    filter is the larger operand) groups of THREAD_CHANNELS output channels."""
    ck, cog = g["cg"] * g["kh"] * g["kw"], g["cog"]
    unit, units = (1, g["oh"] * g["ow"]) if direct else (g["ow"], g["oh"])
    per = units if direct else max(1, min(g["oh"], max(
        BLOCK_BYTES // (4 * ck * g["ow"]), -(-MIN_BLOCK_COLUMNS // g["ow"]))))
    blocks = -(-units // per)
    if blocks > 1:
        mode, shares = "rows", units
    elif cog >= 2 * THREAD_CHANNELS and units * unit < THREAD_PIXELS:
        mode, shares = "channels", cog // THREAD_CHANNELS   # the last group takes the rest
    else:
        mode, shares = "columns", max(1, units * unit // THREAD_COLUMNS)
    # the prepared product packs from the padded input block instead of im2col's (ge_pad) at
    # strides 1 and 2 (a 1x1 filter of stride 2 keeps im2col: the pad would copy 4x as
    # much): the same column area holds either
    taps = g["kh"] * g["kw"]
    padded = (not direct and taps <= conv_product.MOST_TAPS
              and (g["sh"], g["sw"]) in ((1, 1), (2, 2)) and (g["sh"] == 1 or taps > 1))
    col = 0 if direct else ck * per * g["ow"]
    if padded:      # the block ge_pad fills (support.py: ge_pad_rows x ge_pad_width)
        rows = (per - 1) * g["sh"] + (g["kh"] - 1) * g["dh"] + 1
        width = (g["ow"] - 1) * g["sw"] + (g["kw"] - 1) * g["dw"] + 1
        col = max(col, g["cg"] * rows * width + conv_product.SLACK)
    return dict(unit=unit, units=units, per=per, mode=mode, shares=shares, padded=int(padded),
                col_floats=-(-col // 16) * 16,      # 64 bytes
                pack_floats=conv_product.pack_floats(ck, per * unit))


def _plan(sig, g: dict, direct: bool, split: dict) -> list:
    """The int64 table of ge_support_conv (support.CONV_PLAN's order)."""
    values = {**g, **split, "n": g["nb"], "hw": g["h"] * g["wd"],
              "ck": g["cg"] * g["kh"] * g["kw"], "ohw": g["oh"] * g["ow"],
              "mode": CONV_MODES.index(split["mode"]), "most": min(SLOTS, split["shares"]),
              "direct": int(direct), "bias": int(g["has_bias"]),
              "residual": int(_has_residual(sig)), "relu": int(_fused(sig) == "Relu"),
              "geo": [g[k] for k in ("cg", "h", "wd", "kh", "kw", "sh", "sw", "dh", "dw", "pt",
                                     "pl", "ow")]}
    return [v for f in CONV_PLAN for v in (values[f] if f == "geo" else [values[f]])]


def _own_epilogue(sig) -> list:
    """A fused activation other than relu: the kernel's function over each finished block
    (support.CONV_DECLS' ge_conv_epilogue), or [] (the support object's loops do it)."""
    if _fused(sig) in ("", "Relu"):
        return []
    return (["static void ge_epilogue(float *y, const float *res, int64_t rows, int64_t cols,"
             " int64_t ld)",
             "{",
             "    (void)res;",
             "    for (int64_t o = 0; o < rows; ++o) {",
             "        float *yo = y + o * ld;"]
            + epilogue(sig, "yo", "cols", "        ",
                       "(res + o * ld)" if _has_residual(sig) else "")
            + ["    }", "}"])


def render_conv2d(sig) -> KernelSource:
    require_dtypes(sig, {0: F, 1: F, 2: F, RESIDUAL_SLOT: F}, {0: F})
    if len(sig.inputs) > 3 and sig.inputs[3] is not None:
        raise Unsupported("quantised offset_w input")
    g = _geometry(sig)
    if g["cg"] == 1 and g["groups"] > 1:
        return KernelSource(kernel_file(sig, "conv2d", VERSION, io_decls(sig), _channelwise(sig, g),
                                        helpers=epilogue_helpers(sig)))
    direct = (g["kh"] == g["kw"] == 1 and g["sh"] == g["sw"] == 1 and g["pt"] == g["pl"] == 0
              and g["oh"] == g["h"] and g["ow"] == g["wd"])
    split = _split(g, direct)
    plan = _plan(sig, g, direct, split)
    own = _own_epilogue(sig)
    workspace = SLOTS * (split["col_floats"] + split["pack_floats"]) * 4
    abi = None if own else abi_patches(sig, workspace)
    # needs_blas: the support object's sgemm calls (the kernel's own text calls none)
    if abi is None:
        return KernelSource(_plan_file(sig, plan, own), workspace, needs_blas=True)
    # every such kernel is the same code and data layout: one compile per process (build.py)
    template = DataTemplate(
        KernelSource(_plan_file(sig, [0] * len(plan), [], "", SIGNATURE_CAPACITY),
                     needs_blas=True).c_source,
        abi + ((PLAN_SYMBOL, struct.pack(f"={len(plan)}q", *plan)),))
    return KernelSource(_plan_file(sig, plan, [], None, SIGNATURE_CAPACITY), workspace,
                        needs_blas=True, template=template)


def _plan_file(sig, plan: list, own: list, signature=None, capacity: int = 0) -> str:
    """The kernel of a blocked convolution: its plan and one call of ge_support_conv."""
    helpers = epilogue_helpers(sig) + [CONV_DECLS] + own + [
        f"/* {', '.join(CONV_PLAN[:-1])}, {CONV_PLAN[-1]}[12] (support.py) */",
        f"static const int64_t {PLAN_SYMBOL}[{len(plan)}] = {{{', '.join(map(str, plan))}}};"]
    epilogue_fn = "ge_epilogue" if own else "0"
    helpers += [conv_product.SOURCE] + _prepared_entries(epilogue_fn)
    body = [f"    ge_support_conv({PLAN_SYMBOL}, inputs, outputs, workspace, {epilogue_fn}, 0, 0);"]
    return kernel_file(sig, "conv2d", VERSION, [], body, helpers=helpers, signature=signature,
                       capacity=capacity)


def _prepared_entries(epilogue_fn: str) -> list:
    """The kernel's prepared-constants entries (docs/kernel-abi.md): its filter (FILTER_SLOT),
    packed once by the support object, then its own product (conv_product.py) on it; no
    state where that product does not exist."""
    return [
        f"unsigned long long {STATE_SYMBOL}(void)",
        f"{{ return GE_PREPARED ? ge_support_conv_state_bytes({PLAN_SYMBOL}) : 0; }}",
        f"const unsigned long long {CONSTANT_INPUTS_SYMBOL} = {1 << FILTER_SLOT}ull;   "
        "/* the filter */",
        f"int {PREPARE_SYMBOL}(void *const *inputs, void *state)",
        f"{{ ge_support_conv_prepare({PLAN_SYMBOL}, inputs, state); return 0; }}",
        f"int {PREPARED_SYMBOL}(void *const *inputs, void *const *outputs, void *workspace,",
        "                       const void *state)",
        f"{{ ge_support_conv({PLAN_SYMBOL}, inputs, outputs, workspace, {epilogue_fn}, state,",
        "                  GE_PK_PRODUCT); return 0; }"]
