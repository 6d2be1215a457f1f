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
from ge.graph.derived import RowScaled, computed
from ge.graph.filebacked import file_range_of

__all__ = ["WEIGHTS_START", "WEIGHTS_ALIGN", "extract_weights", "weight_parts", "place_weights",
           "restore_weights", "const_ops", "SameBytes"]

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


# Constants up to this size are deduplicated through a dict keyed by their bytes; larger ones
# by comparing with the earlier constants of the same size (hashing 100 MB of weights costs
# more than the few memcmp calls that usually stop at the first bytes).
_HASHED_MAX = 64 << 10


def _same_buffer(a: memoryview, b: memoryview) -> bool:
    """Views of one whole array (the pairs hold whole constants, never slices)."""
    return a.obj is not None and a.obj is b.obj and a.nbytes == b.nbytes


class SameBytes:
    """Finds the earlier constant with the same bytes as a large one, without hashing: the
    same range of a mapped file, the same buffer (the gears of a model share their weight
    arrays), or equal bytes among the constants of the same size."""

    def __init__(self):
        self._ranges: dict = {}
        self._sizes: dict[int, list] = {}

    def find(self, view: memoryview, source):
        found = self._ranges.get(source) if source is not None else None
        if found is None:
            found = next((value for seen, value in self._sizes.get(view.nbytes, ())
                          if _same_buffer(seen, view) or seen == view), None)
        return found

    def add(self, view: memoryview, value) -> None:
        self._sizes.setdefault(view.nbytes, []).append((view, value))

    def remember(self, source, value) -> None:
        if source is not None:
            self._ranges[source] = value


def extract_weights(model_def) -> bytes:
    """Move every Const tensor's bytes into one weights blob (in place); returns the blob.

    Returns b"" when the model has no constant bytes at all (WEIGHTS_DATA is then omitted).
    """
    return b"".join(weight_parts(model_def))


def weight_parts(model_def) -> list:
    """`extract_weights` as the list of byte strings that make up the blob ([] when empty),
    so the writer copies the weights once, into the file image."""
    pairs = []
    for _, op in const_ops(model_def):
        tensor = op.attr["value"].t
        pairs.append((op, tensor.data))
        tensor.data = b""
    return place_weights(pairs)


def place_weights(pairs) -> list:
    """Lay out (OpDef of a Const, its bytes) pairs as WEIGHTS_DATA: set each op's
    `data_offset`/`weight_size` (value desc and output desc) and return the blob's parts
    ([] when there are no constant bytes).  The bytes may be any C-contiguous buffer (the
    compiler passes the numpy arrays of the graph, so nothing is copied before the writer);
    an array that views a mapped model file becomes a FileRange part, which the writer copies
    file to file (ge.graph.filebacked); a derived constant not computed yet (ge.graph.derived)
    is a part the writer streams, shared by object."""
    parts = [bytes(WEIGHTS_START)]
    end = WEIGHTS_START
    small: dict[bytes, int] = {}
    large = SameBytes()
    streamed: dict[int, int] = {}
    for op, data in pairs:
        if isinstance(data, RowScaled) and data.nbytes > _HASHED_MAX:
            # a derived constant (ge.graph.derived): the writer streams it; shared by object
            offset = streamed.get(id(data))
            if offset is None:
                offset = streamed[id(data)] = _round_up(end, WEIGHTS_ALIGN)
                parts += [bytes(offset - end), data]
                end = offset + data.nbytes
            _set_place(op, offset, data.nbytes)
            continue
        data = computed(data)
        source = file_range_of(data)
        data = memoryview(data).cast("B")
        size = data.nbytes
        if size <= _HASHED_MAX:
            key = bytes(data)
            offset = small.get(key)
            source = None           # small ones are copied from memory
        else:
            offset = large.find(data, source)
        if offset is None:
            offset = _round_up(end, WEIGHTS_ALIGN)
            parts += [bytes(offset - end), data if source is None else source]
            end = offset + size
            if size <= _HASHED_MAX:
                small[key] = offset
            else:
                large.add(data, offset)
        large.remember(source, offset)
        _set_place(op, offset, size)
    if end == WEIGHTS_START:
        return []
    parts.append(bytes(_round_up(end + _TAIL, WEIGHTS_ALIGN) - end))
    return parts


def _set_place(op, offset: int, size: int) -> None:
    desc = op.attr["value"].t.desc
    desc.data_offset, desc.weight_size = offset, size
    if op.output_desc:
        op.output_desc[0].data_offset, op.output_desc[0].weight_size = offset, size


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
