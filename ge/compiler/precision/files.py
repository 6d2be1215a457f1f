"""The precision configuration files: --keep_dtype, --modify_mixlist, --customize_dtypes and
--op_precision_mode (formats in docs/precision.md).  Each parser returns plain data; a bad
file is CANN's E10003 naming the option, the file and the line."""
from __future__ import annotations

import configparser
import json
import re
from dataclasses import dataclass

from ge.errors import GeError
from ge.graph import DataType
from ge.ops.precision import BLACK, GRAY, WHITE

__all__ = ["OpSelector", "KeepDtype", "CustomDtype", "read_keep_dtype", "read_modify_mixlist",
           "read_customize_dtypes", "read_op_precision_mode", "IMPL_MODES"]

OPTYPE_PREFIX = "OpType::"
_PASCAL = re.compile(r"^[A-Z][A-Za-z0-9]*$")
_MIXLIST_KEYS = {"black-list": BLACK, "white-list": WHITE, "gray-list": GRAY}
_UPDATES = ("to-add", "to-remove")
# --op_precision_mode values (CANN's op implementation modes) -> CANN's _op_impl_mode_enum bit
IMPL_MODES = {"high_performance": 0x2, "high_precision": 0x4, "super_performance": 0x8,
              "support_out_of_bound_index": 0x10, "enable_float_32_execution": 0x20,
              "enable_hi_float_32_execution": 0x40}
DTYPE_NAMES = {"float32": DataType.DT_FLOAT, "float": DataType.DT_FLOAT,
               "float16": DataType.DT_FLOAT16, "bfloat16": DataType.DT_BF16,
               "int8": DataType.DT_INT8, "uint8": DataType.DT_UINT8,
               "int32": DataType.DT_INT32, "int64": DataType.DT_INT64}


def _bad(option: str, path: str, line: int, reason: str) -> GeError:
    where = f"{path}, line {line}" if line else path
    return GeError("E10003", {"parameter": option, "value": where, "reason": reason})


