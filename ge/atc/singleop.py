"""The single-op flow (`atc --singleop=ops.json --output=DIR`, spec/atc-cli.md §6.13, §8.3).

The whole list is read and checked first (a bad file writes nothing); then every op is compiled
and written to `DIR/<file name>` on its own.  An op that fails does not stop the others; the run
then fails with EP0700 naming every failed op and why.  Compiling and naming are
`ge.compiler.api` and `ge.parser.singleop`; this module only runs the list and writes.
"""
from __future__ import annotations

import os

from ge.errors import GeError
from ge.fsutil import os_reason

from .flags import BY_NAME
from .options import SINGLEOP_FLAGS, RunState, singleop_options

__all__ = ["run_singleop", "SINGLEOP_FLAG_RECORDS"]

# the flags this flow reads (§8.3): refusals and WP0001 warnings look at these only
SINGLEOP_FLAG_RECORDS = tuple(BY_NAME[name] for name in SINGLEOP_FLAGS)


def _output_dir(path: str) -> None:
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:
        raise GeError("E13004", {"file": path, "reason": os_reason(exc)}) from None


def _failure_report(path: str, total: int, failed: list) -> GeError:
    labels = [f"{op.node_name} (entry {op.entry})" for op, _ in failed]
    reasons = [f"{label}: {error.code} {error.message}"
               for label, (_, error) in zip(labels, failed)]
    return GeError("EP0700", {"failed": str(len(failed)), "total": str(total), "file": path,
                              "ops": ", ".join(labels), "reasons": " | ".join(reasons)})


def run_singleop(state: RunState) -> None:
    from ge.compiler.api import build_single_op, read_single_ops, save_om
    from ge.parser.singleop import file_name
    options = singleop_options(state)
    path, out_dir = state.get("singleop"), state.get("output")
    op_list = read_single_ops(path)
    if op_list:
        _output_dir(out_dir)
    failed = []
    for op in op_list:
        name = file_name(op)
        try:
            compiled = build_single_op(op, name[:-len(".om")], options)
            save_om(os.path.join(out_dir, name), compiled, " ".join(state.argv))
        except GeError as error:
            failed.append((op, error))
    if failed:
        raise _failure_report(path, len(op_list), failed)
