"""NetParameter (+ weights) → ge.graph.Graph, following CANN's Caffe model parser: layers of the
TRAIN phase skipped, repeated names renamed `<name>_same_<n>`, every unsupported layer reported
at once, inputs from `input`/`input_shape`/`input_dim` and input layers, in-place tops resolved
(a top that is also a bottom is a new tensor), outputs = tops no later layer reads (or
--out_nodes).  Shapes are inferred layer by layer with ge.ops, because Caffe layer parameters
(InnerProduct's axis, Scale's operand, Crop, Reshape) need the bottoms' dims.  Knows no layer:
every layer fact is in the mapping table (_mappings.py).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ge import ops
from ge.errors import GeError
from ge.graph import DataType, Graph, TensorDesc
from ge.graph.types import AttrValueType as VT

from .._emit import ConvertError, add_node, port_names
from ._context import LayerCtx
from ._custom import row_for
from ._mappings import INPUT_TYPES, UNSUPPORTED_DETECTION
from ._model import is_train_only, unique_layer_names, weight_blobs
from ._options import CaffeOptions

__all__ = ["build_graph", "layer_type", "NET_OUTPUT"]

NET_OUTPUT = "Node_Output"
_NAME_RE = re.compile(r"^[A-Za-z0-9./_-]+$")     # CANN's check of layer names (E11018)


@dataclass
class _Top:
    """One tensor a layer (or input) wrote: a blob name's current version."""
    layer: str
    index: int
    blob: str
    edge: tuple
    consumed: bool = False


@dataclass
class _State:
    graph: Graph
    options: CaffeOptions
    weights: dict
    scope: dict = field(default_factory=dict)       # blob name -> _Top (latest writer)
    tops: list = field(default_factory=list)        # every _Top in creation order
    layer_tops: dict = field(default_factory=dict)  # layer name -> [_Top per top]
    data_index: int = 0


def layer_type(layer, op_name_map: dict) -> str:
    return op_name_map.get(layer.type, layer.type)


def _active_layers(net) -> list:
    return [(name, layer) for name, layer in zip(unique_layer_names(net), net.layer)
            if not is_train_only(layer)]


def precheck(layers: list, op_name_map: dict) -> None:
    """Names (E11018), tops (E11037), then every unsupported type in one report: E11008 for
    DetectionOutput (CANN asks for an explicit SSD/FSR type), else E11009."""
    unsupported = []
    for name, layer in layers:
        if not _NAME_RE.match(name):
            raise GeError("E11018", {"opname": name})
        if not layer.top:
            raise GeError("E11037", {"opname": name})
        kind = layer_type(layer, op_name_map)
        if row_for(kind) is None and kind not in INPUT_TYPES:
            unsupported.append((name, kind))
    if not unsupported:
        return
    if unsupported[0][1] == UNSUPPORTED_DETECTION:
        raise GeError("E11008", {})
    raise GeError("E11009", {"opname": unsupported[0][0], "optype": unsupported[0][1],
                             "layers": ", ".join(f"{n} ({t})" for n, t in unsupported)})


# -- inputs -------------------------------------------------------------------------------------

def _net_inputs(net) -> list:
    """(name, dims) of the NetParameter's `input` fields (CANN's ParseInput)."""
    names = list(net.input)
    if not names:
        return []
    if net.input_dim and net.input_shape:
        raise GeError("E11001", {})
    if net.input_dim:
        if len(net.input_dim) != 4 * len(names):
            raise GeError("E11003", {"input_dim_size": len(net.input_dim),
                                     "input_size": len(names)})
        dims = [list(net.input_dim[4 * i:4 * i + 4]) for i in range(len(names))]
    elif net.input_shape:
        if len(net.input_shape) != len(names):
            raise GeError("E11004", {"input_shape_size": len(net.input_shape),
                                     "input_size": len(names)})
        dims = [list(s.dim) for s in net.input_shape]
    else:
        dims = [None] * len(names)
    return list(zip(names, dims))


def _add_data(state: _State, layer_name: str, top: str, dims) -> None:
    user = state.options.input_shapes
    dims = user.get(layer_name, user.get(top, dims))
    if dims is None:
        raise GeError("E11005", {"input": top})
    if any(int(d) <= 0 for d in dims):
        raise GeError("E11027", {"opname": layer_name, "optype": "Data"})
    node = add_node(state.graph, "Data", layer_name, 1, 1, [layer_name])
    node.set_attr_kind("index", VT.VT_INT, state.data_index)
    node.set_attr_kind("data_type", VT.VT_INT, int(DataType.DT_FLOAT))
    desc = TensorDesc([int(d) for d in dims], state.options.input_format, DataType.DT_FLOAT)
    node.update_input_desc(0, desc)
    node.update_output_desc(0, desc)
    state.data_index += 1
    _write_top(state, layer_name, 0, top, (node, 0))


def _input_layer(state: _State, name: str, layer) -> None:
    if len(layer.top) != 1:
        raise GeError("E11035", {"opname": name, "size": len(layer.top)})
    top = layer.top[0]
    if top in state.scope:
        raise GeError("E11036", {"topname": top})
    shapes = layer.input_param.shape if layer.type == "Input" else ()
    _add_data(state, name, top, list(shapes[0].dim) if shapes else None)


# -- layers -------------------------------------------------------------------------------------

