"""The AIPP configuration schema (`--insert_op_conf`): CANN's `domi.InsertNewOps`.

Field names, numbers and enums are those of graph_metadef/proto/insert_op.proto in CANN GE,
written here as a table (ge.proto.schema) so that the file's protobuf text format is parsed
exactly as ATC parses it: an unknown field, a misspelt enum value or a number out of a field's
range is a parse error of the file.  Meaning and validation of the fields live in
ge.compiler.aipp; this module only knows the wire schema.
"""
from __future__ import annotations

from google.protobuf import text_format

from .schema import add_file, message_class

__all__ = ["InsertNewOps", "AippOpParams", "INPUT_FORMATS", "AIPP_MODES", "AIPP_FIELDS",
           "parse_text", "ParseError"]

# AippOpParams.InputFormat (index == value)
INPUT_FORMATS = (
    "UNDEFINED YUV420SP_U8 XRGB8888_U8 RGB888_U8 YUV400_U8 NC1HWC0DI_FP16 NC1HWC0DI_S8 "
    "ARGB8888_U8 YUYV_U8 YUV422SP_U8 AYUV444_U8 RAW10 RAW12 RAW16 RAW24 RGB16 RGB20 RGB24 "
    "RGB8_IR RGB16_IR RGB24_IR").split()
# AippOpParams.AippMode (index == value)
AIPP_MODES = ("undefined", "static", "dynamic")

_CHANNELS = "0123"
AIPP_FIELDS = [
    ("aipp_mode", 1, "AippOpParams.AippMode", ""),
    ("related_input_rank", 2, "uint32", ""),
    ("related_input_name", 6, "string", ""),
    ("input_edge_idx", 3, "uint32", "*"),
    ("max_src_image_size", 4, "uint32", ""),
    ("support_rotation", 5, "bool", ""),
    ("input_format", 51, "AippOpParams.InputFormat", ""),
    ("csc_switch", 52, "bool", ""),
    ("cpadding_value", 53, "float", ""),
    ("rbuv_swap_switch", 54, "bool", ""),
    ("ax_swap_switch", 55, "bool", ""),
    ("single_line_mode", 56, "bool", ""),
    ("src_image_size_w", 57, "int32", ""),
    ("src_image_size_h", 58, "int32", ""),
    ("crop", 59, "bool", ""),
    ("load_start_pos_w", 60, "int32", ""),
    ("load_start_pos_h", 61, "int32", ""),
    ("crop_size_w", 62, "int32", ""),
    ("crop_size_h", 63, "int32", ""),
    ("resize", 64, "bool", ""),
    ("resize_output_w", 65, "int32", ""),
    ("resize_output_h", 66, "int32", ""),
    ("padding", 67, "bool", ""),
    ("left_padding_size", 68, "int32", ""),
    ("right_padding_size", 69, "int32", ""),
    ("top_padding_size", 70, "int32", ""),
    ("bottom_padding_size", 71, "int32", ""),
    ("padding_value", 72, "float", ""),
    *[(f"mean_chn_{c}", n, "int32", "") for c, n in zip(_CHANNELS, (10, 11, 12, 19))],
    *[(f"min_chn_{c}", n, "float", "") for c, n in zip(_CHANNELS, (13, 14, 15, 20))],
    *[(f"var_reci_chn_{c}", n, "float", "*") for c, n in zip(_CHANNELS, (16, 17, 18, 21))],
    *[(f"matrix_r{r}c{c}", 30 + 3 * r + c, "int32", "*") for r in range(3) for c in range(3)],
    *[(f"output_bias_{i}", 39 + i, "int32", "*") for i in range(3)],
    *[(f"input_bias_{i}", 42 + i, "int32", "*") for i in range(3)],
    ("raw_rgbir_to_f16_n", 45, "uint32", ""),
]

_INSERT_OP = {
    "package": "domi",
    "enums": {},
    "nested_enums": {
        "AippOpParams.InputFormat": INPUT_FORMATS,
        "AippOpParams.AippMode": AIPP_MODES,
        "MultiShapeOpParams.MultiShapeMode": ("batch", "resolution"),
    },
    "messages": {
        "InsertNewOps": [("aipp_op", 1, "AippOpParams", "*"),
                         ("multi_shape_op", 2, "MultiShapeOpParams", "*")],
        "AippOpParams": AIPP_FIELDS,
        "MultiShapeOpParams": [
            ("mode", 1, "MultiShapeOpParams.MultiShapeMode", ""),
            ("related_input_rank", 2, "uint32", ""),
            ("batch_list", 11, "uint32", "*"),
        ],
    },
}

add_file("pyatc/insert_op.proto", _INSERT_OP)

InsertNewOps = message_class("domi.InsertNewOps")
AippOpParams = message_class("domi.AippOpParams")
ParseError = text_format.ParseError


def parse_text(text: str):
    """An InsertNewOps from its protobuf text; raises ParseError (line:column and the field)."""
    message = InsertNewOps()
    text_format.Parse(text, message)
    return message
