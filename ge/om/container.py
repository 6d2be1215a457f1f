"""Byte layout of the OM container: header, partition tables, kernel stores, I/O TLV.

Owns packing and strict unpacking of the non-protobuf structures (spec/om-format.md §2-§5);
knows nothing about graphs.  All integers little-endian.

    om          := header table_and_payloads{model_num}          (size == 256 + model_length)
    header      := 256 bytes, fields of HEADER_FIELDS in order; checksum (bytes 12..75) :=
                   hex sha256 of bytes 256..end, or all zero (unchecked)
    table_and_payloads := u32 num, u32 0, entry{num}, payload{num}   (payloads contiguous)
    entry       := u32 type, u32 0, u64 mem_offset, u64 mem_size     (offset from table end)
    kernel_store := (u32 0x5D776EFD, u32 name_len, u32 bin_len, name, bin)*
    inout_info  := (u32 type, u32 length, value[length])*            (MODEL_INOUT_INFO)

Unpacking raises GeError E10041 (the ATC code for "Failed to load the model from <file>") with
`reason` and the byte `offset` of the fault in the error's params; lying sizes are checked
against the real buffer before anything is sliced or allocated.
"""
from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass, fields
from enum import IntEnum

from ge.errors import GeError

__all__ = ["PartitionType", "OmHeader", "Partition", "pack_header", "unpack_header",
           "pack_table", "table_size", "unpack_tables", "pack_kernel_store", "unpack_kernel_store",
           "pack_inout_info", "unpack_inout_info", "TensorInfo", "HEADER_SIZE", "MAGIC",
           "MODEL_VERSION", "om_error", "CHECKSUM_OFFSET", "CHECKSUM_SIZE", "body_checksum",
           "header_with_checksum", "verify_checksum", "reseal"]

MAGIC = 0x444F4D49            # "IMOD"
HEADER_SIZE = 256
CHECKSUM_OFFSET, CHECKSUM_SIZE = 12, 64   # the header's `checksum` area
MODEL_VERSION = 0x20000000
MAX_PARTITIONS = 8             # non-flow models (CheckPartitionTableNum)
KERNEL_MAGIC = 0x5D776EFD
_U32_MAX = 0xFFFFFFFF


class PartitionType(IntEnum):
    MODEL_DEF = 0
    WEIGHTS_DATA = 1
    TASK_INFO = 2
    TBE_KERNELS = 3
    CUST_AICPU_KERNELS = 4
    SO_BINS = 5
    FLOW_MODEL = 6
    FLOW_SUBMODEL = 7
    MODEL_INOUT_INFO = 8
    STATIC_TASK_DESC = 9
    DYNAMIC_TASK_DESC = 10
    TASK_PARAM = 11
    TILING_DATA = 12
    PRE_MODEL_DESC = 20
    PRE_MODEL_SQE = 21
    PRE_KERNEL_ARGS = 22
    PRE_MODEL_DESC_EXTEND = 23
    BUNDLE_MODEL_INFO = 24
    BUNDLE_MODEL_VAR_INFO = 25
    CUSTOM_OPS = 26


_BEYOND_4G = {PartitionType.WEIGHTS_DATA, PartitionType.TBE_KERNELS,
              PartitionType.CUST_AICPU_KERNELS}


def om_error(source: str, reason: str, offset: int | None = None) -> GeError:
    where = "" if offset is None else f" (at byte {offset})"
    return GeError("E10041", {"file": source, "reason": reason + where})


# -- header --------------------------------------------------------------------------------
@dataclass
class OmHeader:
    magic: int = MAGIC
    headsize: int = HEADER_SIZE
    version: int = MODEL_VERSION
    checksum: bytes = bytes(64)
    length: int = 0
    is_encrypt: int = 0
    is_checksum: int = 0
    modeltype: int = 0
    genmode: int = 0
    name: bytes = bytes(32)
    ops: int = 0
    userdefineinfo: bytes = bytes(32)
    om_ir_version: int = 2
    model_num: int = 1
    platform_version: bytes = bytes(20)
    platform_type: int = 1
    padd: bytes = bytes(3)
    model_length: int = 0
    need_check_os_cpu_info: int = 0
    is_unknow_model: int = 0
    reserved: bytes = bytes(62)

    @property
    def model_name(self) -> str:
        return self.name.split(b"\0", 1)[0].decode("utf-8", "replace")

    @property
    def platform(self) -> str:
        return self.platform_version.split(b"\0", 1)[0].decode("ascii", "replace")


_HEADER = struct.Struct("<III64sIBBBB32sI32sII20sB3sQBB62s")
assert _HEADER.size == HEADER_SIZE


