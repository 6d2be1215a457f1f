"""Graph <-> ge.proto ModelDef/GraphDef (AIR files, ge_proto text dumps, MODEL_DEF of an OM).

Owns the mapping between the in-memory IR (ge.graph) and the protobuf schema of
ge/proto/ge_ir.py (spec/om-format.md §8); it does not know the OM container.

Mapping rules (spec/om-format.md §8.2-§8.4):
- ModelDef.graph[0] is the root graph, then every subgraph (the root owns them all, flattened).
- OpDef.input: "<src>:<idx>" per data input ("" when unconnected), then "<src>:-1" per control
  predecessor.  Port names travel as `_input_name_key/_input_name_value` and
  `_output_name_key/_output_name_value`; the IR names of a node's subgraphs as
  `_subgraph_ir_names` (ours) next to `subgraph_name` (the instance names).
- TensorDescriptor.dtype uses the proto DataType numbering; attribute values of kind `dt` keep
  the in-memory ge::DataType number (§8.1).
- Every TensorDescriptor carries the attrs GE always adds (origin_format, origin_format_for_int,
  format_for_int, origin_shape_initialized, origin_shape, origin_data_type); tensor-level attrs
  of a node port (Node.set_input_attr/set_output_attr) live in the same `attr` map.
- Const `value` tensors are inline (`t.data`); ge.om.weights moves them to WEIGHTS_DATA.
"""
from __future__ import annotations


import numpy as np

from .attr_names import ATTR_SUBGRAPH_IR_NAMES
from ge.fsutil import MODEL_LIMIT, os_reason, publish, read_regular
from ge.errors import GeError
from ge.proto import ge_ir as pb

from .attrs import kind_of
from .graph import CONST_TYPES, Graph
from .tensor import Tensor, TensorDesc
from .types import AttrValueType as VT, DataType, DumpFormat, Format, format_name
from .types import to_numpy_dtype

__all__ = ["save_air", "load_air", "graph_to_text", "graph_to_model_def", "graph_to_graph_def",
           "model_def_to_graph", "attr_to_proto", "attr_from_proto", "to_proto_dtype",
           "from_proto_dtype", "IR_VERSION", "PLATFORM_VERSION"]

IR_VERSION = 2                 # OM_PROTO_VERSION
PLATFORM_VERSION = "1.11.z.0"  # ModelDef.custom_version / header platform_version

_PROTO_DT = {name: i for i, name in enumerate(pb.PROTO_DTYPE_NAMES)}
_DESC_STD_ATTRS = ("origin_format", "origin_format_for_int", "format_for_int",
                   "origin_shape_initialized", "origin_shape", "origin_data_type")
_META_ATTRS = ("_input_name_key", "_input_name_value", "_output_name_key",
               "_output_name_value", ATTR_SUBGRAPH_IR_NAMES)


def _bad(source: str, reason: str) -> GeError:
    return GeError("E10041", {"file": source, "reason": reason})


# -- data types -------------------------------------------------------------------------------
def to_proto_dtype(dt: DataType) -> int:
    """In-memory ge::DataType -> TensorDescriptor.dtype (unknown types become DT_UNDEFINED)."""
    return _PROTO_DT.get(DataType(dt).name, 0)


def from_proto_dtype(value: int) -> DataType:
    if 0 <= value < len(pb.PROTO_DTYPE_NAMES):
        name = pb.PROTO_DTYPE_NAMES[value]
        if name in DataType.__members__:
            return DataType[name]
    return DataType.DT_UNDEFINED


def _format_from(value: int, layout: str) -> Format:
    for candidate in (value, value & 0xFF):  # high bits may carry sub-format / C0
        try:
            return Format(candidate)
        except ValueError:
            pass
    try:
        return Format["FORMAT_" + layout]
    except KeyError:
        return Format.FORMAT_ND


# -- tensor descriptors and tensors -----------------------------------------------------------
def desc_to_proto(desc: TensorDesc, out, port_attrs: dict | None = None) -> None:
    out.name = desc.name
    out.dtype = to_proto_dtype(desc.data_type)
    out.shape.SetInParent()  # present even for scalars: readers require it
    out.shape.dim.extend(desc.shape)
    out.layout = format_name(desc.format)
    for key, value in (port_attrs or {}).items():
        attr_to_proto(kind_of(value), value, out.attr[key])
    out.attr["origin_format"].s = format_name(desc.origin_format).encode()
    out.attr["origin_format_for_int"].i = int(desc.origin_format)
    out.attr["format_for_int"].i = int(desc.format)
    out.attr["origin_shape_initialized"].b = True
    origin = out.attr["origin_shape"].list
    origin.val_type = pb.LIST_VALUE_TYPES.index("VT_LIST_INT")
    origin.i.extend(desc.origin_shape)
    if desc.data_type != DataType.DT_UNDEFINED:
        out.attr["origin_data_type"].s = desc.data_type.name.encode()
    out.real_dim_cnt = len(desc.shape)


