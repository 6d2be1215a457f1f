"""How many threads a model run uses (`--threads`, `load(threads=)`, `InferSession(threads=)`).

The default is what onnxruntime's default intra-op pool would use on this host: one thread per
physical core among the CPUs this process may run on (hyper-threads of one core count once).
The threads are OpenBLAS's, splitting every sgemm of the convolution kernels; the MatMul
kernels, large softmaxes and layer norms split their own work (ge/compiler/opcompile/jobs.py);
the other kernels run on the calling thread.  Both split the output, never a sum, so the
results are the same bits for any count where the sgemm kernels are
(tests/runtime/test_threads.py).
"""
from __future__ import annotations

import functools
import os

from ge.errors import GeError

__all__ = ["default_threads", "usable_cpus", "check_threads"]

_TOPOLOGY = "/sys/devices/system/cpu/cpu{}/topology/{}"


def usable_cpus() -> list:
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return list(range(os.cpu_count() or 1))


def _core_of(cpu: int):
    """(package, core) of a logical CPU, or the CPU itself where sysfs does not say."""
    try:
        with open(_TOPOLOGY.format(cpu, "physical_package_id"), encoding="ascii") as f:
            package = f.read().strip()
        with open(_TOPOLOGY.format(cpu, "core_id"), encoding="ascii") as f:
            return package, f.read().strip()
    except OSError:
        return ("cpu", cpu)


@functools.lru_cache(maxsize=1)
def default_threads() -> int:
    """Physical cores among the usable CPUs (onnxruntime's intra-op default)."""
    return max(1, len({_core_of(cpu) for cpu in usable_cpus()}))


def check_threads(value, source: str) -> int:
    """A thread count from `source` (a flag or an argument), or EP0320 naming it."""
    if value is None:
        return default_threads()
    limit = len(usable_cpus())
    try:
        count = int(value)
        if isinstance(value, float) or str(value).strip() != str(count):
            raise ValueError
    except (TypeError, ValueError):
        raise GeError("EP0320", {"value": repr(value), "source": source,
                                 "reason": "it is not a whole number"}) from None
    if not 1 <= count <= limit:
        raise GeError("EP0320", {"value": count, "source": source,
                                 "reason": f"it must be between 1 and {limit}, the CPUs this "
                                           f"process may use"})
    return count