def fixed_str(text: str, size: int) -> bytes:
    """NUL-padded, at most size-1 bytes of text (GE copies 31 of 32 name bytes)."""
    raw = text.encode("utf-8")[:size - 1]
    return raw + bytes(size - len(raw))


def pack_header(header: OmHeader) -> bytes:
    return _HEADER.pack(*(getattr(header, f.name) for f in fields(OmHeader)))


def unpack_header(data: bytes, source: str) -> OmHeader:
    if len(data) < HEADER_SIZE:
        raise om_error(source, f"the file has {len(data)} bytes, fewer than the "
                               f"{HEADER_SIZE}-byte OM header", 0)
    if data[:4] == b"PK\x03\x04":
        raise om_error(source, "the file is an OM2 (zip) package, not an OM", 0)
    header = OmHeader(*_HEADER.unpack_from(data, 0))
    if header.magic != MAGIC:
        raise om_error(source, f"bad magic 0x{header.magic:08X}, expected 0x{MAGIC:08X} "
                               "(\"IMOD\")", 0)
    if header.headsize != HEADER_SIZE:
        raise om_error(source, f"header size {header.headsize}, expected {HEADER_SIZE}", 4)
    if header.is_encrypt != 0:
        raise om_error(source, "the model is encrypted", 80)
    if header.modeltype != 0:
        raise om_error(source, f"model type {header.modeltype} (flow, lite, bundle or tiny "
                               "model) is not supported; only 0 (IR model) is", 82)
    return header


# -- integrity checksum -------------------------------------------------------------------------
# The `checksum` area holds the lowercase hex sha256 (64 ASCII bytes) of every byte after the
# header (offset 256 to the end): partition tables, ModelDef, weights, kernels, MODEL_INOUT_INFO.
# All zero = unchecked (CANN's OMs, and ours before the checksum existed).
_UNCHECKED = bytes(CHECKSUM_SIZE)


def body_checksum(parts) -> bytes:
    """The checksum area for the buffers that follow the header, hashed in order (no join)."""
    digest = hashlib.sha256()
    for part in parts:
        for chunk in (part.chunks() if hasattr(part, "chunks") else (part,)):
            digest.update(chunk)        # a FileRange is hashed through one reused buffer
    return digest.hexdigest().encode("ascii")


def header_with_checksum(header: bytes, body_parts) -> bytes:
    return header[:CHECKSUM_OFFSET] + body_checksum(body_parts) + \
        header[CHECKSUM_OFFSET + CHECKSUM_SIZE:]


def verify_checksum(data, header: OmHeader, source: str) -> bool:
    """True when the file carries a checksum and it matches; False when it carries none (all
    zero); E10041 when it does not match (the file changed after it was written)."""
    if header.checksum == _UNCHECKED:
        return False
    recorded = header.checksum.decode("ascii", "replace")
    actual = body_checksum([memoryview(data)[HEADER_SIZE:]]).decode("ascii")
    if actual != recorded:
        raise om_error(source, f"the sha256 of bytes {HEADER_SIZE}..{len(data)} is {actual}, "
                               f"the header records {recorded!r}: the file was changed after "
                               "it was written", CHECKSUM_OFFSET)
    return True


def reseal(data: bytes) -> bytes:
    """`data` with its checksum recomputed (for tools that edit an OM on purpose, and tests)."""
    return header_with_checksum(bytes(data[:HEADER_SIZE]), [memoryview(data)[HEADER_SIZE:]]) \
        + bytes(data[HEADER_SIZE:])


# -- partition tables ------------------------------------------------------------------------
@dataclass(frozen=True)
class Partition:
    table: int          # index of the partition table (model) it belongs to
    type: int           # PartitionType value
    offset: int         # absolute file offset of the payload
    size: int


_TABLE_HEAD = struct.Struct("<II")
_ENTRY = struct.Struct("<IIQQ")
_TINY_ENTRY = struct.Struct("<III")


def _payload_size(data) -> int:
    return len(data) if isinstance(data, (bytes, bytearray, memoryview)) else \
        sum(len(part) for part in data)


def pack_table(payloads: list, prefix: bytes = b"") -> bytes:
    """`prefix`, then one 64-bit table followed by its payloads (offsets = running sum from
    0).  A payload is bytes or a list of byte strings (its parts); everything is joined once,
    so large payloads are copied once."""
    return b"".join(table_parts(payloads, prefix))


