"""Graph preparation: AIPP insertion (GE InsertAippOpUtil / AippOp, in our words).

For every `aipp_op` block an `Aipp` node goes between the related Data node and all of its
consumers.  The Data node then takes the raw image: uint8, NHWC, [N, rows, W, C] where rows is
H x 1.5 for YUV420SP and C the channels of one source pixel (1, 3 or 4).  Dynamic AIPP takes the
image as a flat uint8 buffer of `max_src_image_size` bytes and adds an `AippData` input named
`ascend_dynamic_aipp_data` that carries the parameter buffer (ge.ops.defs.aipp DYNAMIC_*).
The configuration is recorded as GE records it: the `aipp` NamedAttrs and the JSON in
`aipp_config_path` on the Aipp node, `aipp`, `_data_related_aipp_mode`, `input_dims`,
`_aipp_inputs` and `_aipp_outputs` on the Data node, so that readers of the OM find it.
"""
from __future__ import annotations

from ge.errors import GeError
from ge.graph import DataType, Format, Graph, TensorDesc
from ge.graph.types import AttrValueType as VT, to_numpy_dtype
from ge.ops.defs.aipp import SOURCE_CHANNELS, dynamic_param_size, image_rows

from .config import AippConfig, invalid_aipp, read_config

__all__ = ["insert_aipp", "ATTR_AIPP", "ATTR_RELATED_AIPP_MODE", "DYNAMIC_AIPP_DATA"]

ATTR_AIPP = "aipp"
ATTR_CONFIG_JSON = "aipp_config_path"
ATTR_AIPP_INDEX = "current_aipp_index"
ATTR_RELATED_AIPP_MODE = "_data_related_aipp_mode"
ATTR_INPUT_DIMS = "input_dims"
ATTR_AIPP_INPUTS, ATTR_AIPP_OUTPUTS = "_aipp_inputs", "_aipp_outputs"
ATTR_DYNAMIC_INPUT_DIMS = "_dynamic_aipp_input_dims"
ATTR_AIPP_DATA_NAME_MAP = "_data_aipp_data_name_map"
DYNAMIC_AIPP_DATA = "ascend_dynamic_aipp_data"
_MODE_VALUE = {"static": "static_aipp", "dynamic": "dynamic_aipp"}


def _find_data(graph: Graph, config: AippConfig):
    p = config.params
    data = graph.data_nodes()
    if p.related_input_name:
        for node in data:
            if node.name == p.related_input_name:
                return node
        raise invalid_aipp(f"related_input_name {p.related_input_name} convert rank failed: the "
                       f"model inputs are {', '.join(n.name for n in data)}")
    for node in data:
        if node.attr("index", 0) == p.related_input_rank:
            return node
    raise invalid_aipp("Cannot find the data node by aipp parameter related_input_rank "
                   f"{p.related_input_rank} (the model has {len(data)} inputs)")


def _model_layout(data, config: AippConfig) -> tuple:
    """(N, C, H, W, format name) of the model input the AIPP output replaces."""
    desc = data.out_desc(0)
    shape, fmt = list(desc.shape), desc.format
    nhwc = fmt == Format.FORMAT_NHWC
    if config.mode == "dynamic" and fmt not in (Format.FORMAT_NCHW, Format.FORMAT_NHWC):
        raise GeError("E13014", {"opname": data.name, "parameter": "format",
                                 "value": fmt.name[len("FORMAT_"):], "reason": "The format must "
                                 "be NCHW or NHWC in the dynamic AIPP scenario"})
    if len(shape) != 4 or any(d <= 0 for d in shape):
        raise invalid_aipp(f"aipp_op {config.index}: the related input {data.name} has shape "
                       f"{shape}; AIPP needs a static 4-D NCHW or NHWC image input")
    n, c, h, w = (shape[0], shape[3], shape[1], shape[2]) if nhwc else shape
    return n, c, h, w, "NHWC" if nhwc else "NCHW"