def _write_top(state: _State, layer: str, index: int, blob: str, edge: tuple) -> None:
    top = _Top(layer, index, blob, edge)
    state.scope[blob] = top
    state.tops.append(top)
    state.layer_tops.setdefault(layer, []).append(top)


def _infer(emitted: list) -> None:
    """Shapes of the nodes a conversion created, in creation order (consumers need them); a
    Const's desc is its value's (the registry's inference of it is not needed here)."""
    for node, _suffix in emitted:
        if node.type == "Const":
            value = node.attr("value")
            dims = list(value.numpy().shape)
            node.out_desc(0).set_shape(dims).set_origin_shape(dims).set_data_type(
                value.data_type)
            continue
        for i, edge in enumerate(node.inputs()):
            if edge is not None:
                node.update_input_desc(i, edge[0].out_desc(edge[1]))
        ops.infer_node(node, {})


def _name_nodes(graph: Graph, ctx: LayerCtx, main) -> None:
    """The node producing the first top keeps the layer name; helpers are `<layer>_<suffix>`."""
    for node, suffix in ctx.emitted:
        name = ctx.name if node is main else f"{ctx.name}_{suffix}"
        graph.rename_node(node, graph.unique_name(name))


def _convert(state: _State, name: str, layer) -> None:
    kind = layer_type(layer, state.options.op_name_map)
    row = row_for(kind)
    ins = []
    for i, bottom in enumerate(layer.bottom):
        top = state.scope.get(bottom)
        if top is None:
            raise GeError("E11012", {"bottom_blob": bottom, "layer": name, "bottom_index": i})
        top.consumed = True
        ins.append(top.edge)
    if not ins:                     # every row's layer reads bottom 0 (inputs are not rows)
        raise GeError("E11010", {"opname": name, "optype": kind,
                                 "reason": "the layer has no bottom"})
    shapes = [list(edge[0].out_desc(edge[1]).shape) for edge in ins]
    blobs = state.weights.get(name)
    if blobs is None and layer.blobs:
        blobs = list(layer.blobs)                 # weights written into the prototxt
    ctx = LayerCtx(state.graph, name, ins, layer, shapes, blobs)
    try:
        outs = row.convert(ctx)
    except ConvertError as exc:
        raise GeError("E11010", {"opname": name, "optype": kind, "reason": str(exc)}) from None
    if len(outs) != len(layer.top):
        raise GeError("E11010", {"opname": name, "optype": kind, "reason":
                                 f"the layer has {len(layer.top)} tops; the conversion gives "
                                 f"{len(outs)}"})
    _name_nodes(state.graph, ctx, outs[0][0] if outs else None)
    _infer(ctx.emitted)
    for index, (blob, edge) in enumerate(zip(layer.top, outs)):
        _write_top(state, name, index, blob, edge)


# -- outputs ------------------------------------------------------------------------------------

def _user_outputs(state: _State) -> list:
    """--out_nodes: `layer:index` (E11017 unknown layer, E11016 index) or a top name (E11017
    when no layer writes it; the last writer of the name is taken)."""
    outs = []
    total = len(state.options.out_nodes)
    for k, (name, index) in enumerate(state.options.out_nodes):
        if index is None:
            top = state.scope.get(name)
            if top is None:
                raise GeError("E11017", {"opname": name})
            outs.append((name, top.edge))
            continue
        tops = state.layer_tops.get(name)
        if tops is None:
            raise GeError("E11017", {"opname": name})
        if index >= len(tops):
            raise GeError("E11016", {"opname": name, "outputindex": index,
                                     "totlaloutputindex": len(tops), "inputindex": k,
                                     "totlalinputindex": total})
        outs.append((tops[index].blob, tops[index].edge))
    return outs


def _add_net_output(state: _State) -> None:
    if state.options.out_nodes:
        outs = _user_outputs(state)
    else:
        outs = [(t.blob, t.edge) for t in state.tops if not t.consumed]
    in_names, _ = port_names("NetOutput", len(outs), 0, NET_OUTPUT)
    node = state.graph.add_node("NetOutput", NET_OUTPUT, input_names=in_names,
                                output_names=[], origin=[])
    for k, (blob, edge) in enumerate(outs):
        state.graph.connect(edge[0], edge[1], node, k)
        node.update_input_desc(k, edge[0].out_desc(edge[1]))
        node.in_desc(k).name = blob


def build_graph(net, weights, options: CaffeOptions, graph_name: str,
                lazy: dict | None = None) -> Graph:
    """`lazy`: blob bytes left in the .caffemodel (`read_caffemodel_lazy`)."""
    layers = _active_layers(net)
    precheck(layers, options.op_name_map)
    graph = Graph(graph_name)
    state = _State(graph, options, weight_blobs(weights, lazy))
    net_inputs = _net_inputs(net)
    is_input = {name: layer_type(layer, options.op_name_map) in INPUT_TYPES
                for name, layer in layers}
    names = {n for n, _ in net_inputs}
    for name, layer in layers:
        if is_input[name]:
            names |= {name, *layer.top}
    for name in options.input_shapes:
        if name not in names:
            raise GeError("E10016", {"opname": name, "parameter": "input_shape"})
    for name, dims in net_inputs:
        _add_data(state, name, name, dims)
    for name, layer in layers:
        if is_input[name]:
            _input_layer(state, name, layer)
        else:
            _convert(state, name, layer)
    _add_net_output(state)
    return graph