def desc_from_proto(td) -> tuple[TensorDesc, dict]:
    """(TensorDesc, port attrs that are not GE's standard descriptor attrs)."""
    attrs = td.attr
    fmt_int = attrs["format_for_int"].i if "format_for_int" in attrs else -1
    fmt = _format_from(fmt_int, td.layout)
    desc = TensorDesc(list(td.shape.dim), fmt, from_proto_dtype(td.dtype))
    desc.name = td.name
    if "origin_format_for_int" in attrs or "origin_format" in attrs:
        origin_int = attrs["origin_format_for_int"].i if "origin_format_for_int" in attrs else -1
        origin_layout = attrs["origin_format"].s.decode("utf-8", "replace") \
            if "origin_format" in attrs else ""
        desc.set_origin_format(_format_from(origin_int, origin_layout))
    if "origin_shape" in attrs and (
            "origin_shape_initialized" not in attrs or attrs["origin_shape_initialized"].b):
        desc.set_origin_shape(list(attrs["origin_shape"].list.i))
    extra = {k: attr_from_proto(v)[1] for k, v in attrs.items() if k not in _DESC_STD_ATTRS}
    return desc, extra


def _string_tensor_bytes(array: np.ndarray) -> bytes:
    """GE string tensor data: per element (u64 offset, u64 length), then the bytes."""
    items = [s.encode() if isinstance(s, str) else bytes(s) for s in array.reshape(-1)]
    head = 16 * len(items)
    offsets, pos = [], head
    for item in items:
        offsets.append((pos, len(item)))
        pos += len(item)
    header = np.array(offsets, dtype="<u8").reshape(-1).tobytes()
    return header + b"".join(items)


def _string_tensor_from(raw: bytes, shape: list[int], source: str) -> np.ndarray:
    count = int(np.prod(shape)) if shape else 1
    if 16 * count > len(raw):
        raise _bad(source, f"string tensor of {count} elements has only {len(raw)} bytes")
    heads = np.frombuffer(raw, dtype="<u8", count=2 * count).reshape(count, 2)
    out = []
    for off, size in heads.tolist():
        if off + size > len(raw):
            raise _bad(source, "string tensor element points outside its data")
        out.append(raw[off:off + size].decode("utf-8", "surrogateescape"))
    return np.array(out, dtype=object).reshape(shape)


def tensor_to_proto(tensor: Tensor, out) -> None:
    array = tensor.numpy()
    desc = TensorDesc(list(array.shape), tensor.format, tensor.data_type)
    desc_to_proto(desc, out.desc)
    if tensor.data_type == DataType.DT_STRING:
        out.data = _string_tensor_bytes(array)
    else:
        out.data = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<")).tobytes()


def tensor_from_proto(td, source: str = "<memory>") -> Tensor:
    desc, _ = desc_from_proto(td.desc)
    shape, raw = list(desc.shape), bytes(td.data)
    if any(d < 0 for d in shape):
        raise _bad(source, f"constant tensor with unknown shape {shape}")
    dt = desc.data_type
    if dt == DataType.DT_STRING:
        t = Tensor.from_numpy(_string_tensor_from(raw, shape, source), desc.format)
        t._dtype = DataType.DT_STRING
        return t
    try:
        np_dtype = to_numpy_dtype(dt).newbyteorder("<")
    except TypeError:  # bf16 and narrow types: keep the raw bytes
        np_dtype = np.dtype("<u2") if dt == DataType.DT_BF16 else np.dtype(np.uint8)
        shape = shape if np_dtype.itemsize == 2 else [len(raw)]
    count = int(np.prod(shape)) if shape else 1
    if count * np_dtype.itemsize != len(raw):
        raise _bad(source, f"tensor of shape {shape} and type {dt.name} needs "
                           f"{count * np_dtype.itemsize} bytes, has {len(raw)}")
    array = np.frombuffer(raw, dtype=np_dtype).astype(np_dtype.newbyteorder("=")).reshape(shape)
    t = Tensor.from_numpy(array.copy(), desc.format)
    t._dtype = dt
    return t


