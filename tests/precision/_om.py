"""Reading the dtype decisions back out of an OM."""
from __future__ import annotations

from collections import defaultdict

from ge.graph.attr_names import ATTR_PRECISION
from ge.graph.serialize import from_proto_dtype
from ge.om import read_om


def decisions(om_path) -> dict:
    """{op name: (op type, dtype, list, by)} of every op the dtype stage decided."""
    out = {}
    for op in read_om(str(om_path)).model_def.graph[0].op:
        if ATTR_PRECISION in op.attr:
            rec = dict(p.split("=", 1) for p in op.attr[ATTR_PRECISION].s.decode().split())
            out[op.name] = (op.type, rec["dtype"], rec["list"], rec["by"])
    return out


def dtypes_by_type(om_path) -> dict:
    """{op type: set of dtypes its ops run in}."""
    out = defaultdict(set)
    for op_type, dtype, _, _ in decisions(om_path).values():
        out[op_type].add(dtype)
    return dict(out)


def ops_of(om_path, op_type: str) -> list:
    return [op for op in read_om(str(om_path)).model_def.graph[0].op if op.type == op_type]


def const_dtypes(om_path) -> set:
    """DataType names of the float constants (weights) stored in the OM."""
    found = set()
    for op in read_om(str(om_path)).model_def.graph[0].op:
        if op.type == "Const" and op.output_desc:
            found.add(from_proto_dtype(int(op.output_desc[0].dtype)).name)
    return found
