"""Facts of an OM's memory plan and tasks that its writer (ge.compiler) and its reader
(ge.runtime) share (docs/memory-plan.md, docs/kernel-abi.md "TASK_INFO"): spelled once here."""
from __future__ import annotations

__all__ = ["MEMORY_ALIGN", "TASK_GEN_BASE_ADDR", "TASK_GEN_WEIGHT_ADDR", "MODEL_TASK_KERNEL",
           "KERNEL_TYPE_TE", "KERNEL_TYPE_AI_CPU"]

MEMORY_ALIGN = 64                 # every feature-map offset, and the runtime's arena start
TASK_GEN_BASE_ADDR = 0            # feature maps: base + offset in the arena
TASK_GEN_WEIGHT_ADDR = 1 << 40    # weights: this + offset inside WEIGHTS_DATA
MODEL_TASK_KERNEL = 0             # domi TaskDef.type of a kernel launch
KERNEL_TYPE_TE = 2                # domi KernelContext.kernel_type: compiled kernel (TBE_KERNELS)
KERNEL_TYPE_AI_CPU = 6            # ... : the op's reference kernel on the AiCpu engine