# -- attributes ---------------------------------------------------------------------------------
_LIST_FIELD = {  # list kind -> (ListValue field, ListValueType name)
    VT.VT_LIST_STRING: ("s", "VT_LIST_STRING"), VT.VT_LIST_INT: ("i", "VT_LIST_INT"),
    VT.VT_LIST_FLOAT: ("f", "VT_LIST_FLOAT"), VT.VT_LIST_BOOL: ("b", "VT_LIST_BOOL"),
    VT.VT_LIST_BYTES: ("bt", "VT_LIST_BYTES"),
    VT.VT_LIST_TENSOR_DESC: ("td", "VT_LIST_TENSOR_DESC"),
    VT.VT_LIST_TENSOR: ("t", "VT_LIST_TENSOR"), VT.VT_LIST_GRAPH: ("g", "VT_LIST_GRAPH"),
    VT.VT_LIST_NAMED_ATTRS: ("na", "VT_LIST_NAMED_ATTRS"),
    VT.VT_LIST_DATA_TYPE: ("dt", "VT_LIST_DATA_TYPE"),
}
_KIND_OF_LIST_TYPE = {pb.LIST_VALUE_TYPES.index(t): k for k, (_, t) in _LIST_FIELD.items()}
_FIELD_OF_LIST_KIND = {k: f for k, (f, _) in _LIST_FIELD.items()}


def _named_attrs_to_proto(value: dict, out) -> None:
    out.name = value.get("name", "")
    for key, (kind, v) in value.get("attr", {}).items():
        attr_to_proto(kind, v, out.attr[key])


def _named_attrs_from_proto(na) -> dict:
    return {"name": na.name, "attr": {k: attr_from_proto(v) for k, v in na.attr.items()}}


def _put_item(field: str, container, value) -> None:
    """Append one list element of a message kind."""
    if field == "td":
        desc_to_proto(value, container.add())
    elif field == "t":
        tensor_to_proto(value, container.add())
    elif field == "g":
        graph_to_graph_def(value, container.add())
    else:  # "na"
        _named_attrs_to_proto(value, container.add())


def attr_to_proto(kind: VT, value, out) -> None:
    """Fill AttrDef `out` with a (kind, value) attribute of the IR."""
    kind = VT(kind)
    if kind == VT.VT_NONE:
        out.Clear()
    elif kind == VT.VT_STRING:
        out.s = value.encode("utf-8", "surrogateescape")
    elif kind == VT.VT_INT:
        out.i = int(value)
    elif kind == VT.VT_FLOAT:
        out.f = float(value)
    elif kind == VT.VT_BOOL:
        out.b = bool(value)
    elif kind == VT.VT_BYTES:
        out.bt = bytes(value)
    elif kind == VT.VT_DATA_TYPE:
        out.dt = int(value)  # in-memory numbering, §8.1
    elif kind == VT.VT_TENSOR_DESC:
        desc_to_proto(value, out.td)
    elif kind == VT.VT_TENSOR:
        tensor_to_proto(value, out.t)
    elif kind == VT.VT_GRAPH:
        graph_to_graph_def(value, out.g)
    elif kind == VT.VT_NAMED_ATTRS:
        _named_attrs_to_proto(value, out.func)
    elif kind == VT.VT_LIST_LIST_INT:
        out.list_list_int.SetInParent()
        for row in value:
            out.list_list_int.list_list_i.add().list_i.extend(int(x) for x in row)
    elif kind == VT.VT_LIST_LIST_FLOAT:
        out.list_list_float.SetInParent()
        for row in value:
            out.list_list_float.list_list_f.add().list_f.extend(float(x) for x in row)
    else:
        field, type_name = _LIST_FIELD[kind]
        lst = out.list
        lst.val_type = pb.LIST_VALUE_TYPES.index(type_name)
        container = getattr(lst, field)
        if field == "s":
            container.extend(v.encode("utf-8", "surrogateescape") for v in value)
        elif field in ("i", "dt"):
            container.extend(int(v) for v in value)
        elif field in ("f", "b", "bt"):
            container.extend(value)
        else:
            for v in value:
                _put_item(field, container, v)


