"""C kernel generators by name: the op registry says which ops have one (`OpDef.kernel_gen`,
`OpDef.kernel_consts`); this table says how each named generator renders its kernels.

An op supports the AIcore / Vector engines iff its OpDef names a generator here (and the
generator accepts the node's signature: `check_supported`); everything else runs on the AiCpu
engine with the op's numpy reference kernel.  `const_inputs` (from `OpDef.kernel_consts`)
names the input slots whose constant values the generator reads (they become part of the
signature and the cache key); -1 = last slot.  Every renderer also serves float16/bfloat16
signatures through its float32 kernel (lowprec.with_low_precision) when it does not handle them
itself.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from ge import ops

from . import gen_aipp, gen_elementwise, gen_layout, gen_matmul, gen_pool, gen_quant, gen_reduce
from . import gen_recurrent
from . import gen_cast, gen_custom
from .cgen import KernelSource, Unsupported
from .lowprec import with_low_precision

__all__ = ["KernelGen", "RENDERERS", "OWN_DTYPES", "VARIANT_OPS", "generator_for",
           "check_supported", "render"]


@dataclass(frozen=True)
class KernelGen:
    family: str                 # recorded in the cache key with the version
    version: int
    render: Callable            # OpSignature -> KernelSource, raises Unsupported
    const_inputs: tuple = ()


# OpDef.kernel_gen -> (family, version, renderer)
RENDERERS = {
    "elementwise": ("elementwise", gen_elementwise.VERSION, gen_elementwise.render_elementwise),
    "reduce": ("reduce", gen_reduce.VERSION, gen_reduce.render_reduce),
    "softmax": ("softmax", gen_reduce.VERSION, gen_reduce.render_softmax),
    "layer_norm": ("norm", gen_reduce.VERSION, gen_reduce.render_layer_norm),
    "matmul": ("matmul", gen_matmul.VERSION, gen_matmul.render_matmul),
    "gemm": ("matmul", gen_matmul.VERSION, gen_matmul.render_gemm),
    "conv2d": ("conv2d", gen_matmul.VERSION, gen_matmul.render_conv2d),
    "pool": ("pool", gen_pool.VERSION, gen_pool.render_pool),
    "layout": ("layout", gen_layout.VERSION, gen_layout.render_layout),
    "recurrent": ("recurrent", gen_recurrent.VERSION, gen_recurrent.render_recurrent),
    "aipp": ("aipp", gen_aipp.VERSION, gen_aipp.render_aipp),
    "quant": ("quant", gen_quant.VERSION, gen_quant.render_quant),
    "quant_matmul": ("quant", gen_quant.VERSION, gen_quant.render_quant_matmul),
    "quant_conv": ("quant", gen_quant.VERSION, gen_quant.render_quant_conv),
    "cast": ("cast", gen_cast.VERSION, gen_cast.render_cast),
    "custom": ("custom", gen_custom.VERSION, gen_custom.render_custom),  # docs/custom-ops.md
}

# Renderers whose dtypes are the op itself: never served through a float32 kernel (a Cast
# double -> float16 would round twice).
OWN_DTYPES = frozenset({"cast"})


# Op types whose kernels have a high-precision variant besides the default high-performance one
# (chosen by the node's ATTR_IMPL_MODE; docs/precision.md, "Kernel variants").
VARIANT_OPS = frozenset({t for t, row in gen_elementwise.ELEMENTWISE.items() if row.precise}
                        | gen_reduce.COMPENSATED | {"SoftmaxV2", "LayerNorm"})


def generator_for(op_type: str) -> Optional[KernelGen]:
    opdef = ops.get(op_type)
    if opdef is None or not opdef.kernel_gen:
        return None
    row = RENDERERS.get(opdef.kernel_gen)
    if row is None:  # a registry entry naming no generator is a defect of that entry
        raise KeyError(f"op {op_type} names kernel generator {opdef.kernel_gen!r}; known: "
                       f"{', '.join(RENDERERS)}")
    family, version, renderer = row
    if opdef.kernel_gen not in OWN_DTYPES:
        renderer = with_low_precision(renderer)
    return KernelGen(family, version, renderer, opdef.kernel_consts)


def render(sig) -> KernelSource:
    gen = generator_for(sig.op_type)
    if gen is None:
        raise Unsupported(f"no kernel generator for {sig.op_type}")
    return gen.render(sig)


def check_supported(sig) -> Optional[str]:
    """None when a kernel can be generated for `sig`, else the reason it cannot."""
    try:
        render(sig)
    except Unsupported as exc:
        return str(exc)
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        return f"signature not understood by the generator ({type(exc).__name__}: {exc})"
    return None