def _check_model(config: AippConfig, data, layout: tuple) -> None:
    """The rules that need the model: channels and the AIPP output size."""
    n, c, h, w, _fmt = layout
    where = f"aipp_op {config.index}"
    if config.mode == "dynamic":
        return
    fmt = config.input_format
    allowed = (1,) if fmt == "YUV400_U8" else (1, 3, 4) if fmt == "XRGB8888_U8" else (1, 3)
    if c not in allowed:
        raise invalid_aipp(f"{where}: input_format {fmt} gives {'/'.join(map(str, allowed))} "
                       f"channels, the related input {data.name} has C = {c}")
    p = config.params
    pads_h = p.top_padding_size + p.bottom_padding_size
    pads_w = p.left_padding_size + p.right_padding_size
    core_h = (p.crop_size_h if p.crop else p.src_image_size_h) or h - pads_h
    core_w = (p.crop_size_w if p.crop else p.src_image_size_w) or w - pads_w
    if (core_h + pads_h, core_w + pads_w) != (h, w):
        what = "crop_size" if p.crop and p.crop_size_h else "src_image_size"
        raise invalid_aipp(f"{where}: the AIPP output {core_h + pads_h}x{core_w + pads_w} "
                       f"({what} {core_h}x{core_w} plus padding) must equal the H x W {h}x{w} "
                       f"of input {data.name}")
    src_h, src_w = p.src_image_size_h or h, p.src_image_size_w or w
    if p.crop and (p.load_start_pos_h + core_h > src_h or p.load_start_pos_w + core_w > src_w):
        raise invalid_aipp(f"{where}: the crop window {core_w}x{core_h} at load_start_pos_w "
                       f"{p.load_start_pos_w}, load_start_pos_h {p.load_start_pos_h} (crop_size "
                       f"0: the H x W of input {data.name}) must lie inside the source "
                       f"{src_w}x{src_h}")
    if fmt == "YUV420SP_U8" and (src_h % 2 or src_w % 2):
        raise invalid_aipp(f"{where}: the source image {src_w}x{src_h} (src_image_size 0: the H x W "
                       f"of input {data.name}) must have even sizes for input_format "
                       "YUV420SP_U8")
    if p.padding and w > config.padding_width_limit:
        raise invalid_aipp(f"{where}: with padding the output W must be <= "
                       f"{config.padding_width_limit} on this soc; input {data.name} has W {w}")


def _image_desc(config: AippConfig, layout: tuple) -> tuple:
    """(shape, format) of the raw image the Data node takes."""
    n, _c, h, w, _fmt = layout
    if config.mode == "dynamic":
        return [int(config.params.max_src_image_size)], Format.FORMAT_ND
    p, fmt = config.params, config.input_format
    src_h, src_w = p.src_image_size_h or h, p.src_image_size_w or w
    return [n, image_rows(fmt, src_h), src_w, SOURCE_CHANNELS[fmt]], Format.FORMAT_NHWC


def _tensor_text(desc, name: str) -> str:
    """GE's `_aipp_inputs`/`_aipp_outputs` entry: format:dtype:name:size:rank:dims."""
    shape = list(desc.shape)
    count = to_numpy_dtype(desc.data_type).itemsize
    for d in shape:
        count *= d
    return (f"{desc.format.name[len('FORMAT_'):]}:{desc.data_type.name}:{name}:{count}:"
            f"{len(shape)}:{','.join(map(str, shape))}")


