"""Mode 3 (pre-check): which nodes of a model this compiler supports, in the layout of
atc-cli.md §9.3.  Cause codes: 0 OK, 1 type unsupported (9, name repeated, is never reported:
repeated ONNX node names are made unique and compile, docs/parser.md)."""
from __future__ import annotations

from ge.errors import GeError

CAUSE_UNSUPPORTED = 1


def _check_onnx(model_path: str) -> tuple[str, list]:
    from ge.parser.onnx._build import _subgraph_attrs, read_opsets
    from ge.parser.onnx._mappings import lookup, make_key
    from ge.parser.onnx._model import load_model_bytes, read_model_file
    import os
    model = load_model_bytes(read_model_file(model_path), model_path)
    opsets = read_opsets(model)
    ops = []

    def visit(graph, prefix):
        for n in graph.node:
            name = f"{prefix}/{n.name}" if prefix else (n.name or n.op_type)
            causes = []
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


def _check_caffe(model_path: str, options: dict) -> tuple[str, list]:
    from ge.parser.caffe import supported_layers
    net_name, layers = supported_layers(model_path, options)
    ops, seen = [], set()
    for name, kind, supported in layers:
        causes = []
        if name in seen:
            causes.append({"code": CAUSE_NAME_REPEATED, "message": f"op name {name} is repeated"})
        seen.add(name)
        if not supported:
            causes.append({"code": CAUSE_UNSUPPORTED, "message": f"type {kind} is not supported"})
        ops.append({"name": name, "type": kind, "result": "failed" if causes else "success",
                    "cause": causes})
    import os
    return net_name or os.path.splitext(os.path.basename(model_path))[0], ops


def run_precheck(model_path: str, framework: int, options: dict) -> dict:
    if framework not in (0, 3, 5):
        raise GeError("EP0002", {"feature": f"--mode=3 with --framework={framework}",
                                 "reason": "the pre-check reads ONNX (5), Caffe (0) and "
                                           "TensorFlow (3) models"})
    if framework == 0:
        name, ops = _check_caffe(model_path, options)
    elif framework == 3:
        name, ops = _check_tensorflow(model_path)
    else:
        name, ops = _check_onnx(model_path)
    failed = sum(1 for op in ops if op["result"] == "failed")
    return {"name": name, "result": "failed" if failed else "success", "total": len(ops),
            "pass": len(ops) - failed, "fail": failed, "op": ops}
