"""Engine placement (spec/compile-options.md §2, seed 002 EXCLUDE_ENGINES).

One table of engines (id, compute cost = priority, kernel store), one table of
`ge.exec.exclude_engines` tokens, and one function, `place_engines`, that gives every node the
supported, non-excluded engine of lowest cost and records it in the node attributes
`_lxfusion_engine_name`, `_lxfusion_op_kernel_lib_name` and `_ge_attr_op_kernel_lib_name`.

What an op supports comes from its op registry entry:
  - AIcoreEngine / VectorEngine: the op names a C kernel generator (`OpDef.kernel_gen`) and the
    generator accepts the node's signature (float32, float16/bfloat16 through the float32 kernel
    (opcompile/lowprec.py); anything else it refuses, with the reason kept for EZ3003);
  - DNN_VM_AICPU: the op has a numpy reference kernel (run by the host runtime);
  - DNN_VM_GE_LOCAL: every op whose registry role is not compute or bypass (graph inputs and
    outputs, constants, calls, the reshape family: `GE_LOCAL_ROLES`).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Mapping, Optional

from ge.graph.attr_names import ATTR_ENGINE, ATTR_KERNEL_LIB, ATTR_OP_KERNEL_LIB
from ge.errors import GeError, warn
from ge.ops import Role

__all__ = ["Engine", "ENGINES", "EXCLUDE_TOKENS", "GE_LOCAL_ROLES", "AICORE",
           "VECTOR", "AICPU", "GE_LOCAL", "COMPILED_ENGINES", "place_engines", "excluded_engines",
           "kernels_excluded",
           "supported_engines", "ATTR_ENGINE", "ATTR_KERNEL_LIB", "ATTR_OP_KERNEL_LIB"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Engine:
    name: str
    cost: int           # lower = higher priority (spec §2.1)
    kernel_lib: str     # kernel store name recorded on the op


ENGINES = {e.name: e for e in (
    Engine("DNN_VM_CUSTOM", 0, "custom"),
    Engine("AIcoreEngine", 1, "AIcoreEngine"),
    Engine("ffts_plus", 1, "ffts_plus"),
    Engine("VectorEngine", 2, "VectorEngine"),
    Engine("DSAEngine", 2, "DSAEngine"),
    Engine("DNN_VM_RTS", 2, "DNN_VM_RTS_OP_STORE"),
    Engine("DNN_HCCL", 2, "ops_kernel_info_hccl"),
    Engine("DNN_VM_AICPU_ASCEND", 3, "aicpu_ascend_kernel"),
    Engine("DNN_VM_AICPU", 4, "aicpu_tf_kernel"),
    Engine("DNN_VM_DVPP", 5, "dvpp_ops_kernel"),
    Engine("DNN_VM_GE_LOCAL", 9, "DNN_VM_GE_LOCAL_OP_STORE"),
    Engine("DNN_VM_HOST_CPU", 10, "DNN_VM_HOST_CPU_OP_STORE"),
)}
AICORE, VECTOR, AICPU, GE_LOCAL = "AIcoreEngine", "VectorEngine", "DNN_VM_AICPU", "DNN_VM_GE_LOCAL"
COMPILED_ENGINES = (AICORE, VECTOR)     # engines whose ops get a compiled C kernel

# ge.exec.exclude_engines token -> engine (spec §2.2; `AiVec` is the seed's name, §0)
EXCLUDE_TOKENS = {
    "AiCore": AICORE, "AiVec": VECTOR, "AiVector": VECTOR, "Dsa": "DSAEngine",
    "Dvpp": "DNN_VM_DVPP", "AiCpuAscend": "DNN_VM_AICPU_ASCEND", "AiCpu": AICPU,
    "HostCpu": "DNN_VM_HOST_CPU", "Hccl": "DNN_HCCL", "FftsPlus": "ffts_plus",
}

# Ops the graph engine handles itself: graph I/O, constants, calls and control flow, and the
# reshape family (output 0 holds the bytes of input 0).
GE_LOCAL_ROLES = frozenset({Role.DATA, Role.CONST, Role.OUTPUT, Role.CONTROL, Role.ALIAS})

OPT_EXCLUDE = "ge.exec.exclude_engines"
OPT_ENGINE_TYPE = "ge.engineType"
WARN_UNKNOWN_ENGINE = "WP0110"


def _excluded(options: Mapping[str, str]) -> tuple:
    """(engines excluded by `ge.exec.exclude_engines` plus the implicit core-type rule (§2.2),
    the unknown tokens)."""
    out, unknown = set(), []
    for token in (options.get(OPT_EXCLUDE) or "").split("|"):
        token = token.strip()
        if token and token not in EXCLUDE_TOKENS:
            unknown.append(token)
        elif token:
            out.add(EXCLUDE_TOKENS[token])
    out.add(AICORE if (options.get(OPT_ENGINE_TYPE) or "").strip() == "VectorCore" else VECTOR)
    return out, unknown


def excluded_engines(options: Mapping[str, str]) -> set:
    """Engines excluded by `ge.exec.exclude_engines` plus the implicit core-type rule (§2.2);
    an unknown token is warned (WP0110) and ignored."""
    out, unknown = _excluded(options)
    for token in unknown:
        warn(WARN_UNKNOWN_ENGINE, {"name": token, "known": ", ".join(EXCLUDE_TOKENS)})
    return out


def kernels_excluded(options: Mapping[str, str]) -> bool:
    """True when every engine whose ops get compiled kernels is excluded (nothing to compile),
    without warning of unknown tokens (excluded_engines does, once per compile)."""
    return set(COMPILED_ENGINES) <= _excluded(options)[0]


def supported_engines(node) -> tuple:
    """(engine names that support the node, reasons why the compiled engines refuse it)."""
    from ge.ops import registry
    from ge.compiler.opcompile.generators import check_supported, generator_for
    from ge.compiler.opcompile.signature import signature_of
    opdef = registry.get(node.type)
    if opdef is not None and opdef.role in GE_LOCAL_ROLES:
        return (GE_LOCAL,), ""
    engines, reason = [], ""
    gen = generator_for(node.type)
    if gen is None:
        reason = f"no C kernel generator for {node.type}"
    else:
        reason = check_supported(signature_of(node, gen.const_inputs)) or ""
        if not reason:
            engines += [AICORE, VECTOR]
    if opdef is not None and opdef.kernel is not None:
        engines.append(AICPU)
    elif opdef is None:
        reason = f"op type {node.type} is not registered"
    return tuple(engines), reason


def _record(node, engine: Engine) -> None:
    node.set_attr(ATTR_OP_KERNEL_LIB, engine.kernel_lib)
    node.set_attr(ATTR_ENGINE, engine.name)
    node.set_attr(ATTR_KERNEL_LIB, engine.kernel_lib)


def _choose(node, excluded: set, exclude_text: str) -> Engine:
    specified = node.attr("_specified_engine_name"), node.attr("_specified_kernel_lib_name")
    if specified[0] and specified[1]:            # spec §2.3 step 2: exclusion ignored
        base = ENGINES.get(specified[0])
        return Engine(specified[0], base.cost if base else 99, specified[1])
    names, reason = supported_engines(node)
    candidates = sorted((ENGINES[n] for n in names if n in ENGINES), key=lambda e: e.cost)
    for engine in candidates:
        if engine.name not in excluded:
            return engine
    if candidates:
        why = (f"the engines supporting it ({', '.join(e.name for e in candidates)}) are all "
               f"excluded (ge.exec.exclude_engines={exclude_text!r}, ge.engineType)")
        if reason:
            why += f"; compiled kernel refused: {reason}"
    else:
        why = reason or "no engine supports it"
    raise GeError("EZ3003", {"opname": node.name, "optype": node.type, "reason": why})


def place_engines(graph, options: Mapping[str, str]) -> None:
    """Assign an engine to every node of `graph` (not its subgraphs: call once per graph)."""
    excluded = excluded_engines(options)
    exclude_text = options.get(OPT_EXCLUDE) or ""
    counts: dict = {}
    for node in graph.nodes:
        if node.attr(ATTR_ENGINE) and node.attr(ATTR_KERNEL_LIB):   # §2.3 step 1: kept
            continue
        engine = _choose(node, excluded, exclude_text)
        _record(node, engine)
        counts[engine.name] = counts.get(engine.name, 0) + 1
    log.info("engine placement of %s: %s", graph.name,
             ", ".join(f"{k}={v}" for k, v in sorted(counts.items())))


def engine_of(node) -> Optional[str]:
    return node.attr(ATTR_ENGINE)
