"""Reading a Caffe model: the `.prototxt` network (protobuf text) and the `.caffemodel` weights
(binary `NetParameter`), the legacy V1 `layers` upgraded to `layer`, and the weight blobs as
numpy arrays keyed by layer name.  Knows no layer semantics (those are the converters').
"""
from __future__ import annotations

import numpy as np
from google.protobuf import json_format, text_format
from google.protobuf.message import DecodeError

from ge.errors import GeError, warn
from ge.fsutil import check_regular, os_reason
from ge.graph.filebacked import map_file
from ge.proto.caffe import NetParameter
from ge.proto.schema import is_repeated

from .._wire import strip_blob_data

__all__ = ["read_prototxt", "read_caffemodel", "read_caffemodel_lazy", "LazyBlob", "upgrade_v1",
           "blob_array", "weight_blobs", "unique_layer_names", "is_train_only", "net_to_json"]

# V1LayerParameter.LayerType name -> the layer type string of the current format.
_V1_TYPES = {
    "ABSVAL": "AbsVal", "ACCURACY": "Accuracy", "ARGMAX": "ArgMax", "BNLL": "BNLL",
    "CONCAT": "Concat", "CONTRASTIVE_LOSS": "ContrastiveLoss", "CONVOLUTION": "Convolution",
    "DATA": "Data", "DECONVOLUTION": "Deconvolution", "DROPOUT": "Dropout",
    "DUMMY_DATA": "DummyData", "EUCLIDEAN_LOSS": "EuclideanLoss", "ELTWISE": "Eltwise",
    "EXP": "Exp", "FLATTEN": "Flatten", "HDF5_DATA": "HDF5Data", "HDF5_OUTPUT": "HDF5Output",
    "HINGE_LOSS": "HingeLoss", "IM2COL": "Im2col", "IMAGE_DATA": "ImageData",
    "INFOGAIN_LOSS": "InfogainLoss", "INNER_PRODUCT": "InnerProduct", "LRN": "LRN",
    "MEMORY_DATA": "MemoryData", "MULTINOMIAL_LOGISTIC_LOSS": "MultinomialLogisticLoss",
    "MVN": "MVN", "POOLING": "Pooling", "POWER": "Power", "RELU": "ReLU", "SIGMOID": "Sigmoid",
    "SIGMOID_CROSS_ENTROPY_LOSS": "SigmoidCrossEntropyLoss", "SILENCE": "Silence",
    "SOFTMAX": "Softmax", "SOFTMAX_LOSS": "SoftmaxWithLoss", "SPLIT": "Split", "SLICE": "Slice",
    "TANH": "TanH", "WINDOW_DATA": "WindowData", "THRESHOLD": "Threshold",
}
# Fields copied as they are from a V1 layer (same names and message types in both forms).
_V1_SKIP = {"type", "param", "blob_share_mode", "blobs_lr", "weight_decay", "layer"}


