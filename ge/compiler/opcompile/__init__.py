"""The operator compiler for the host target: C kernel generators (generators.py and gen_*.py),
the system C compiler (build.py), the kernel ABI and reference loader (cgen.py, hostcall.py)
and `compile_ops`, which the pipeline calls after engine placement (compile.py).
See docs/kernel-abi.md."""
from .compile import (ATTR_KERNEL_NAME, ATTR_KERNEL_SHA256, CompiledKernels, KernelRef,
                      compile_ops, parallel_jobs)
from .generators import RENDERERS, check_supported, generator_for
from .signature import OpSignature, TensorSig, signature_of

__all__ = ["compile_ops", "CompiledKernels", "KernelRef", "ATTR_KERNEL_NAME",
           "ATTR_KERNEL_SHA256", "RENDERERS", "generator_for", "check_supported",
           "OpSignature", "TensorSig", "signature_of", "parallel_jobs"]
