"""Precision-aware comparison (docs/runtime.md, "Precision"): the fixed tolerance of each dtype,
the dtype each compared tensor was computed in, the per-op-type dtype report and the
--keep_dtype hint for a diverging op.

A tensor is as precise as the least precise dtype on its way from the inputs: an op that
computes in float32 behind a float16 op carries the float16 error, so it is compared at the
float16 tolerance.  That effective dtype is followed through the steps of the OM in execution
order (producers are found by buffer address, as the runtime binds them).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from ge.graph.attr_names import ATTR_PRECISION
from ge.ops.precision import precision_list

__all__ = ["Tolerance", "TOLERANCES", "effective_dtypes", "tolerance_for", "dtype_report",
           "format_dtype_report", "keep_dtype_hint", "op_precision"]


@dataclass(frozen=True)
class Tolerance:
    rtol: float      # times the tensor's largest magnitude
    atol: float


# |ours - reference| <= atol + rtol * max|reference|, per tensor (docs/runtime.md).
TOLERANCES = {
    "float32": Tolerance(1e-4, 1e-5),
    "float16": Tolerance(1e-1, 1e-3),
    "bfloat16": Tolerance(5e-1, 1e-2),
}
_RANK = {"float32": 0, "float16": 1, "bfloat16": 2}     # higher = less precise


def op_precision(step) -> dict:
    """The dtype-assignment record of a step: {"dtype": ..., "list": ..., "by": ...}."""
    raw = step.attrs.get(ATTR_PRECISION)
    text = raw[1] if isinstance(raw, tuple) else raw
    if not text:
        return {}
    return dict(part.split("=", 1) for part in str(text).split() if "=" in part)


def _address(view) -> int:
    return view.__array_interface__["data"][0] if view is not None and view.size else 0


_LOW_NAMES = {"DT_FLOAT16": "float16", "DT_BF16": "bfloat16"}


def _output_dtype(step) -> str:
    """float16 / bfloat16 when a step without a record (a Cast) writes one, else float32."""
    outs = step.io[1] if len(step.io) > 1 else ()
    names = [_LOW_NAMES.get(slot[1]) for slot in outs if slot]
    return max([n for n in names if n] or ["float32"], key=lambda d: _RANK[d])


def effective_dtypes(model) -> tuple:
    """({step name: dtype name}, [dtype name per model output])."""
    producer_dtype: dict = {}          # buffer address -> effective dtype of its last writer
    per_step: dict = {}
    for step in model._plan.root.steps:
        own = op_precision(step).get("dtype") or _output_dtype(step)
        upstream = [producer_dtype.get(_address(v), "float32") for v in step.inputs
                    if v is not None]
        worst = max([own] + upstream, key=lambda d: _RANK.get(d, 0))
        per_step[step.name] = worst
        for view in step.outputs:
            producer_dtype[_address(view)] = worst
    outputs = [producer_dtype.get(_address(view), "float32")
               for _, view, _ in model._plan.root.outputs]
    return per_step, outputs


def tolerance_for(dtype: str, rtol=None, atol=None) -> tuple:
    """(rtol, atol): the table's for `dtype`, each overridden when given explicitly."""
    tol = TOLERANCES.get(dtype, TOLERANCES["float32"])
    return (tol.rtol if rtol is None else rtol), (tol.atol if atol is None else atol)


def keep_dtype_hint(step, onnx_name: str = "") -> str:
    """The --keep_dtype line that pins the op: its framework name when it has one."""
    return onnx_name or (step.origin[-1] if step.origin else step.name)


def dtype_report(model) -> tuple:
    """({op type: Counter(dtype name -> ops)}, {op type: list}) over the model's float ops."""
    report: dict = {}
    lists: dict = {}
    for graph in model._plan.graphs.values():
        for step in graph.steps:
            rec = op_precision(step)
            if rec:
                report.setdefault(step.type, Counter())[rec["dtype"]] += 1
                lists[step.type] = rec.get("list", precision_list(step.type))
    return report, lists


def format_dtype_report(model) -> str:
    report, lists = dtype_report(model)
    dtypes = sorted({d for c in report.values() for d in c}, key=lambda d: _RANK.get(d, 9))
    if not report:
        return "precision report: the model records no dtype decisions"
    lines = ["precision report (float ops per dtype):",
             f"{'op type':<24} {'list':<6} " + " ".join(f"{d:>9}" for d in dtypes)]
    for op_type in sorted(report):
        counts = report[op_type]
        lines.append(f"{op_type:<24} {lists[op_type]:<6} "
                     + " ".join(f"{counts.get(d, 0):>9}" for d in dtypes))
    total = Counter()
    for c in report.values():
        total.update(c)
    lines.append(f"{'total':<24} {'':<6} " + " ".join(f"{total.get(d, 0):>9}" for d in dtypes))
    return "\n".join(lines)
