"""Numerical comparison of an OM (this runtime) with its frozen TensorFlow graph, run by
TensorFlow itself (`python3 -m ge.runtime.compare --tf m.pb --om m.om [--dump]`).

TensorFlow is imported here only, when a comparison runs; without it the comparison stops with
EP0504.  The reference outputs are the GraphDef's sinks (the parser's default outputs) or the
`out_nodes` given (`node:index;...`, as at compile time).  With dump, every TF tensor one of
our ops stands for (`_datadump_original_op_names`) is fetched too; the last of our ops naming a
TF node carries its value, and the first op outside tolerance is the divergence point.
"""
from __future__ import annotations

import os
from ge.errors import GeError

from ._errors import BAD_INPUT
from .compare import Comparison, diff, prepare_run

__all__ = ["run_tensorflow", "compare_tf_model"]


def _import_tensorflow():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    try:
        import tensorflow as tf
    except ImportError:
        raise GeError("EP0504", {"package": "tensorflow",
                                 "what": "comparing with a TensorFlow model (--tf)"}) from None
    return tf


def run_tensorflow(graph_def, feeds: dict, fetches: list) -> dict:
    """{tensor name: array} of `fetches` ("node:index") with `feeds` {placeholder: array}."""
    tf = _import_tensorflow()
    tf_graph_def = tf.compat.v1.GraphDef()
    tf_graph_def.ParseFromString(graph_def.SerializeToString())
    graph = tf.Graph()
    with graph.as_default():
        tf.import_graph_def(tf_graph_def, name="")
    config = tf.compat.v1.ConfigProto(intra_op_parallelism_threads=1,
                                      inter_op_parallelism_threads=1)
    with tf.compat.v1.Session(graph=graph, config=config) as sess:
        values = sess.run(fetches, {f"{k}:0": v for k, v in feeds.items()})
    return dict(zip(fetches, values))


def _reference_outputs(graph_def, out_nodes: str) -> list:
    from ge.parser.tensorflow._options import parse_out_nodes
    from ge.parser.tensorflow import default_outputs
    if out_nodes:
        return [f"{n}:{i}" for n, i in parse_out_nodes(out_nodes)]
    nodes = {n.name: n for n in graph_def.node}
    names = []
    for sink in default_outputs(graph_def.node):
        node = nodes[sink]      # one output, except IdentityN: one per data input
        count = sum(not r.startswith("^") for r in node.input) if node.op == "IdentityN" else 1
        names += [f"{sink}:{i}" for i in range(count)]
    return names


def compare_tf_model(pb_path, om_model, inputs=None, *, rtol: float = 1e-4, atol: float = 1e-5,
                     seed: int = 0, dump: bool = False, out_nodes: str = "") -> Comparison:
    from ge.parser.tensorflow import load_graph_def
    model, inputs, feeds = prepare_run(om_model, inputs, seed)
    graph_def = load_graph_def(pb_path)
    ref_outputs = _reference_outputs(graph_def, out_nodes)
    if len(ref_outputs) != len(model.outputs):
        raise GeError(BAD_INPUT, {"reason": f"the OM has {len(model.outputs)} outputs, the "
                                            f"TensorFlow graph {len(ref_outputs)} "
                                            f"({', '.join(ref_outputs)}); give --out_nodes"})
    ours, seen = model.run(inputs, capture=True) if dump else (model.run(inputs), None)
    tensors = {}
    if dump:
        tensors = _dump_targets(model, graph_def)
    ref = run_tensorflow(graph_def, feeds, ref_outputs + sorted(set(tensors.values())))
    result = Comparison()
    for k, value in enumerate(ours):
        result.outputs.append(diff(model.outputs[k].name, ref_outputs[k], value,
                                   ref[ref_outputs[k]], rtol, atol))
    if dump:
        for step in model._plan.root.steps:
            name = tensors.get(step.name)
            if name is not None and step.name in seen:
                result.nodes.append(diff(step.name, name, seen[step.name][0], ref[name], rtol,
                                         atol, step.type))
            elif name is None:
                result.unmapped.append(step.name)
    return result


_NOT_FETCHABLE = ("NoOp", "Placeholder", "Const")


def _dump_targets(model, graph_def) -> dict:
    """{our op: TF tensor "node:0"}: the last of our ops standing for a TF node carries it."""
    position = {n.name: i for i, n in enumerate(graph_def.node)
                if n.op not in _NOT_FETCHABLE}
    target: dict = {}
    for step in model._plan.root.steps:
        known = [o for o in step.origin if o in position]
        if known:
            target[max(known, key=position.get)] = step.name
    return {step: f"{tf_name}:0" for tf_name, step in target.items()}
