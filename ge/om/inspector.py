"""OM inspection for ATC modes 1, 5 and 6 (spec/atc-cli.md §9.2, §9.5).

- om_to_json(path): the MODEL_DEF partition as JSON (mode 1).
- pbtxt_to_json(path): a ge_proto text dump (protobuf text ModelDef) as JSON (mode 5).
- om_info(path) / format_model_info(info): the model-info block (mode 6, --display_model_info).

JSON shape (docs/om.md): one object per message with the proto field names, only fields that
are set, in field-number order; map fields as lists of {"key", "value"} sorted by key; enums
as names; integers of every width as JSON numbers; bytes as text.  The fields ATC drops are
dropped at every depth (DROPPED_FIELDS), so no weight bytes reach the JSON.  2-space indent.
"""
from __future__ import annotations

import json

from google.protobuf import text_format
from google.protobuf.descriptor import FieldDescriptor

from ge.fsutil import read_text_regular
from ge.gear_layout import FLAG_OF_TYPE
from ge.graph.attr_names import (ATTR_CUSTOM_PACKAGES, ATTR_DYNAMIC_RANGES,
                                 ATTR_MODEL_DTYPE_COUNTS, ATTR_MODEL_PRECISION, ATTR_TARGET)
from ge.proto import ge_ir as pb
from ge.proto.schema import is_repeated
from .container import PartitionType, om_error
from .reader import read_om

__all__ = ["om_to_json", "pbtxt_to_json", "model_def_to_json", "message_to_jsonable",
           "om_info", "OM_INFO_KEYS", "DROPPED_FIELDS"]

DROPPED_FIELDS = frozenset({"output", "data_offset", "data", "workspace", "workspace_bytes",
                            "memory_size", "weight_size", "size", "bt", "quantize_factor"})

_FD = FieldDescriptor



def _scalar(fd, value):
    if fd.type == _FD.TYPE_ENUM:
        enum_value = fd.enum_type.values_by_number.get(value)
        return enum_value.name if enum_value is not None else value
    if fd.type == _FD.TYPE_BYTES:
        return value.decode("utf-8", "backslashreplace")
    if fd.type == _FD.TYPE_MESSAGE:
        return message_to_jsonable(value)
    return value


def message_to_jsonable(message, dropped=DROPPED_FIELDS) -> dict:
    """A message as plain dicts/lists (see the module docstring for the shape)."""
    out = {}
    for fd, value in message.ListFields():
        if fd.name in dropped:
            continue
        if fd.message_type is not None and fd.message_type.GetOptions().map_entry:
            value_fd = fd.message_type.fields_by_name["value"]
            out[fd.name] = [{"key": key, "value": _scalar(value_fd, value[key])}
                            for key in sorted(value)]
        elif is_repeated(fd):
            out[fd.name] = [_scalar(fd, v) for v in value]
        else:
            out[fd.name] = _scalar(fd, value)
    return out


def model_def_to_json(model_def) -> str:
    return json.dumps(message_to_jsonable(model_def), indent=2, ensure_ascii=False) + "\n"


def om_to_json(path: str) -> str:
    """Mode 1 with an OM: JSON of its ModelDef (weights omitted)."""
    return model_def_to_json(read_om(path).model_def)


def pbtxt_to_json(path: str) -> str:
    """Mode 5: a ge_proto text dump (protobuf text of ge.proto.ModelDef) -> JSON."""
    try:
        text = read_text_regular(path)
    except (OSError, UnicodeDecodeError) as e:
        raise om_error(path, getattr(e, "strerror", None) or str(e)) from None
    model_def = pb.ModelDef()
    try:
        text_format.Parse(text, model_def)
    except text_format.ParseError as e:
        raise om_error(path, f"not a protobuf text ge.proto.ModelDef ({e})") from None
    return model_def_to_json(model_def)


# -- model-info block -------------------------------------------------------------------------
_STRING_FACTS = ("atc_cmdline", "atc_version", "soc_version", "framework_type")
_INT_FACTS = ("memory_size", "weight_size", "stream_num", "event_num")