def _list_from_proto(lst) -> tuple[VT, list]:
    kind = _KIND_OF_LIST_TYPE.get(lst.val_type)
    if kind is None:  # VT_LIST_NONE: take the first non-empty field
        kind = next((k for k, f in _FIELD_OF_LIST_KIND.items() if len(getattr(lst, f))),
                    VT.VT_LIST_INT)
    field = _FIELD_OF_LIST_KIND[kind]
    items = getattr(lst, field)
    if field == "s":
        return kind, [v.decode("utf-8", "surrogateescape") for v in items]
    if field == "dt":
        return kind, [DataType(v) if v in DataType._value2member_map_ else int(v) for v in items]
    if field in ("i", "f", "b", "bt"):
        convert_scalar = {"i": int, "f": float, "b": bool, "bt": bytes}[field]
        return kind, [convert_scalar(v) for v in items]
    convert = {"td": lambda m: desc_from_proto(m)[0], "t": tensor_from_proto,
               "g": graph_def_to_graph, "na": _named_attrs_from_proto}[field]
    return kind, [convert(m) for m in items]


def attr_from_proto(a) -> tuple[VT, object]:
    """(kind, value) of an AttrDef."""
    which = a.WhichOneof("value")
    if which is None:
        return VT.VT_NONE, None
    if which in ("s", "expression"):
        return VT.VT_STRING, getattr(a, which).decode("utf-8", "surrogateescape")
    if which == "i":
        return VT.VT_INT, int(a.i)
    if which == "f":
        return VT.VT_FLOAT, float(a.f)
    if which == "b":
        return VT.VT_BOOL, bool(a.b)
    if which == "bt":
        return VT.VT_BYTES, bytes(a.bt)
    if which == "dt":
        return VT.VT_DATA_TYPE, DataType(a.dt) if a.dt in DataType._value2member_map_ else a.dt
    if which == "td":
        return VT.VT_TENSOR_DESC, desc_from_proto(a.td)[0]
    if which == "t":
        return VT.VT_TENSOR, tensor_from_proto(a.t)
    if which == "g":
        return VT.VT_GRAPH, graph_def_to_graph(a.g)
    if which == "func":
        return VT.VT_NAMED_ATTRS, _named_attrs_from_proto(a.func)
    if which == "list_list_int":
        return VT.VT_LIST_LIST_INT, [list(r.list_i) for r in a.list_list_int.list_list_i]
    if which == "list_list_float":
        return VT.VT_LIST_LIST_FLOAT, [list(r.list_f) for r in a.list_list_float.list_list_f]
    return _list_from_proto(a.list)


def _set_list(attrs, key: str, kind: VT, values) -> None:
    attr_to_proto(kind, list(values), attrs[key])


# -- graphs -------------------------------------------------------------------------------------
def _node_to_op_def(node, op, op_id: int, weights: list | None = None) -> None:
    op.name, op.type, op.id = node.name, node.type, op_id
    for edge in node.inputs():
        op.input.append("" if edge is None else f"{edge[0].name}:{edge[1]}")
        if edge is not None:
            op.src_name.append(edge[0].name)
            op.src_index.append(edge[1])
        op.is_input_const.append(edge is not None and edge[0].type in CONST_TYPES)
    for ctrl in node.get_in_control_nodes():
        op.input.append(f"{ctrl.name}:-1")
    for key, kind, value in node.attr_items():
        if weights is not None and key == "value" and node.type == "Const" \
                and kind == VT.VT_TENSOR and value.data_type != DataType.DT_STRING:
            # the bytes go to WEIGHTS_DATA: the caller lays them out (ge.om.place_weights)
            desc_to_proto(value.get_tensor_desc(), op.attr[key].t.desc)
            stored = value.stored()     # a derived constant is streamed, not computed here
            weights.append((op, np.ascontiguousarray(stored)
                            if isinstance(stored, np.ndarray) else stored))
            continue
        attr_to_proto(kind, value, op.attr[key])
    _set_list(op.attr, "_input_name_key", VT.VT_LIST_STRING, node.input_names)
    _set_list(op.attr, "_input_name_value", VT.VT_LIST_INT, range(node.num_inputs))
    _set_list(op.attr, "_output_name_key", VT.VT_LIST_STRING, node.output_names)
    _set_list(op.attr, "_output_name_value", VT.VT_LIST_INT, range(node.num_outputs))
    for i in range(node.num_inputs):
        desc_to_proto(node.in_desc(i), op.input_desc.add(), node._in_attrs[i])
    for i in range(node.num_outputs):
        desc_to_proto(node.out_desc(i), op.output_desc.add(), node._out_attrs[i])
    if node.subgraphs:
        op.subgraph_name.extend(node.subgraphs.values())
        _set_list(op.attr, ATTR_SUBGRAPH_IR_NAMES, VT.VT_LIST_STRING, node.subgraphs.keys())


