"""The one table from IR op type to its C kernel generator.

An op supports the AIcoreEngine / VectorEngine iff it has a row here (and the generator accepts
the node's signature: `check_supported`); everything else runs on the AiCpu engine with the
op's numpy reference kernel.  `const_inputs` names the input slots whose constant values the
generator reads (they become part of the signature and the cache key); -1 = last slot.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from . import gen_elementwise, gen_layout, gen_matmul, gen_pool, gen_reduce
from .cgen import KernelSource, Unsupported

__all__ = ["KernelGen", "GENERATORS", "generator_for", "check_supported", "render"]


@dataclass(frozen=True)
class KernelGen:
    family: str
    version: int
    render: Callable            # OpSignature -> KernelSource, raises Unsupported
    const_inputs: tuple = ()


def _table() -> dict:
    table = {}
    ew = KernelGen("elementwise", gen_elementwise.VERSION, gen_elementwise.render_elementwise)
    for op in gen_elementwise.ELEMENTWISE:
        table[op] = ew
    for op in gen_reduce.REDUCE_OPS:
        table[op] = KernelGen("reduce", gen_reduce.VERSION, gen_reduce.render_reduce, (1,))
    for op in gen_reduce.SOFTMAX_OPS:
        table[op] = KernelGen("softmax", gen_reduce.VERSION, gen_reduce.render_softmax)
    for op in gen_reduce.NORM_OPS:
        table[op] = KernelGen("norm", gen_reduce.VERSION, gen_reduce.render_layer_norm)
    for op in gen_matmul.MATMUL_OPS:
        table[op] = KernelGen("matmul", gen_matmul.VERSION, gen_matmul.render_matmul)
    table["GEMM"] = KernelGen("matmul", gen_matmul.VERSION, gen_matmul.render_gemm, (3, 4))
    table["Conv2D"] = KernelGen("conv2d", gen_matmul.VERSION, gen_matmul.render_conv2d)
    for op in gen_pool.POOL_OPS:
        table[op] = KernelGen("pool", gen_pool.VERSION, gen_pool.render_pool)
    consts = {"Transpose": (1,), "ConcatV2": (-1,), "Concat": (0,), "Split": (0,),
              "SplitV": (2,), "Slice": (1,), "StridedSliceV2": (1, 3, 4)}
    for op in gen_layout.LAYOUT_OPS:
        table[op] = KernelGen("layout", gen_layout.VERSION, gen_layout.render_layout,
                              consts.get(op, ()))
    return table


GENERATORS: dict = _table()


def generator_for(op_type: str) -> Optional[KernelGen]:
    return GENERATORS.get(op_type)


def render(sig) -> KernelSource:
    gen = GENERATORS.get(sig.op_type)
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
