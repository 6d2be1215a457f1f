"""Data types at the model's edges: `--output_type` (ge.outputDatatype: a Cast in front of
NetOutput per output) and `--input_fp16_nodes` (ge.INPUT_NODES_SET_FP16: those Data nodes
take fp16, with a Cast to the model's type behind them)."""
from __future__ import annotations

from ge.errors import GeError
from ge.graph import DataType, Graph

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
    """Make each named Data node an fp16 input; the model still computes in its own type."""
    names = [n for n in options.get("ge.INPUT_NODES_SET_FP16", "").split(";") if n]
    changed = 0
    for name in names:
        data = graph.node(name)
        if data is None:
            raise GeError("E10016", {"opname": name, "parameter": "input_fp16_nodes"})
        if data.type != "Data":
            raise GeError("E10017", {"opname": name, "parameter": "input_fp16_nodes"})
        desc = data.in_desc(0) if data.num_inputs else data.out_desc(0)
        original = desc.data_type
        if original == DataType.DT_FLOAT16:
            continue
        cast = graph.add_node("Cast", graph.unique_name(f"{name}_fp16_cast"),
                              input_names=["x"], output_names=["y"],
                              attrs={"dst_type": int(original)}, origin=data.origin)
        graph.replace_uses((data, 0), (cast, 0))
        graph.connect(data, 0, cast, 0)
        fp16 = desc.clone().set_data_type(DataType.DT_FLOAT16)
        if data.num_inputs:
            data.update_input_desc(0, fp16)
        data.update_output_desc(0, fp16)
        changed += 1
    return changed
