"""Test harness for ge.ops: one ONNX node run by onnxruntime vs the equivalent IR node built by
hand (Data / Const producers, the op, a NetOutput) run by ge.ops.interpreter, with every
output's inferred shape and dtype checked against what the kernel produced."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

import ge.ops as ops
from ge.graph import Graph, Tensor
from ge.graph.types import from_numpy_dtype
from ge.ops.interpreter import run_graph


def run_onnx(op_type, inputs, attrs=None, n_out=1, opset=17, domain=""):
    """inputs: list of (name, array) in ONNX order; name "" = omitted optional input."""
    names = [n for n, _ in inputs]
    node = helper.make_node(op_type, names, [f"y{i}" for i in range(n_out)], domain=domain,
                            **(attrs or {}))
    vis = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
           for n, a in inputs if n]
    outs = [onnx.ValueInfoProto(name=f"y{i}") for i in range(n_out)]
    model = helper.make_model(helper.make_graph([node], "t", vis, outs),
                              opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = min(model.ir_version, 10)
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), opts,
                                providers=["CPUExecutionProvider"])
    return sess.run(None, {n: a for n, a in inputs if n})


def build_ir(op_type, ir_inputs, attrs=None, n_out=1):
    """ir_inputs: list of ("data", array) | ("const", array) | None.  Returns (graph, feeds,
    node).  Producers are inferred first, then the node."""
    opdef = ops.lookup(op_type)
    g = Graph("t")
    edges, feeds = [], []
    for i, spec in enumerate(ir_inputs):
        if spec is None:
            edges.append(None)
            continue
        kind, arr = spec
        arr = np.asarray(arr)
        if kind == "const":
            src = g.add_node("Const", f"c{i}", attrs={"value": Tensor.from_numpy(arr)})
        else:
            src = g.add_node("Data", f"d{i}", input_names=["x"], output_names=["y"],
                             inputs=[None])
            src.set_attr("index", len(feeds))
            desc = src.in_desc(0)
            desc.set_shape(list(arr.shape)).set_data_type(from_numpy_dtype(arr.dtype))
            feeds.append(arr)
        ops.infer_node(src)
        edges.append((src, 0))
    node = g.add_node(op_type, "op", inputs=edges,
                      input_names=ops.slot_names(opdef, len(edges)),
                      output_names=ops.slot_names(opdef, n_out, outputs=True))
    for k, v in (attrs or {}).items():
        spec = opdef.attr_spec(k)
        if spec is not None:
            node.set_attr_kind(k, spec.kind, v)
        else:
            node.set_attr(k, v)
    return g, feeds, node


def run_ir(op_type, ir_inputs, attrs=None, n_out=1):
    g, feeds, node = build_ir(op_type, ir_inputs, attrs, n_out)
    inferred = ops.infer_node(node)
    g.add_node("NetOutput", "out", inputs=[(node, i) for i in range(n_out)])
    outs = run_graph(g, feeds)
    for i, (out, (shape, dt)) in enumerate(zip(outs, inferred)):
        assert shape == tuple(out.shape), f"{op_type} output {i}: inferred {shape}, " \
                                          f"kernel gave {out.shape}"
        assert dt == from_numpy_dtype(out.dtype), f"{op_type} output {i}: inferred " \
                                                  f"{dt.name}, kernel gave {out.dtype}"
    return outs
