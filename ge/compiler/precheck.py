"""Mode 3 (pre-check): which nodes of a model this compiler supports, in the layout of
atc-cli.md §9.3.  Cause codes: 0 OK, 1 type unsupported, 9 name repeated."""
from __future__ import annotations

from ge.errors import GeError

CAUSE_UNSUPPORTED = 1
CAUSE_NAME_REPEATED = 9


def _check_onnx(model_path: str) -> tuple[str, list]:
    from ge.parser.onnx._build import _subgraph_attrs, read_opsets
    from ge.parser.onnx._mappings import lookup, make_key
    from ge.parser.onnx._model import load_model_bytes, read_model_file
    import os
    model = load_model_bytes(read_model_file(model_path), model_path)
    opsets = read_opsets(model)
    ops = []

    def visit(graph, prefix):
        seen = set()
        for n in graph.node:
            name = f"{prefix}/{n.name}" if prefix else (n.name or n.op_type)
            causes = []
            if n.name and n.name in seen:
                causes.append({"code": CAUSE_NAME_REPEATED,
                               "message": f"op name {name} is repeated"})
            seen.add(n.name)
            domain = n.domain or "ai.onnx"
            version = opsets.get(domain, 0)
            if lookup(domain, version, n.op_type) is None:
                causes.append({"code": CAUSE_UNSUPPORTED,
                               "message": f"type {make_key(domain, version, n.op_type)} "
                                          "is not supported"})
            ops.append({"name": name, "type": n.op_type,
                        "result": "failed" if causes else "success", "cause": causes})
            for _attr, sub in _subgraph_attrs(n):
                visit(sub, name)

    visit(model.graph, "")
    name = os.path.splitext(os.path.basename(model_path))[0]
    return name, ops


def _check_tensorflow(model_path: str) -> tuple[str, list]:
    """Every node of the GraphDef and of its function library (named <function>/<node>)."""
    import os
    from ge.parser.tensorflow import is_supported, load_graph_def
    graph_def = load_graph_def(model_path)
    ops = []
    bodies = [("", graph_def.node)] + [(f.signature.name, f.node_def)
                                       for f in graph_def.library.function]
    for prefix, nodes in bodies:
        seen = set()
        for n in nodes:
            name = f"{prefix}/{n.name}" if prefix else n.name
            causes = []
            if n.name in seen:
                causes.append({"code": CAUSE_NAME_REPEATED,
                               "message": f"op name {name} is repeated"})
            seen.add(n.name)
            if not is_supported(n.op):
                causes.append({"code": CAUSE_UNSUPPORTED,
                               "message": f"type {n.op} is not supported"})
            ops.append({"name": name, "type": n.op,
                        "result": "failed" if causes else "success", "cause": causes})
    return os.path.splitext(os.path.basename(model_path))[0], ops


_CHECKS = {5: _check_onnx, 3: _check_tensorflow}


def run_precheck(model_path: str, framework: int, options: dict) -> dict:
    if framework not in _CHECKS:
        raise GeError("EP0002", {"feature": f"--mode=3 with --framework={framework}",
                                 "reason": "the pre-check reads ONNX (5) and TensorFlow (3) "
                                           "models only"})
    name, ops = _CHECKS[framework](model_path)
    failed = sum(1 for op in ops if op["result"] == "failed")
    return {"name": name, "result": "failed" if failed else "success", "total": len(ops),
            "pass": len(ops) - failed, "fail": failed, "op": ops}
