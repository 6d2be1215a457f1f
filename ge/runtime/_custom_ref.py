"""The ONNX reference of a model that uses custom operator packages (docs/custom-ops.md).

onnxruntime cannot run a node of a custom domain (`com.example::Swish`), so such a model is
evaluated node by node in ONNX order: a node a package maps runs the package's numpy reference
(OpDef.kernel) with the mapping's attribute conversion, every other node runs alone in
onnxruntime.  Slower than one session, but each standard node still has onnxruntime's
semantics, so `compare` checks the custom op against what its author declared.
"""
from __future__ import annotations

import numpy as np

from ge.errors import GeError
from ge.ops import custom, get

from ._errors import BAD_INPUT

__all__ = ["custom_nodes", "run_node_by_node"]


def _opsets(model) -> dict:
    return {o.domain or "ai.onnx": o.version for o in model.opset_import}


def _mapping(node, opsets: dict):
    domain = node.domain or "ai.onnx"
    return custom.find_mapping("onnx", f"{domain}::{node.op_type}", opsets.get(domain))


def custom_nodes(model) -> list:
    """The nodes of the main graph that a custom operator package maps."""
    opsets = _opsets(model)
    return [n for n in model.graph.node if _mapping(n, opsets) is not None]


def _run_custom(node, mapping, values: dict) -> list:
    from onnx import helper
    opdef = get(mapping.op_type)
    framework = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    attrs = {a.name: a.default for a in opdef.attrs if not a.required}
    attrs.update(custom.convert_attrs(mapping, framework))
    return opdef.kernel([values[i] if i else None for i in node.input], attrs)


def _run_standard(node, model, values: dict, session_options) -> list:
    import onnxruntime as ort
    from onnx import helper
    from onnx.helper import np_dtype_to_tensor_dtype
    if any(a.type in (a.GRAPH, a.GRAPHS) for a in node.attribute):
        raise GeError(BAD_INPUT, {"reason": f"node {node.name} ({node.op_type}) has subgraphs; "
                                  f"a model with custom ops is compared node by node, which "
                                  f"does not run subgraphs"})
    names = [i for i in node.input if i]
    inputs = [helper.make_tensor_value_info(n, np_dtype_to_tensor_dtype(values[n].dtype),
                                            values[n].shape) for n in names]
    outputs = [helper.make_empty_tensor_value_info(o) for o in node.output if o]
    graph = helper.make_graph([node], "node", inputs, outputs)
    single = helper.make_model(graph, opset_imports=list(model.opset_import),
                               ir_version=model.ir_version)
    sess = ort.InferenceSession(single.SerializeToString(), session_options,
                                providers=["CPUExecutionProvider"])
    return sess.run([o.name for o in outputs], {n: values[n] for n in names})


def run_node_by_node(model, feeds: dict, session_options) -> dict:
    """{tensor name: array} of every tensor of the main graph."""
    from onnx import numpy_helper
    values = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    values.update(feeds)
    opsets = _opsets(model)
    for node in model.graph.node:
        mapping = _mapping(node, opsets)
        if mapping is not None:
            results = _run_custom(node, mapping, values)
        else:
            results = _run_standard(node, model, values, session_options)
        for name, value in zip([o for o in node.output if o], results):
            values[name] = np.asarray(value)
    return values
