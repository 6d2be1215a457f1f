"""Finding the initializers' raw_data in a serialized ModelProto without decoding it.

`strip_raw_data(buf)` walks the protobuf wire format of ModelProto.graph (field 7) and of each
of its initializers (GraphProto.initializer, field 5), and returns the model bytes with every
large TensorProto.raw_data (field 9) left out, plus where each one was: the k-th initializer of
the main graph -> (offset, length) in `buf`.  The parser decodes the small remainder and reads
the weights lazily from those ranges (docs/parser.md "Lazy weights").  Anything unexpected in
the wire format returns None, and the caller decodes the whole model as before (protobuf then
reports what is wrong).
"""
from __future__ import annotations

__all__ = ["strip_raw_data", "MIN_LAZY"]

MIN_LAZY = 1024                 # smaller raw_data stays inline: not worth a lazy view
_MODEL_GRAPH, _GRAPH_INITIALIZER, _TENSOR_RAW_DATA = 7, 5, 9


class _Bad(Exception):
    pass


def _varint(buf, pos: int, end: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= end or shift > 63:
            raise _Bad()
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos
        shift += 7


def _encode_varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _fields(buf, start: int, end: int):
    """(field number, wire type, field start, value start, value end) of each field."""
    pos = start
    while pos < end:
        tag, value_start = _varint(buf, pos, end)
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            _, value_end = _varint(buf, value_start, end)
        elif wire == 1:
            value_end = value_start + 8
        elif wire == 5:
            value_end = value_start + 4
        elif wire == 2:
            length, value_start = _varint(buf, value_start, end)
            value_end = value_start + length
        else:                       # groups: never in ONNX
            raise _Bad()
        if value_end > end or number == 0:
            raise _Bad()
        yield number, wire, pos, value_start, value_end
        pos = value_end


def _delimited(number: int, payload: list) -> list:
    size = sum(len(p) for p in payload)
    return [_encode_varint(number << 3 | 2), _encode_varint(size)] + payload


def _tensor(buf, start: int, end: int, ranges: list) -> list:
    parts, found = [], None
    for number, wire, field_start, value_start, value_end in _fields(buf, start, end):
        if number == _TENSOR_RAW_DATA and wire == 2 and value_end - value_start >= MIN_LAZY:
            found = (value_start, value_end - value_start)
            continue
        parts.append(buf[field_start:value_end])
    ranges.append(found)
    return parts


def _graph(buf, start: int, end: int, ranges: list) -> list:
    parts = []
    for number, wire, field_start, value_start, value_end in _fields(buf, start, end):
        if number == _GRAPH_INITIALIZER and wire == 2:
            parts += _delimited(number, _tensor(buf, value_start, value_end, ranges))
        else:
            parts.append(buf[field_start:value_end])
    return parts


def strip_raw_data(buf) -> tuple[bytes, list] | None:
    """(model bytes without large initializer raw_data, [(offset, length) or None per
    initializer of the main graph, in order]), or None when the bytes are not well-formed."""
    view = memoryview(buf).cast("B")
    try:
        parts, ranges = [], []
        for number, wire, field_start, value_start, value_end in _fields(view, 0, len(view)):
            if number == _MODEL_GRAPH and wire == 2:
                parts += _delimited(number, _graph(view, value_start, value_end, ranges))
            else:
                parts.append(view[field_start:value_end])
    except _Bad:
        return None
    return b"".join(parts), ranges