def _insert_one(graph: Graph, config: AippConfig, fp16_inputs: set) -> None:
    data = _find_data(graph, config)
    if data.name in fp16_inputs:
        raise GeError("E10034", {"opname": data.name})
    if data.attr(ATTR_RELATED_AIPP_MODE):
        raise invalid_aipp(f"Cannot insert aipp to the same position! input {data.name} already "
                       "has an AIPP")
    layout = _model_layout(data, config)
    _check_model(config, data, layout)
    model_desc = data.out_desc(0).clone()
    slots = ["images", "params"] if config.mode == "dynamic" else ["images"]
    aipp = graph.add_node("Aipp", f"{data.name}_0_aipp", input_names=slots,
                          output_names=["features"], origin=data.origin)
    named = config.named_attrs()
    aipp.set_attr_kind(ATTR_AIPP, VT.VT_NAMED_ATTRS, named)
    aipp.set_attr(ATTR_CONFIG_JSON, config.to_json())
    aipp.set_attr(ATTR_AIPP_INDEX, config.index)
    aipp.set_attr_kind("output_shape", VT.VT_LIST_INT, list(model_desc.shape))
    aipp.set_attr("output_format", layout[4])
    aipp.set_attr("output_dtype", int(model_desc.data_type))
    graph.replace_uses((data, 0), (aipp, 0))
    graph.connect(data, 0, aipp, 0)
    shape, fmt = _image_desc(config, layout)
    image = model_desc.clone().set_shape(shape).set_origin_shape(shape) \
        .set_format(fmt).set_origin_format(fmt).set_data_type(DataType.DT_UINT8)
    if data.num_inputs:
        data.update_input_desc(0, image.clone())
    data.update_output_desc(0, image.clone())
    aipp.update_input_desc(0, image.clone())
    aipp.update_output_desc(0, model_desc)
    data.set_attr_kind(ATTR_AIPP, VT.VT_NAMED_ATTRS, named)
    data.set_attr(ATTR_RELATED_AIPP_MODE, _MODE_VALUE[config.mode])
    data.set_attr_kind(ATTR_INPUT_DIMS, VT.VT_LIST_INT, shape)
    data.set_attr_kind(ATTR_AIPP_INPUTS, VT.VT_LIST_STRING, [_tensor_text(model_desc, data.name)])
    data.set_attr_kind(ATTR_AIPP_OUTPUTS, VT.VT_LIST_STRING, [_tensor_text(model_desc,
                                                                           "features")])
    if config.mode == "dynamic":
        _add_param_input(graph, config, data, aipp, named, layout[0])


def _add_param_input(graph: Graph, config: AippConfig, data, aipp, named: dict, n: int) -> None:
    """Dynamic AIPP: the parameter buffer becomes one more model input (GE AddNodeToGraph)."""
    first = not any(node.type == "AippData" for node in graph.get_direct_nodes())
    name = DYNAMIC_AIPP_DATA if first else f"{DYNAMIC_AIPP_DATA}_{aipp.name}"
    size = dynamic_param_size(n)
    index = len(graph.data_nodes())
    params = graph.add_node("AippData", name, input_names=["x"], output_names=["y"],
                            attrs={"index": index})
    desc = TensorDesc([size], Format.FORMAT_ND, DataType.DT_UINT8)
    params.update_input_desc(0, desc.clone())
    params.update_output_desc(0, desc.clone())
    params.set_attr_kind(ATTR_AIPP, VT.VT_NAMED_ATTRS, named)
    params.set_attr(ATTR_RELATED_AIPP_MODE, "dynamic_aipp_conf")
    params.set_attr(ATTR_AIPP_DATA_NAME_MAP, data.name)
    data.set_attr(ATTR_AIPP_DATA_NAME_MAP, params.name)
    data.set_attr_kind(ATTR_DYNAMIC_INPUT_DIMS, VT.VT_LIST_INT, [n, -1, -1, -1])
    graph.connect(params, 0, aipp, 1)
    aipp.update_input_desc(1, desc.clone())


def check_with_image_gears(configs: list, options: dict) -> None:
    """With --dynamic_image_size every gear has its own H and W: an AIPP that crops, pads or
    names a static source size cannot follow them (E10052, as GE checks its aipp_op blocks)."""
    if not (options.get("ge.dynamicImageSize") or "").strip():
        return
    for config in configs:
        p = config.params
        if p.crop or p.padding:
            raise invalid_aipp("When --dynamic_image_size is set, crop and padding cannot be "
                               "set to 'true'")
        if config.mode == "static" and (p.src_image_size_w or p.src_image_size_h):
            raise invalid_aipp("When --dynamic_image_size is set, src_image_size_w and "
                               "src_image_size_h must be set to '0'")


def insert_aipp(graph: Graph, options: dict) -> int:
    """Insert the AIPP ops of ge.insertOpFile (none when the option is empty)."""
    path = options.get("ge.insertOpFile", "")
    if not path:
        return 0
    configs = read_config(path, options.get("ge.socVersion", ""))
    check_with_image_gears(configs, options)
    fp16_inputs = {n for n in options.get("ge.INPUT_NODES_SET_FP16", "").split(";") if n}
    for config in configs:
        _insert_one(graph, config, fp16_inputs)
    graph.sort()  # GE sorts the graph topologically after inserting the AIPP ops
    return len(configs)