# Names of the five om_info_list entries, as the model-info block prints them (§9.5).
OM_INFO_KEYS = ("weight_data_size", "tbe_kernels_size", "cust_aicpu_kernel_store_size",
                "task_info_size", "so_store_size")


def om_info(path: str) -> dict:
    """The facts of the model-info block; missing numbers are -1, missing strings ""."""
    om = read_om(path)
    info: dict = {key: om.model_attr(key, "") for key in _STRING_FACTS}
    info.update({key: om.model_attr(key, -1) for key in _INT_FACTS})
    info["modeldef_size"] = om.partition_size(PartitionType.MODEL_DEF)
    sizes = om.model_attr("om_info_list")
    info["om_info_list"] = sizes
    if sizes is not None and len(sizes) == len(OM_INFO_KEYS):
        info.update(zip(OM_INFO_KEYS, sizes))
    info["target"] = om.model_attr(ATTR_TARGET, "")
    info["aipp"] = aipp_configs(om.model_def)
    info["custom_op_packages"] = list(om.model_attr(ATTR_CUSTOM_PACKAGES, None) or [])
    info["is_unknown_shape"] = bool(om.header.is_unknow_model)
    info["input_shape_range"] = om.model_attr(ATTR_DYNAMIC_RANGES, "")
    info["compiled_input_shapes"] = _data_shapes(om.model_def) if om.header.is_unknow_model \
        else ""
    info["external_weights"] = external_weights(om.model_def)
    info["gears"] = gear_summary(om.model_def)
    info["precision_mode"] = om.model_attr(ATTR_MODEL_PRECISION, "")
    info["precision_dtypes"] = list(om.model_attr(ATTR_MODEL_DTYPE_COUNTS, None) or [])
    return info


def _data_shapes(model_def) -> str:
    """`name:d0,d1;...` of the root graph's Data ops (the shapes the OM's model is built at)."""
    return ";".join(f"{op.name}:{','.join(map(str, op.output_desc[0].shape.dim))}"
                    for op in model_def.graph[0].op if op.type == "Data" and op.output_desc)


def external_weights(model_def) -> list:
    """[(weight file name, FileConstant ops using it, bytes they use)] (ge.om.external)."""
    found: dict = {}
    for graph in model_def.graph:
        for op in graph.op:
            if op.type == "FileConstant" and "location" in op.attr:
                name = op.attr["location"].s.decode("utf-8", "replace")
                count, size, ranges = found.get(name, (0, 0, set()))
                span = (op.attr["offset"].i, op.attr["length"].i)
                found[name] = (count + 1, size + (span[1] if span not in ranges else 0),
                               ranges | {span})
    return [(name, count, size) for name, (count, size, _) in sorted(found.items())]




def gear_summary(model_def) -> dict:
    """{"option", "gears", "inputs"} of a model compiled with gears (its root Case), {}
    otherwise."""
    root = model_def.graph[0] if model_def.graph else None
    case = next((op for op in (root.op if root else ()) if op.type == "Case"
                 and "_batch_num" in op.attr), None)
    if case is None:
        return {}
    kind = case.attr["mbatch_dynamic_type"].i if "mbatch_dynamic_type" in case.attr else 3
    gears = [list(case.attr[f"_pred_value_{i}"].list.i) for i in range(case.attr["_batch_num"].i)]
    names = [n.decode() for n in case.attr["user_designate_shape_order"].list.s] \
        if "user_designate_shape_order" in case.attr else []
    return {"option": FLAG_OF_TYPE.get(kind, "dynamic_dims"), "gears": gears, "inputs": names}


def aipp_configs(model_def) -> list:
    """[(model input, AIPP configuration JSON)] of the model's Aipp ops (docs/aipp.md)."""
    found = []
    for graph in model_def.graph[:1]:
        for op in graph.op:
            if op.type == "Aipp" and "aipp_config_path" in op.attr:
                source = op.input[0].rsplit(":", 1)[0] if op.input else ""
                found.append((source, op.attr["aipp_config_path"].s.decode("utf-8", "replace")))
    return found