def table_parts(payloads: list, prefix: bytes = b"") -> list:
    """What `pack_table` joins, as a list of buffers (a writer can stream them)."""
    out = [prefix, _TABLE_HEAD.pack(len(payloads), 0)]
    offset = 0
    for ptype, data in payloads:
        size = _payload_size(data)
        out.append(_ENTRY.pack(int(ptype), 0, offset, size))
        offset += size
    for _, data in payloads:
        if isinstance(data, (bytes, bytearray, memoryview)):
            out.append(data)
        else:
            out.extend(data)
    return out


def table_size(payloads: list) -> int:
    """len(pack_table(payloads)) without building it."""
    return _TABLE_HEAD.size + len(payloads) * _ENTRY.size + \
        sum(_payload_size(data) for _, data in payloads)


def _check_entry(source, ptype, size, where, seen) -> None:
    if ptype not in PartitionType._value2member_map_:
        raise om_error(source, f"unknown partition type {ptype}", where)
    if ptype in seen:
        raise om_error(source, f"partition type {PartitionType(ptype).name} repeats", where)
    if size > _U32_MAX and ptype not in _BEYOND_4G:
        raise om_error(source, f"partition {PartitionType(ptype).name} of {size} bytes "
                               "exceeds 4 GiB", where)
    seen.add(ptype)


def unpack_tables(data: bytes, header: OmHeader, source: str) -> list[Partition]:
    """Every partition of every table, validated against the real buffer size."""
    body = len(data) - HEADER_SIZE
    tiny = header.model_length == 0
    declared = header.length if tiny else header.model_length
    if declared != body:
        field_name = "length" if tiny else "model_length"
        raise om_error(source, f"header {field_name} says {declared} bytes follow the header, "
                               f"the file has {body}", 76 if tiny else 184)
    tables = header.model_num if header.version >= MODEL_VERSION else 1
    if tables < 1:
        raise om_error(source, "header model_num is 0", 156)
    pos, out = HEADER_SIZE, []
    for table in range(tables):
        if pos >= len(data):
            raise om_error(source, f"partition table {table} of {tables} is missing", pos)
        head_size = 4 if tiny else _TABLE_HEAD.size
        if pos + head_size > len(data):
            raise om_error(source, "truncated partition table", pos)
        num = struct.unpack_from("<I", data, pos)[0]
        if not 1 <= num <= MAX_PARTITIONS:
            raise om_error(source, f"partition count {num} is outside 1..{MAX_PARTITIONS}", pos)
        if not tiny and struct.unpack_from("<I", data, pos + 4)[0] != 0:
            raise om_error(source, "non-zero padding after the partition count", pos + 4)
        entry = _TINY_ENTRY if tiny else _ENTRY
        table_end = pos + head_size + num * entry.size
        if table_end > len(data):
            raise om_error(source, f"partition table of {num} entries is truncated", pos)
        seen: set[int] = set()
        running = 0
        for i in range(num):
            where = pos + head_size + i * entry.size
            if tiny:
                ptype, offset, size = entry.unpack_from(data, where)
            else:
                ptype, pad, offset, size = entry.unpack_from(data, where)
                if pad != 0:
                    raise om_error(source, "non-zero padding in a partition entry", where + 4)
            _check_entry(source, ptype, size, where, seen)
            if offset != running:
                raise om_error(source, f"partition {PartitionType(ptype).name} offset {offset} "
                                       f"is not contiguous (expected {running})", where)
            if table_end + offset + size > len(data):
                raise om_error(source, f"partition {PartitionType(ptype).name} of {size} bytes "
                                       f"at offset {offset} runs past the end of the file",
                               where)
            out.append(Partition(table, ptype, table_end + offset, size))
            running += size
        pos = table_end + running
    if pos != len(data):
        raise om_error(source, f"{len(data) - pos} unexpected bytes after the last partition", pos)
    if not any(p.table == 0 and p.type == PartitionType.MODEL_DEF for p in out):
        raise om_error(source, "the file does not contain a model definition (MODEL_DEF)",
                       HEADER_SIZE)
    return out


# -- kernel stores (TBE_KERNELS, CUST_AICPU_KERNELS) ----------------------------------------
_KERNEL_HEAD = struct.Struct("<III")


def pack_kernel_store(kernels) -> bytes:
    out = []
    for name, binary in kernels:
        raw_name = name.encode("utf-8")
        out.append(_KERNEL_HEAD.pack(KERNEL_MAGIC, len(raw_name), len(binary)))
        out.append(raw_name)
        out.append(bytes(binary))
    return b"".join(out)