def _read(option: str, path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as e:
        raise GeError("E13001", {"file": path, "reason": e.strerror or str(e)}) from None
    except UnicodeDecodeError:
        raise _bad(option, path, 0, "The file is not UTF-8 text.") from None


@dataclass(frozen=True)
class OpSelector:
    """One line naming ops: by node name (or framework name) or by `OpType::Type`."""
    text: str
    line: int
    op_type: str = ""      # set for OpType:: lines
    op_name: str = ""      # set for name lines

    def matches(self, node) -> bool:
        if self.op_type:
            return node.type == self.op_type
        return node.name == self.op_name or self.op_name in node.origin


def _selector(option: str, path: str, line: int, text: str) -> OpSelector:
    if text.startswith(OPTYPE_PREFIX):
        op_type = text[len(OPTYPE_PREFIX):].strip()
        if not _PASCAL.match(op_type):
            raise _bad(option, path, line, f"The operator type [{op_type}] in the config file "
                                           f"is invalid. It must be in PascalCase.")
        return OpSelector(text, line, op_type=op_type)
    return OpSelector(text, line, op_name=text)


@dataclass(frozen=True)
class KeepDtype:
    selectors: tuple = ()


def read_keep_dtype(path: str) -> KeepDtype:
    """One op per line: a node name, or `OpType::Type`; blank lines are skipped."""
    out = []
    for k, raw in enumerate(_read("keep_dtype", path).splitlines(), 1):
        text = raw.strip()
        if text:
            out.append(_selector("keep_dtype", path, k, text))
    return KeepDtype(tuple(out))


def read_modify_mixlist(path: str) -> dict:
    """{"black-list"/"white-list"/"gray-list": {"to-add": [...], "to-remove": [...]}} ->
    {op type: new list} (to-remove moves an op to the gray list)."""
    text = _read("modify_mixlist", path)
    if not text.strip():
        raise _bad("modify_mixlist", path, 0, "The file is empty.")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise _bad("modify_mixlist", path, e.lineno,
                   f"The configuration file is not in JSON format: {e.msg}.") from None
    if not isinstance(doc, dict):
        raise _bad("modify_mixlist", path, 1, "The top level must be a JSON object.")
    changes: dict = {}
    for key, body in doc.items():
        line = _line_of(text, f'"{key}"')
        if key not in _MIXLIST_KEYS:
            raise _bad("modify_mixlist", path, line, f"Top-level key \"{key}\" must be "
                                                     f"gray-list, white-list or black-list.")
        if not isinstance(body, dict) or any(u not in _UPDATES for u in body):
            raise _bad("modify_mixlist", path, line, f"\"{key}\" must hold \"to-add\" and/or "
                                                     f"\"to-remove\" lists.")
        for update, types in body.items():
            if not isinstance(types, list) or not all(isinstance(t, str) for t in types):
                raise _bad("modify_mixlist", path, _line_of(text, f'"{update}"', line),
                           f"\"{key}\".\"{update}\" must be a list of op type names.")
            for op_type in types:
                if not _PASCAL.match(op_type):
                    raise _bad("modify_mixlist", path, _line_of(text, f'"{op_type}"', line),
                               f"The operator type [{op_type}] is invalid. It must be in "
                               f"PascalCase.")
                changes[op_type] = _MIXLIST_KEYS[key] if update == "to-add" else GRAY
    return changes


def _line_of(text: str, needle: str, after_line: int = 0) -> int:
    for k, raw in enumerate(text.splitlines(), 1):
        if k >= after_line and needle in raw:
            return k
    return 0


@dataclass(frozen=True)
class CustomDtype:
    selector: OpSelector
    inputs: tuple = ()      # DataType per input (empty = unchanged)
    outputs: tuple = ()


def read_customize_dtypes(path: str) -> tuple:
    """Lines `Opname::InputDtype:t1,t2,...,OutputDtype:t1,...` or
    `OpType::Type:InputDtype:...,OutputDtype:...`."""
    out = []
    for k, raw in enumerate(_read("customize_dtypes", path).splitlines(), 1):
        text = raw.strip()
        if not text:
            continue
        if "::" not in text:
            raise _bad("customize_dtypes", path, k, "The line must be "
                       "Opname::InputDtype:...,OutputDtype:... or "
                       "OpType::Type:InputDtype:...,OutputDtype:...")
        head, spec = text.split("::", 1)
        if head == "OpType":
            if ":" not in spec:
                raise _bad("customize_dtypes", path, k, "OpType:: needs a type and dtypes.")
            op_type, spec = spec.split(":", 1)
            selector = _selector("customize_dtypes", path, k, OPTYPE_PREFIX + op_type)
        else:
            selector = OpSelector(text, k, op_name=head)
        ins, outs = _dtype_lists(path, k, spec)
        out.append(CustomDtype(selector, ins, outs))
    return tuple(out)


def _dtype_lists(path: str, line: int, spec: str) -> tuple:
    lists: dict = {"InputDtype": [], "OutputDtype": []}
    current = None
    for token in (t.strip() for t in spec.split(",")):
        if ":" in token:
            current, token = (part.strip() for part in token.split(":", 1))
            if current not in lists:
                raise _bad("customize_dtypes", path, line,
                           f"[{current}] must be InputDtype or OutputDtype.")
        if current is None or token.lower() not in DTYPE_NAMES:
            raise _bad("customize_dtypes", path, line, f"Data type [{token}] is invalid; use "
                       + ", ".join(DTYPE_NAMES) + ".")
        lists[current].append(DTYPE_NAMES[token.lower()])
    return tuple(lists["InputDtype"]), tuple(lists["OutputDtype"])


def read_op_precision_mode(path: str) -> tuple:
    """INI with [ByOpType] (type=mode) and [ByNodeName] (name=mode) sections ->
    (by type {type: mode}, by name {name: mode})."""
    text = _read("op_precision_mode", path)
    parser = configparser.ConfigParser(delimiters=("=",), interpolation=None)
    parser.optionxform = str
    try:
        parser.read_string(text, source=path)
    except configparser.Error as e:
        line = getattr(e, "lineno", 0)
        raise _bad("op_precision_mode", path, line, f"Not an INI file: {e.message}") from None
    by_type, by_name = {}, {}
    for section in parser.sections():
        if section not in ("ByOpType", "ByNodeName"):
            raise _bad("op_precision_mode", path, _line_of(text, f"[{section}]"),
                       f"Section [{section}] must be [ByOpType] or [ByNodeName].")
        target = by_type if section == "ByOpType" else by_name
        for key, mode in parser.items(section):
            if mode not in IMPL_MODES:
                raise _bad("op_precision_mode", path, _line_of(text, key),
                           f"Mode [{mode}] of {key} must be one of " + ", ".join(IMPL_MODES)
                           + ".")
            target[key] = mode
    return by_type, by_name