def graph_to_graph_def(graph: Graph, out, op_hook=None, weights: list | None = None) -> None:
    """Fill GraphDef `out` with one graph (its own nodes; subgraphs are separate GraphDefs).

    `op_hook(node, op_def)`, when given, runs after each OpDef is filled (the compiler uses it
    to add stream ids, memory offsets, ...).
    """
    out.name = graph.name
    out.input.extend(f"{n.name}:0" for n in graph.data_nodes())
    net_output = graph.output_node()
    if net_output is not None:
        out.output.extend(f"{e[0].name}:{e[1]}" for e in net_output.inputs() if e is not None)
    for key, kind, value in graph.attr_items():
        attr_to_proto(kind, value, out.attr[key])
    for op_id, node in enumerate(graph.nodes):
        op = out.op.add()
        _node_to_op_def(node, op, op_id, weights)
        if op_hook is not None:
            op_hook(node, op)


def graph_to_model_def(graph: Graph, model_attrs: dict | None = None, op_hook=None,
                       weights: list | None = None):
    """A ModelDef holding `graph` (graph[0]) and all its subgraphs; Const data inline, or,
    when a `weights` list is given, left out and appended to it as (OpDef, numpy array).

    `model_attrs` maps a name to a Python value (kind from ge.graph.attrs.kind_of) or to an
    explicit (AttrValueType, value) pair.
    """
    model = pb.ModelDef(name=graph.name, version=IR_VERSION, custom_version=PLATFORM_VERSION)
    graph_to_graph_def(graph, model.graph.add(), op_hook, weights)
    for sub in graph.get_all_subgraphs():
        graph_to_graph_def(sub, model.graph.add(), op_hook, weights)
    for key, value in (model_attrs or {}).items():
        if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], VT):
            attr_to_proto(value[0], value[1], model.attr[key])
        else:
            attr_to_proto(kind_of(value), value, model.attr[key])
    return model


def _port_names(attrs, key_name: str, value_name: str) -> list[str]:
    if key_name not in attrs:
        return []
    keys = [v.decode("utf-8", "surrogateescape") for v in attrs[key_name].list.s]
    values = list(attrs[value_name].list.i) if value_name in attrs else list(range(len(keys)))
    if len(values) != len(keys) or sorted(values) != list(range(len(keys))):
        return []
    names = [""] * len(keys)
    for name, index in zip(keys, values):
        names[index] = name
    return names


def _split_input(text: str, op_name: str, source: str) -> tuple[str, int]:
    src, sep, index = text.rpartition(":")
    try:
        if not sep:
            raise ValueError
        return src, int(index)
    except ValueError:
        raise _bad(source, f"op {op_name} has a malformed input '{text}'") from None


def _build_nodes(graph: Graph, graph_def, source: str) -> None:
    for op in graph_def.op:
        in_names = _port_names(op.attr, "_input_name_key", "_input_name_value")
        out_names = _port_names(op.attr, "_output_name_key", "_output_name_value")
        data_inputs = [s for s in op.input if not s.endswith(":-1")]
        n_in = max(len(data_inputs), len(op.input_desc), len(in_names))
        n_out = max(len(op.output_desc), len(out_names))
        in_names += [f"x{i}" for i in range(len(in_names), n_in)]
        out_names += [f"y{i}" for i in range(len(out_names), n_out)]
        if op.name in graph._nodes:
            raise _bad(source, f"op name {op.name} appears twice in graph {graph.name}")
        node = graph.add_node(op.type, op.name, input_names=in_names, output_names=out_names)
        for key, value in op.attr.items():
            if key not in _META_ATTRS:
                kind, v = attr_from_proto(value)
                node.set_attr_kind(key, kind, v)
        for i, td in enumerate(op.input_desc):
            node._in_descs[i], node._in_attrs[i] = desc_from_proto(td)
        for i, td in enumerate(op.output_desc):
            node._out_descs[i], node._out_attrs[i] = desc_from_proto(td)
        ir_names = [s.decode("utf-8", "replace") for s in op.attr[ATTR_SUBGRAPH_IR_NAMES].list.s] \
            if ATTR_SUBGRAPH_IR_NAMES in op.attr else []
        if len(ir_names) != len(op.subgraph_name):
            ir_names = [f"subgraph_{i}" for i in range(len(op.subgraph_name))]
        node.subgraphs = dict(zip(ir_names, op.subgraph_name))


