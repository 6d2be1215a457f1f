"""Data types at the model's edges: `--output_type` (ge.outputDatatype: a Cast in front of
NetOutput per output), `--input_fp16_nodes` (ge.INPUT_NODES_SET_FP16: those Data nodes
take fp16, with a Cast to the model's type behind them) and the NC1HWC0 edges of
`--is_input_adjust_hw_layout` / `--is_output_adjust_hw_layout` (ge.compiler.fivehd)."""
from __future__ import annotations

from ge.errors import GeError
from ge.graph import DataType, Format, Graph

from .fivehd import input_from_5hd, model_layout, output_to_5hd, parse_adjust_flags

OUTPUT_TYPES = {"FP32": DataType.DT_FLOAT, "FP16": DataType.DT_FLOAT16,
                "INT8": DataType.DT_INT8, "UINT8": DataType.DT_UINT8}
REFUSED_TYPES = ("HIF8", "HIF4", "FP8E5M2", "FP8E4M3FN")


def parse_output_type(value: str) -> tuple:
    """Returns (type for all outputs or None, {(node, index): type})."""
    value = value.strip()
    if not value:
        return None, {}
    if ":" not in value:
        return _type(value), {}
    per_node = {}
    for item in filter(None, value.split(";")):
        parts = item.split(":")
        if len(parts) != 3:
            raise GeError("E10001", {"parameter": "--output_type", "value": value,
                                     "reason": 'The parameter is invalid. Valid format "opname:index:dtype".'})
        if not parts[1].isdigit():
            raise GeError("E10001", {"parameter": "--output_type", "value": value,
                                     "reason": "The value is not a positive integer."})
        per_node[(parts[0], int(parts[1]))] = _type(parts[2])
    return None, per_node


def _type(name: str) -> DataType:
    if name in REFUSED_TYPES:
        raise GeError("EP0002", {"feature": f"--output_type={name}",
                                 "reason": "the host target has no such data type"})
    if name not in OUTPUT_TYPES:
        raise GeError("E10001", {"parameter": "--output_type", "value": name,
                                 "reason": "The value must be FP32, FP16, UINT8 or INT8."})
    return OUTPUT_TYPES[name]


def apply_output_type(graph: Graph, options: dict) -> int:
    all_type, per_node = parse_output_type(options.get("ge.outputDatatype", ""))
    out = graph.output_node()
    if out is None or (all_type is None and not per_node):
        return 0
    inserted = 0
    for slot, edge in enumerate(out.inputs()):
        if edge is None:
            continue
        src, idx = edge
        wanted = all_type
        for (name, index), dt in per_node.items():
            if index == idx and (name == src.name or name in src.origin):
                wanted = dt
        if wanted is None or src.out_desc(idx).data_type == wanted:
            continue
        cast = graph.add_node("Cast", graph.unique_name(f"{src.name}_output_cast"),
                              inputs=[edge], input_names=["x"], output_names=["y"],
                              attrs={"dst_type": int(wanted)}, origin=src.origin)
        graph.connect(cast, 0, out, slot)
        inserted += 1
    return inserted


def apply_input_fp16(graph: Graph, options: dict) -> int:
    """Make each named Data node an fp16 input (a 5HD one where is_input_adjust_hw_layout
    says true, ge.compiler.fivehd); the model still computes in its own type and layout."""
    names = [n for n in options.get("ge.INPUT_NODES_SET_FP16", "").split(";") if n]
    adjust = parse_adjust_flags(options.get("is_input_adjust_hw_layout", ""),
                                "is_input_adjust_hw_layout")
    changed = 0
    for k, name in enumerate(names):
        data = graph.node(name)
        if data is None:
            raise GeError("E10016", {"opname": name, "parameter": "input_fp16_nodes"})
        if data.type != "Data":
            raise GeError("E10017", {"opname": name, "parameter": "input_fp16_nodes"})
        desc = data.in_desc(0) if data.num_inputs else data.out_desc(0)
        original = desc.data_type
        five_hd = k < len(adjust) and adjust[k]
        if original == DataType.DT_FLOAT16 and not five_hd:
            continue
        consumers = data.consumers(0)
        edge, new = (data, 0), desc.clone().set_data_type(DataType.DT_FLOAT16)
        if five_hd:
            shape, edge = input_from_5hd(graph, data, model_layout(desc.format, options))
            new.set_shape(shape).set_origin_shape(shape)
            new.set_format(Format.FORMAT_NC1HWC0).set_origin_format(Format.FORMAT_NC1HWC0)
        if original != DataType.DT_FLOAT16:
            cast = graph.add_node("Cast", graph.unique_name(f"{name}_fp16_cast"), inputs=[edge],
                                  input_names=["x"], output_names=["y"],
                                  attrs={"dst_type": int(original)}, origin=data.origin)
            edge = (cast, 0)
        for dst, slot in consumers:
            graph.connect(edge[0], edge[1], dst, slot)
        if data.num_inputs:
            data.update_input_desc(0, new)
        data.update_output_desc(0, new)
        changed += 1
    if changed:        # the new nodes were appended behind their consumers
        graph.sort()
    return changed


def apply_output_5hd(graph: Graph, options: dict) -> int:
    """is_output_adjust_hw_layout: NetOutput input k (the k-th --out_nodes entry) becomes
    fp16 NC1HWC0 where the k-th flag is true."""
    adjust = parse_adjust_flags(options.get("is_output_adjust_hw_layout", ""),
                                "is_output_adjust_hw_layout")
    if not any(adjust):
        return 0
    if not options.get("ge.outputNodeName"):
        raise GeError("E10001", {"value": options.get("is_output_adjust_hw_layout"),
                                 "parameter": "--is_output_adjust_hw_layout",
                                 "reason": "it applies to the --out_nodes entries; set "
                                           "--out_nodes too"})
    out = graph.output_node()
    changed = 0
    for slot, flag in enumerate(adjust):
        edge = out.input(slot) if slot < out.num_inputs else None
        if not flag or edge is None:
            continue
        layout = model_layout(edge[0].out_desc(edge[1]).format, options)
        new, _ = output_to_5hd(graph, edge, layout)
        graph.connect(new[0], new[1], out, slot)
        out.in_desc(slot).set_format(Format.FORMAT_NC1HWC0)
        changed += 1
    if changed:
        graph.sort()
    return changed
