"""The WEIGHTS_DATA partition: moving Const tensors out of a ModelDef and back.

Layout (spec/om-format.md §4.3, §8.6):

    weights   := zero[512] const_block* tail_pad
    const_block := zero_pad_to_512_boundary bytes[weight_size]
    tail_pad  := zero bytes so that size == round_up(end_of_last_const + 32, 512)

Each `Const` op's `value.t.desc` gets `data_offset` (>= 512, 512-aligned) and `weight_size`;
its `t.data` is emptied.  Byte-identical constants share one block.  Owns nothing else.
"""
from __future__ import annotations

from ge.errors import GeError

__all__ = ["WEIGHTS_START", "WEIGHTS_ALIGN", "extract_weights", "restore_weights", "const_ops"]

WEIGHTS_START = 512   # kWeightsStartOffset
WEIGHTS_ALIGN = 512   # MEM_ALIGN_SIZE
_TAIL = 32


def _round_up(n: int, align: int) -> int:
    return (n + align - 1) // align * align


def const_ops(model_def):
    """(GraphDef, OpDef) of every Const op carrying a tensor `value`, in ModelDef order."""
    for graph_def in model_def.graph:
        for op in graph_def.op:
            if op.type == "Const" and "value" in op.attr \
                    and op.attr["value"].WhichOneof("value") == "t":
                yield graph_def, op


def extract_weights(model_def) -> bytes:
    """Move every Const tensor's bytes into one weights blob (in place); returns the blob.

    Returns b"" when the model has no constant bytes at all (WEIGHTS_DATA is then omitted).
    """
    blob = bytearray(WEIGHTS_START)
    offset_of: dict[bytes, int] = {}
    for _, op in const_ops(model_def):
        tensor = op.attr["value"].t
        data = bytes(tensor.data)
        if data not in offset_of:
            offset_of[data] = _round_up(len(blob), WEIGHTS_ALIGN)
            blob.extend(bytes(offset_of[data] - len(blob)))
            blob.extend(data)
        offset = offset_of[data]
        tensor.data = b""
        tensor.desc.data_offset, tensor.desc.weight_size = offset, len(data)
        if op.output_desc:
            op.output_desc[0].data_offset, op.output_desc[0].weight_size = offset, len(data)
    if not offset_of or len(blob) == WEIGHTS_START:
        return b""
    blob.extend(bytes(_round_up(len(blob) + _TAIL, WEIGHTS_ALIGN) - len(blob)))
    return bytes(blob)


def restore_weights(model_def, weights: bytes, source: str = "<memory>") -> None:
    """Put the bytes of WEIGHTS_DATA back into each Const's `t.data` (in place).

    Raises E10041 when a Const points outside the weights partition.
    """
    for graph_def, op in const_ops(model_def):
        tensor = op.attr["value"].t
        if tensor.data or tensor.desc.weight_size == 0:
            continue
        start, size = tensor.desc.data_offset, tensor.desc.weight_size
        if start < 0 or size < 0 or start + size > len(weights):
            raise GeError("E10041", {"file": source, "reason": (
                f"Const {op.name} in graph {graph_def.name} points at weights "
                f"[{start}, {start + size}) outside WEIGHTS_DATA of {len(weights)} bytes")})
        tensor.data = weights[start:start + size]
