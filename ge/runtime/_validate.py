"""Each compiled op's plan checked against what its kernel declares, before anything runs.

A kernel trusts its pointers completely: it reads and writes exactly the tensors of the
signature it was generated for (`ge_kernel_signature`, docs/kernel-abi.md) and uses
`ge_kernel_workspace_bytes` of scratch.  An OM whose ModelDef was edited after compilation
while every kernel hash stays valid (a shape, a dtype, a dropped workspace or input address,
another op's kernel named) would make it overrun its buffers; here that is EP0406 naming the
op.  The plan's own checks (ge.runtime._plan) already keep every address inside its space.
"""
from __future__ import annotations

import json

from ge.errors import GeError

from ._errors import KERNEL_MISMATCH

__all__ = ["check_kernel_step"]


def _mismatch(step, reason: str) -> GeError:
    return GeError(KERNEL_MISMATCH, {"opname": step.name, "optype": step.type,
                                     "kernel": step.kernel_name, "reason": reason})


def _declared_slots(declared: dict, key: str) -> list:
    slots = declared.get(key)
    if not isinstance(slots, list):
        raise ValueError(f"no {key} list")
    return [None if t is None else [t[0], t[1]] for t in slots]


def _check_slots(step, kind: str, declared: list, given: list) -> None:
    if len(declared) != len(given):
        raise _mismatch(step, f"the kernel has {len(declared)} {kind} slots, the model gives "
                              f"{len(given)}")
    for k, (want, have) in enumerate(zip(declared, given)):
        if want is None and have is None:
            continue
        if want is None or have is None:
            raise _mismatch(step, f"{kind} {k} is {'absent' if want is None else 'present'} "
                                  f"in the kernel, {'absent' if have is None else 'present'} "
                                  f"in the model")
        if want != have:
            raise _mismatch(step, f"{kind} {k} is {want[1]} {want[0]} in the kernel, "
                                  f"{have[1]} {have[0]} in the model")


def check_kernel_step(step, signature: str, workspace_bytes: int) -> None:
    """Refuse (EP0406) a step whose op type, slots, shapes, dtypes or workspace differ from
    the kernel's declarations."""
    try:
        declared = json.loads(signature)
        op_type = declared["op_type"]
        inputs, outputs = _declared_slots(declared, "inputs"), _declared_slots(declared,
                                                                               "outputs")
    except (ValueError, KeyError, TypeError, IndexError) as e:
        raise _mismatch(step, f"its ge_kernel_signature is not a signature ({e})") from None
    if op_type != step.type:
        raise _mismatch(step, f"the kernel is for op type {op_type}")
    given_in, given_out = step.io
    _check_slots(step, "input", inputs, given_in)
    _check_slots(step, "output", outputs, given_out)
    workspace = step.attrs.get("__workspace__") or []
    have = int(workspace[0][1]) if workspace else 0
    if workspace_bytes > have:
        raise _mismatch(step, f"the kernel needs {workspace_bytes} bytes of workspace, the "
                              f"model gives {have}")