def _connect_nodes(graph: Graph, graph_def, source: str) -> None:
    for op in graph_def.op:
        node = graph._nodes[op.name]
        port = 0
        for text in op.input:
            if text == "":
                port += 1
                continue
            src_name, index = _split_input(text, op.name, source)
            src = graph._nodes.get(src_name)
            if src is None:
                raise _bad(source, f"op {op.name} reads '{text}' but graph {graph.name} "
                                   f"has no op {src_name}")
            if index == -1:
                graph.add_control_edge(src, node)
                continue
            if not 0 <= index < src.num_outputs or port >= node.num_inputs:
                raise _bad(source, f"op {op.name} input '{text}' refers to a missing port")
            graph.connect(src, index, node, port)
            port += 1


def graph_def_to_graph(graph_def, source: str = "<memory>") -> Graph:
    """One GraphDef -> Graph (no subgraph linking)."""
    graph = Graph(graph_def.name)
    for key, value in graph_def.attr.items():
        kind, v = attr_from_proto(value)
        graph.set_attr_kind(key, kind, v)
    _build_nodes(graph, graph_def, source)
    _connect_nodes(graph, graph_def, source)
    return graph


def model_def_to_graph(model_def, source: str = "<memory>") -> Graph:
    """ModelDef -> root Graph with its subgraphs attached to their parent nodes.

    Const tensors must be inline (call ge.om.weights.restore_weights first for an OM).
    """
    if not model_def.graph:
        raise _bad(source, "the model holds no graph")
    try:
        return _link_graphs(model_def, source)
    except GeError as e:
        if e.params.get("file") == "<memory>":  # raised deep in an attribute conversion
            raise _bad(source, e.params.get("reason", "")) from None
        raise
    except (ValueError, TypeError, IndexError, KeyError, OverflowError, RecursionError) as e:
        # values the IR cannot hold (bad enum numbers, shapes, sizes) in a file we read
        raise _bad(source, f"the model cannot be rebuilt as a graph ({type(e).__name__}: "
                           f"{e})") from None


def _link_graphs(model_def, source: str) -> Graph:
    graphs = [graph_def_to_graph(gd, source) for gd in model_def.graph]
    root = graphs[0]
    parent_of: dict[str, object] = {}
    for graph in graphs:
        for node in graph.nodes:
            for instance in node.subgraphs.values():
                parent_of.setdefault(instance, node)
    for sub in graphs[1:]:
        if sub.name in root._subgraphs or sub.name == root.name:
            raise _bad(source, f"graph name {sub.name} appears twice")
        root.add_subgraph(sub, parent_of.get(sub.name))
    return root


# -- files and dumps ------------------------------------------------------------------------------
def write_atomic(path: str, data: bytes) -> None:
    """Write `data` to a temporary name beside `path`, then rename it into place."""
    publish(path, data, mode=0o644)


def save_air(graph: Graph, path: str) -> None:
    """Graph.save_to_air: a serialized ModelDef with inline Const data."""
    model = graph_to_model_def(graph)
    try:
        write_atomic(path, model.SerializeToString(deterministic=True))
    except OSError as e:
        raise GeError("E13004", {"file": path, "reason": os_reason(e)}) from None


def load_air(path: str) -> Graph:
    """Graph.load_from_air (also framework 1 of ATC)."""
    from google.protobuf.message import DecodeError
    try:
        data = read_regular(path, MODEL_LIMIT)
    except OSError as e:
        raise _bad(path, os_reason(e)) from None
    model = pb.ModelDef()
    try:
        model.ParseFromString(data)
    except (DecodeError, RecursionError) as e:
        raise _bad(path, f"not a serialized ge.proto.ModelDef ({e})") from None
    return model_def_to_graph(model, path)


def graph_to_text(graph: Graph, fmt: DumpFormat = DumpFormat.kTxt) -> str:
    """kTxt: protobuf text of the ModelDef (GE's ge_proto dump); kOnnx: ONNX text (Netron)."""
    from google.protobuf import text_format
    if fmt == DumpFormat.kTxt:
        return text_format.MessageToString(graph_to_model_def(graph))
    if fmt == DumpFormat.kOnnx:
        from .onnx_dump import graph_to_onnx
        return text_format.MessageToString(graph_to_onnx(graph))
    from .dump import readable
    return readable(graph)
