"""Protobuf schemas from tables, without protoc: one builder for every schema we read or write.

A table is `{"package": ..., "enums": {name: values}, "nested_enums": {"Msg.Enum": values},
"messages": {"Msg" or "Outer.Inner": [field rows]}}`.  A field row is (name, number, type,
label): label "" (singular), "*" (repeated) or "oneof:<group>"; a type that is not a scalar
names a message or enum of the same table ("Outer.Inner" for nested ones); "map:<ValueType>"
declares map<string, ValueType>.  Enum values are numbered by their index, or given as a
{name: number} dict.  A table with `"syntax": "proto2"` (framework schemas such as Caffe's) has
field presence; its rows may carry a fifth element, the default in proto text ("true", "MAX",
"0.5"), and the label "*packed" for a packed repeated scalar.  `add_file` puts a table into the
one descriptor pool; `message_class` gives its message classes.
"""
from __future__ import annotations

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

__all__ = ["build_file", "add_file", "message_class", "is_repeated"]

_F = descriptor_pb2.FieldDescriptorProto
_SCALARS = {
    "string": _F.TYPE_STRING, "bytes": _F.TYPE_BYTES, "bool": _F.TYPE_BOOL,
    "float": _F.TYPE_FLOAT, "double": _F.TYPE_DOUBLE, "int32": _F.TYPE_INT32,
    "int64": _F.TYPE_INT64, "uint32": _F.TYPE_UINT32, "uint64": _F.TYPE_UINT64,
}


def _entry_name(field: str) -> str:
    return "".join(part.capitalize() for part in field.split("_")) + "Entry"


def _set_type(field, type_name: str, package: str, enums) -> None:
    if type_name in _SCALARS:
        field.type = _SCALARS[type_name]
    else:
        field.type = _F.TYPE_ENUM if type_name in enums else _F.TYPE_MESSAGE
        field.type_name = f".{package}.{type_name}"


def _enum_values(values) -> list:
    pairs = values.items() if isinstance(values, dict) else ((v, i) for i, v in enumerate(values))
    return [descriptor_pb2.EnumValueDescriptorProto(name=v, number=n) for v, n in pairs]


def build_file(name: str, table: dict) -> descriptor_pb2.FileDescriptorProto:
    package = table["package"]
    enums = set(table["enums"]) | set(table["nested_enums"])
    fdp = descriptor_pb2.FileDescriptorProto(name=name, package=package,
                                             syntax=table.get("syntax", "proto3"))
    protos: dict[str, descriptor_pb2.DescriptorProto] = {}

    def message(path: str) -> descriptor_pb2.DescriptorProto:
        if path not in protos:
            outer, _, leaf = path.rpartition(".")
            parent = message(outer).nested_type if outer else fdp.message_type
            protos[path] = parent.add(name=leaf)
        return protos[path]

    for enum_name, values in table["enums"].items():
        fdp.enum_type.add(name=enum_name).value.extend(_enum_values(values))
    for path in table["messages"]:
        message(path)
    for path, values in table["nested_enums"].items():
        outer, _, leaf = path.rpartition(".")
        message(outer).enum_type.add(name=leaf).value.extend(_enum_values(values))
    for path, fields in table["messages"].items():
        msg = message(path)
        oneofs: dict[str, int] = {}
        for fname, number, ftype, label, *default in fields:
            field = msg.field.add(name=fname, number=number, json_name=fname)
            field.label = _F.LABEL_REPEATED if label.startswith("*") else _F.LABEL_OPTIONAL
            if label == "*packed":
                field.options.packed = True
            if default:
                field.default_value = default[0]
            if ftype.startswith("map:"):
                entry = msg.nested_type.add(name=_entry_name(fname))
                entry.options.map_entry = True
                entry.field.add(name="key", number=1, type=_F.TYPE_STRING,
                                label=_F.LABEL_OPTIONAL, json_name="key")
                value = entry.field.add(name="value", number=2, label=_F.LABEL_OPTIONAL,
                                        json_name="value")
                _set_type(value, ftype[4:], package, enums)
                field.type = _F.TYPE_MESSAGE
                field.type_name = f".{package}.{path}.{entry.name}"
                continue
            _set_type(field, ftype, package, enums)
            if label.startswith("oneof:"):
                group = label[len("oneof:"):]
                if group not in oneofs:
                    oneofs[group] = len(msg.oneof_decl)
                    msg.oneof_decl.add(name=group)
                field.oneof_index = oneofs[group]
    return fdp


_POOL = descriptor_pool.DescriptorPool()


def add_file(name: str, table: dict) -> None:
    """Build `table` into the pool under the file name `name` (once per process)."""
    _POOL.Add(build_file(name, table))


def message_class(full_name: str):
    """The message class of a schema message, e.g. message_class("ge.proto.OpDef")."""
    descriptor = _POOL.FindMessageTypeByName(full_name)
    if hasattr(message_factory, "GetMessageClass"):  # protobuf >= 4.22
        return message_factory.GetMessageClass(descriptor)
    return message_factory.MessageFactory(_POOL).GetPrototype(descriptor)


def is_repeated(field) -> bool:
    """Whether a FieldDescriptor is repeated, on every protobuf version (`label` is gone in
    protobuf 7, `is_repeated` is new in 5)."""
    flag = getattr(field, "is_repeated", None)
    return flag if flag is not None else field.label == field.LABEL_REPEATED
