"""ONNX backend node tests through the whole chain: parse -> compile -> OM -> ge.runtime.

    python3 bench/node_tests.py [--ops Relu,Conv] [--json out.json] [--list-failures]

Runs every node test case of the installed onnx package for every ONNX op our parser maps
(ge.runtime.nodecases), in this process (the kernel disk cache stays warm), and prints a pass
table by op and opset, then the failure reasons.  Cases whose opset is outside 8..18 are moved
there with onnx's version converter first; shape-determining inputs are frozen to the test's
values (pyatc.freeze_inputs, docs/runtime.md).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from ge.runtime.nodecases import collect_cases, onnx_version, run_case  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops", default="", help="comma-separated ONNX op types (default: all "
                                              "mapped)")
    ap.add_argument("--json", default="", help="write every case result to this file")
    ap.add_argument("--list-failures", action="store_true", help="print every failing case")
    args = ap.parse_args(argv)
    ops = {o for o in args.ops.split(",") if o} or None
    start = time.perf_counter()
    cases = collect_cases(ops)
    results = []
    for case in cases:
        results.append(run_case(case, diagnose=True))
    by_op = defaultdict(list)
    for r in results:
        by_op[r.op_type].append(r)
    print(f"ONNX backend node tests (onnx {onnx_version()}), {len(results)} cases, "
          f"{time.perf_counter() - start:.0f} s")
    print(f"{'op':<22} {'opsets':<9} {'pass':>4} {'fail':>4} {'n/a':>4}  first failure")
    total = defaultdict(int)
    for op in sorted(by_op):
        rs = by_op[op]
        counts = {k: sum(r.status == k for r in rs) for k in ("pass", "n/a")}
        failed = len(rs) - counts["pass"] - counts["n/a"]
        total["pass"] += counts["pass"]
        total["n/a"] += counts["n/a"]
        total["fail"] += failed
        opsets = ",".join(str(o) for o in sorted({r.opset for r in rs}))
        bad = next((r for r in rs if r.status in ("fail", "error")), None)
        note = f"{bad.case}: {bad.reason[:90]}" if bad else ""
        print(f"{op:<22} {opsets:<9} {counts['pass']:>4} {failed:>4} {counts['n/a']:>4}  {note}")
    print(f"total: {total['pass']} passed, {total['fail']} failed, {total['n/a']} not applicable "
          f"(types that ai.onnx opset 18 lacks)")
    if args.list_failures:
        for r in results:
            if r.status in ("fail", "error"):
                print(f"  {r.case} [{r.status}] {r.reason}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump([r.__dict__ for r in results], f, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
