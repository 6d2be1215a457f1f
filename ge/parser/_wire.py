"""Finding the weights in a serialized model without decoding them (protobuf wire format).

ONNX: `strip_raw_data`.  TensorFlow: `strip_tensor_content` (GraphDef.node = 1, NodeDef.name = 1,
op = 2, attr = 5 as map entries key = 1 / value = 2, AttrValue.tensor = 8,
TensorProto.tensor_content = 4): the main graph's Const nodes' `value` bytes of MIN_LAZY or
more are left out and returned as node name -> (offset, length).
Caffe: `strip_blob_data` (NetParameter.layer = 100, LayerParameter.blobs = 7, BlobProto.data =
5, packed little-endian float32): (layer ordinal, blob index) -> (offset, length).

`strip_raw_data(buf)` walks the protobuf wire format of ModelProto.graph (field 7) and of each
of its initializers (GraphProto.initializer, field 5), and returns the model bytes with every
large TensorProto.raw_data (field 9) left out, plus where each one was: the k-th initializer of
the main graph -> (offset, length) in `buf`.  The parser decodes the small remainder and reads
the weights lazily from those ranges (docs/parser.md "Lazy weights").  Anything unexpected in
the wire format returns None, and the caller decodes the whole model as before (protobuf then
reports what is wrong).
"""
from __future__ import annotations

__all__ = ["strip_raw_data", "strip_tensor_content", "strip_blob_data", "MIN_LAZY"]

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


# -- TensorFlow GraphDef ------------------------------------------------------------------------
def _tf_tensor(buf, start: int, end: int) -> tuple[list, tuple | None]:
    parts, found = [], None
    for number, wire, field_start, value_start, value_end in _fields(buf, start, end):
        if number == 4 and wire == 2 and value_end - value_start >= MIN_LAZY:
            found = (value_start, value_end - value_start)
            continue
        parts.append(buf[field_start:value_end])
    return parts, found


def _tf_value_attr(buf, start: int, end: int) -> tuple[list, tuple | None]:
    """A map entry of NodeDef.attr whose key is "value": (its parts without tensor_content,
    the range); (None, None) for any other entry."""
    fields = list(_fields(buf, start, end))
    if not any(n == 1 and w == 2 and bytes(buf[vs:ve]) == b"value" for n, w, _, vs, ve in fields):
        return None, None
    parts, found = [], None
    for number, wire, field_start, value_start, value_end in fields:
        if number == 2 and wire == 2:                       # AttrValue
            inner = []
            for n, w, fs, vs, ve in _fields(buf, value_start, value_end):
                if n == 8 and w == 2:                       # tensor
                    tensor, found = _tf_tensor(buf, vs, ve)
                    inner += _delimited(8, tensor)
                else:
                    inner.append(buf[fs:ve])
            parts += _delimited(2, inner)
        else:
            parts.append(buf[field_start:value_end])
    return parts, found


def _tf_node(buf, start: int, end: int, ranges: dict) -> list:
    fields = list(_fields(buf, start, end))
    name = next((bytes(buf[vs:ve]) for n, w, _, vs, ve in fields if n == 1 and w == 2), b"")
    is_const = any(n == 2 and w == 2 and bytes(buf[vs:ve]) == b"Const"
                   for n, w, _, vs, ve in fields)
    parts = []
    for number, wire, field_start, value_start, value_end in fields:
        if is_const and number == 5 and wire == 2:
            entry, found = _tf_value_attr(buf, value_start, value_end)
            if found is not None:
                ranges[name.decode("utf-8", "replace")] = found
                parts += _delimited(5, entry)
                continue
        parts.append(buf[field_start:value_end])
    return parts


def strip_tensor_content(buf) -> tuple[bytes, dict] | None:
    """(GraphDef bytes without the large Const tensor_content of the main graph, {node name:
    (offset, length)}), or None when the bytes are not a well-formed message."""
    view = memoryview(buf).cast("B")
    try:
        parts, ranges = [], {}
        for number, wire, field_start, value_start, value_end in _fields(view, 0, len(view)):
            if number == 1 and wire == 2:
                parts += _delimited(1, _tf_node(view, value_start, value_end, ranges))
            else:
                parts.append(view[field_start:value_end])
    except _Bad:
        return None
    return b"".join(parts), ranges


# -- Caffe NetParameter ------------------------------------------------------------------------
def _caffe_layer(buf, start: int, end: int, layer: int, ranges: dict) -> list:
    parts, blob = [], 0
    for number, wire, field_start, value_start, value_end in _fields(buf, start, end):
        if number == 7 and wire == 2:                        # a BlobProto
            inner, found = [], None
            for n, w, fs, vs, ve in _fields(buf, value_start, value_end):
                if n == 5 and w == 2 and ve - vs >= MIN_LAZY and (ve - vs) % 4 == 0 \
                        and found is None:
                    found = (vs, ve - vs)                    # packed float data
                    continue
                inner.append(buf[fs:ve])
            if found is not None:
                ranges[(layer, blob)] = found
            parts += _delimited(7, inner)
            blob += 1
        else:
            parts.append(buf[field_start:value_end])
    return parts


def strip_blob_data(buf) -> tuple[bytes, dict] | None:
    """(NetParameter bytes without the large packed `data` of its layers' blobs, {(layer
    ordinal, blob index): (offset, length)}), or None when the bytes are not well-formed."""
    view = memoryview(buf).cast("B")
    try:
        parts, ranges, layer = [], {}, 0
        for number, wire, field_start, value_start, value_end in _fields(view, 0, len(view)):
            if number == 100 and wire == 2:
                parts += _delimited(100, _caffe_layer(view, value_start, value_end, layer,
                                                      ranges))
                layer += 1
            else:
                parts.append(view[field_start:value_end])
    except _Bad:
        return None
    return b"".join(parts), ranges
