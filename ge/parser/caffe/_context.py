"""What a converter sees of one Caffe layer: the layer message, its bottoms' edges and static
shapes and its weight blobs, with the parsers' IR emission (ge.parser._emit.Emitter).

A converter is `(LayerCtx) -> list[Edge]`, one edge per top.  It refuses a layer it cannot
express with `refuse(reason)` (E11010 upstream).  Weight blobs come from the caffemodel by layer
name: a missing layer is E11029, a missing blob or one of the wrong size is E11033.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ge.errors import GeError
from ge.graph import Format, Graph

from .._emit import ConvertError, Emitter, refuse
from ._model import blob_array

__all__ = ["LayerCtx", "ConvertError", "refuse", "NCHW"]

NCHW = Format.FORMAT_NCHW


@dataclass
class LayerCtx(Emitter):
    graph: Graph
    name: str                 # the (renamed) layer name
    ins: list                 # Edge per bottom
    layer: object             # LayerParameter
    shapes: list              # static shape of each bottom
    blobs: list | None        # BlobProto list; None: the layer is not in the weights
    emitted: list = field(default_factory=list)       # (Node, name suffix) in creation order

    @property
    def op_type(self) -> str:
        return self.layer.type

    def shape(self, i: int = 0) -> list:
        return list(self.shapes[i])

    def rank(self, i: int = 0) -> int:
        return len(self.shapes[i])

    def axis(self, value: int, i: int = 0) -> int:
        """A Caffe axis (negative counts from the end) of bottom i, checked."""
        rank = self.rank(i)
        if not -rank <= value < rank:
            refuse(f"axis {value} is out of range for a rank-{rank} bottom")
        return value % rank

    def has_blob(self, i: int) -> bool:
        return self.blobs is not None and i < len(self.blobs)

    def blob(self, i: int, shape: list | tuple) -> np.ndarray:
        """Blob i as float32 in `shape`; its element count (and its dims, when the blob has a
        `shape`) must match."""
        if self.blobs is None:
            raise GeError("E11029", {"opname": self.name})
        blob_name = f"{self.name}.blobs[{i}]"
        expected = [int(d) for d in shape]
        if i >= len(self.blobs):
            raise GeError("E11033", {"blob": blob_name, "size": 0, "reason":
                                     f"the weight file gives layer {self.name} "
                                     f"{len(self.blobs)} blobs; {self.op_type} needs blob {i} "
                                     f"of shape {expected}"})
        values, dims = blob_array(self.blobs[i])
        count = int(np.prod(expected)) if expected else 1
        if values.size != count or (self.blobs[i].HasField("shape") and
                                    _squeeze(dims) != _squeeze(expected)):
            raise GeError("E11033", {"blob": blob_name, "size": values.size, "reason":
                                     f"it does not match shape {expected} (size {count}) "
                                     f"that {self.op_type} needs; the blob's shape is {dims}"})
        return values.reshape(expected)

    def weight(self, i: int, shape, suffix: str) -> tuple:
        """A Const edge holding blob i."""
        return self.const_node(self.blob(i, shape), suffix=suffix)


def _squeeze(dims: list) -> list:
    """Dims without 1s: Caffe writes the same blob as [C] or [1, C, 1, 1] across versions."""
    return [d for d in dims if d != 1]
