"""The Caffe reference of `python3 -m ge.runtime.compare --caffe x.prototxt --weight
x.caffemodel --om x.om`: OpenCV's DNN module (`cv2.dnn.readNetFromCaffe`) runs the original
network; OpenCV is imported only here, and its absence is a coded error (EP0601).

Outputs are matched by position with the tops the parser makes the graph outputs (tops no
later layer reads).  With dump, our ops map to Caffe layers through
`_datadump_original_op_names` (the layer name); a layer whose top a later in-place layer
overwrites is not compared (OpenCV hands back the overwritten value), nor are layers OpenCV
fuses away, and the last of our ops standing for a layer carries its value.
"""
from __future__ import annotations

import numpy as np

from ge.errors import GeError

from ._errors import BAD_INPUT
from .compare import Comparison, diff, prepare_run

__all__ = ["compare_caffe", "run_opencv"]

_OPENCV = "'opencv-python-headless<5' (pip), the test extra of pyatc"


def _cv2():
    try:
        import cv2
    except ImportError as exc:
        raise GeError("EP0601", {"reason": f"OpenCV (cv2) cannot be imported ({exc}); install "
                                           f"{_OPENCV}"}) from None
    if not hasattr(cv2, "dnn") or not hasattr(cv2.dnn, "readNetFromCaffe"):
        raise GeError("EP0601", {"reason": f"OpenCV {cv2.__version__} has no Caffe importer "
                                           f"(cv2.dnn.readNetFromCaffe; OpenCV 5 dropped it); "
                                           f"install {_OPENCV}"})
    return cv2


def run_opencv(prototxt: str, weight: str, feeds: dict, names: list) -> list:
    """The first output of each layer in `names`, fusion off so every layer is computed."""
    cv2 = _cv2()
    try:
        net = cv2.dnn.readNetFromCaffe(prototxt, weight)
    except cv2.error as exc:
        raise GeError("EP0601", {"reason": f"OpenCV cannot read the model: {exc}"}) from None
    net.enableFusion(False)
    for name, value in feeds.items():
        net.setInput(np.ascontiguousarray(value), name)
    return list(net.forward(names))


def _layer_of_tops(prototxt: str) -> tuple[dict, set]:
    """Top name -> the last layer writing it; layers whose top is overwritten in place."""
    from ge.parser.caffe._model import read_prototxt
    writer, overwritten = {}, set()
    for layer in read_prototxt(prototxt).layer:
        for top in layer.top:
            if top in writer and top in layer.bottom:
                overwritten.add(writer[top])
            writer[top] = layer.name
    return writer, overwritten


def compare_caffe(prototxt: str, weight: str, om_model, inputs=None, *, rtol: float = 1e-4,
                  atol: float = 1e-5, seed: int = 0, dump: bool = False,
                  op_name_map: str = "") -> Comparison:
    """`op_name_map`: the --op_name_map file the OM was compiled with (OpenCV reads the
    original layer types)."""
    from ge.parser.caffe import parse_caffe
    model, inputs, feeds = prepare_run(om_model, inputs, seed)
    graph = parse_caffe(prototxt, weight, {"op_name_map": op_name_map})
    net_output = next(n for n in graph.get_all_nodes() if n.type == "NetOutput")
    tops = [net_output.in_desc(k).name for k in range(net_output.num_inputs)]
    if len(tops) != len(model.outputs):
        raise GeError(BAD_INPUT, {"reason": f"the OM has {len(model.outputs)} outputs, the "
                                            f"Caffe network {len(tops)} ({', '.join(tops)})"})
    writer, overwritten = _layer_of_tops(prototxt)
    out_layers = [writer[t] for t in tops]
    steps, layers = [], []
    if dump:
        ours, seen = model.run(inputs, capture=True)
        steps = _layer_steps(model, writer, overwritten)
        layers = sorted({layer for layer, _ in steps} - set(out_layers))
    else:
        ours, seen = model.run(inputs), None
    values = dict(zip(out_layers + layers, run_opencv(prototxt, weight, feeds,
                                                      out_layers + layers)))
    result = Comparison()
    for k, value in enumerate(ours):
        result.outputs.append(diff(model.outputs[k].name, tops[k], value,
                                   values[out_layers[k]], rtol, atol))
    if dump:
        mapped = {id(step) for _, step in steps}
        result.unmapped = [s.name for s in model._plan.root.steps if id(s) not in mapped]
    for layer, step in steps:
        if step.name in seen:
            result.nodes.append(diff(step.name, layer, seen[step.name][0], values[layer],
                                     rtol, atol, step.type))
    return result


def _layer_steps(model, writer: dict, overwritten: set) -> list:
    """(Caffe layer, our last step standing for it), in our execution order."""
    layers = set(writer.values()) - overwritten
    root = model._plan.root
    last = {}
    for step in root.steps:
        known = [o for o in step.origin if o in layers]
        if known:
            last[known[-1]] = step
    chosen = {id(s): layer for layer, s in last.items()}
    return [(chosen[id(s)], s) for s in root.steps if id(s) in chosen]