def unpack_kernel_store(data: bytes, source: str, base: int = 0) -> list[tuple[str, bytes]]:
    kernels, pos = [], 0
    while pos < len(data):
        if pos + _KERNEL_HEAD.size > len(data):
            raise om_error(source, "truncated kernel item header", base + pos)
        magic, name_len, bin_len = _KERNEL_HEAD.unpack_from(data, pos)
        if magic != KERNEL_MAGIC:
            raise om_error(source, f"bad kernel item magic 0x{magic:08X}", base + pos)
        start = pos + _KERNEL_HEAD.size
        if start + name_len + bin_len > len(data):
            raise om_error(source, "kernel item runs past its partition", base + pos)
        name = data[start:start + name_len].decode("utf-8", "replace")
        kernels.append((name, data[start + name_len:start + name_len + bin_len]))
        pos = start + name_len + bin_len
    return kernels


# -- MODEL_INOUT_INFO -----------------------------------------------------------------------------
@dataclass(frozen=True)
class TensorInfo:
    name: str
    size: int            # bytes (0 when the shape is unknown)
    format: int          # in-memory ge::Format
    dtype: int           # in-memory ge::DataType
    dims: tuple
    dims_v2: tuple = ()
    shape_range: tuple = ()   # ((lo, hi), ...)


_TENSOR_BASE = struct.Struct("<QiiIIII")
_INPUT_DESC, _OUTPUT_DESC = 0, 1


def _pack_tensor(info: TensorInfo) -> bytes:
    name = info.name.encode("utf-8")
    dims = struct.pack(f"<{len(info.dims)}q", *info.dims)
    dims_v2 = struct.pack(f"<{len(info.dims_v2)}q", *info.dims_v2)
    ranges = b"".join(struct.pack("<qq", lo, hi) for lo, hi in info.shape_range)
    head = _TENSOR_BASE.pack(info.size, info.format, info.dtype, len(name), len(dims),
                             len(dims_v2), len(ranges))
    return head + name + dims + dims_v2 + ranges


def pack_inout_info(inputs: list[TensorInfo], outputs: list[TensorInfo]) -> bytes:
    out = []
    for block_type, tensors in ((_INPUT_DESC, inputs), (_OUTPUT_DESC, outputs)):
        if tensors:
            value = struct.pack("<I", len(tensors)) + b"".join(_pack_tensor(t) for t in tensors)
            out.append(struct.pack("<II", block_type, len(value)) + value)
    return b"".join(out)


def _unpack_tensors(value: bytes, source: str, base: int) -> list[TensorInfo]:
    def take(n):
        nonlocal pos
        if pos + n > len(value):
            raise om_error(source, "truncated MODEL_INOUT_INFO tensor record", base + pos)
        chunk = value[pos:pos + n]
        pos += n
        return chunk

    pos = 0
    count = struct.unpack("<I", take(4))[0]
    tensors = []
    for _ in range(count):
        size, fmt, dt, name_len, dims_len, v2_len, range_len = _TENSOR_BASE.unpack(
            take(_TENSOR_BASE.size))
        if dims_len % 8 or v2_len % 8 or range_len % 16:
            raise om_error(source, "MODEL_INOUT_INFO lengths are not multiples of 8", base + pos)
        name = take(name_len).decode("utf-8", "replace")
        dims = struct.unpack(f"<{dims_len // 8}q", take(dims_len))
        dims_v2 = struct.unpack(f"<{v2_len // 8}q", take(v2_len))
        flat = struct.unpack(f"<{range_len // 8}q", take(range_len))
        ranges = tuple(zip(flat[0::2], flat[1::2]))
        tensors.append(TensorInfo(name, size, fmt, dt, dims, dims_v2, ranges))
    return tensors


def unpack_inout_info(data: bytes, source: str, base: int = 0) -> dict:
    """{"inputs": [TensorInfo], "outputs": [TensorInfo], "other": {type: bytes}}."""
    result: dict = {"inputs": [], "outputs": [], "other": {}}
    pos = 0
    while pos < len(data):
        if pos + 8 > len(data):
            raise om_error(source, "truncated MODEL_INOUT_INFO block header", base + pos)
        block_type, length = struct.unpack_from("<II", data, pos)
        if pos + 8 + length > len(data):
            raise om_error(source, "MODEL_INOUT_INFO block runs past its partition", base + pos)
        value = data[pos + 8:pos + 8 + length]
        if block_type == _INPUT_DESC:
            result["inputs"] = _unpack_tensors(value, source, base + pos + 8)
        elif block_type == _OUTPUT_DESC:
            result["outputs"] = _unpack_tensors(value, source, base + pos + 8)
        else:
            result["other"][block_type] = value
        pos += 8 + length
    return result