def _read_bytes(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as exc:
        raise GeError("E13001", {"file": path, "reason": os_reason(exc)}) from None


def _parse_error(path: str, reason: str) -> GeError:
    return GeError("E19005", {"file": path, "reason": reason})


def read_prototxt(path: str) -> NetParameter:
    """The network of a .prototxt; unknown fields are skipped (as CANN's reader does)."""
    data = _read_bytes(path)
    net = NetParameter()
    try:
        text_format.Parse(data.decode("utf-8"), net, allow_unknown_field=True)
    except (text_format.ParseError, UnicodeDecodeError) as exc:
        raise _parse_error(path, str(exc)) from None
    if not net.layer and not net.layers:
        raise GeError("E11022", {})
    if not net.layer:
        upgrade_v1(net, path)
    return net


class LazyBlob:
    """A BlobProto whose packed `data` was left in the mapped .caffemodel: the message's other
    fields, plus `file_data` (a uint8 view of the float32 bytes) for `blob_array`."""

    def __init__(self, proto, file_data: np.ndarray):
        self._proto, self.file_data = proto, file_data

    def __getattr__(self, name):
        return getattr(self._proto, name)


def read_caffemodel_lazy(path: str) -> tuple[NetParameter, dict]:
    """`read_caffemodel` with the large blob data left in the mapped file (ge.parser._wire):
    (net, {(layer ordinal, blob index): uint8 view}) for `weight_blobs`."""
    try:
        check_regular(path)
        mapped = map_file(path)
    except OSError as exc:
        raise GeError("E13001", {"file": path, "reason": os_reason(exc)}) from None
    stripped = strip_blob_data(mapped) if mapped.size else None
    if stripped is None:
        return read_caffemodel(path), {}
    data, ranges = stripped
    net = read_caffemodel(path, data)
    return net, {key: mapped[offset:offset + length] for key, (offset, length) in ranges.items()}


def read_caffemodel(path: str, data: bytes | None = None) -> NetParameter:
    data = _read_bytes(path) if data is None else data
    net = NetParameter()
    try:
        net.ParseFromString(data)
    except (DecodeError, RuntimeError, ValueError) as exc:
        raise _parse_error(path, f"not a binary Caffe NetParameter ({exc or 'truncated'})") \
            from None
    if not net.layer and not net.layers:
        raise GeError("E11024", {})
    if not net.layer:
        upgrade_v1(net, path)
    return net


def upgrade_v1(net: NetParameter, path: str) -> None:
    """Legacy `layers` (V1LayerParameter) → `layer`, in place.  CANN refuses such files
    (E11021 / E11023); we convert them as Caffe's own upgrade tool does and warn (WP0600)."""
    for old in net.layers:
        new = net.layer.add()
        for field, value in old.ListFields():
            if field.name in _V1_SKIP:
                continue
            target = getattr(new, field.name)
            if is_repeated(field):
                target.extend(value)
            elif field.message_type is not None:
                target.CopyFrom(value)
            else:
                setattr(new, field.name, value)
        type_name = old.DESCRIPTOR.fields_by_name["type"].enum_type.values_by_number[old.type].name
        new.type = _V1_TYPES.get(type_name, type_name)
        new.blobs.extend(old.blobs)
    del net.layers[:]
    warn("WP0600", {"file": path})


def unique_layer_names(net: NetParameter) -> list[str]:
    """Layer names with CANN's renaming of repeats: the second `x` is `x_same_1`, ..."""
    seen: dict[str, int] = {}
    names = []
    for layer in net.layer:
        name = layer.name
        if name in seen:
            seen[name] += 1
            name = f"{name}_same_{seen[name] - 1}"
        seen.setdefault(name, 1)
        names.append(name)
    return names


def is_train_only(layer) -> bool:
    """A layer included in the TRAIN phase only is skipped (CANN's CheckValidLayer)."""
    return any(rule.HasField("phase") and rule.phase == 0 for rule in layer.include)


def blob_array(blob) -> np.ndarray:
    """(flat float32 values, dims) of a BlobProto: dims from `shape`, else the legacy
    num/channels/height/width."""
    file_data = getattr(blob, "file_data", None)
    if file_data is not None:              # a view of the mapped .caffemodel (LazyBlob)
        values = file_data.view("<f4").astype(np.float32, copy=False)
    elif blob.double_data:
        values = np.asarray(blob.double_data, dtype=np.float64).astype(np.float32)
    else:
        values = np.asarray(blob.data, dtype=np.float32)
    if blob.HasField("shape"):
        dims = [int(d) for d in blob.shape.dim]
    else:
        dims = [blob.num, blob.channels, blob.height, blob.width]
        if not any(blob.HasField(f) for f in ("num", "channels", "height", "width")):
            dims = [values.size]
    return values, dims


def weight_blobs(weights: NetParameter | None, lazy: dict | None = None) -> dict:
    """Layer name (after CANN's renaming of repeats) -> list of BlobProto (a LazyBlob where
    `lazy`, from read_caffemodel_lazy, holds the blob's bytes)."""
    if weights is None:
        return {}
    lazy = lazy or {}
    return {name: [LazyBlob(blob, lazy[(k, j)]) if (k, j) in lazy else blob
                   for j, blob in enumerate(layer.blobs)]
            for k, (name, layer) in enumerate(zip(unique_layer_names(weights), weights.layer))}


def net_to_json(net: NetParameter) -> str:
    """Mode 1 (original model to JSON): the NetParameter with field names as in caffe.proto."""
    return json_format.MessageToJson(net, preserving_proto_field_name=True, indent=2) + "\n"
