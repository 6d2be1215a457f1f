"""OM reader: validate and decode an OM file (spec/om-format.md §2-§5, §8, §9).

Every fault of the file (short, wrong magic, lying sizes, overlapping or missing partitions,
undecodable protobuf, kernel items running over, a body whose sha256 is not the one in the
header's checksum area) raises GeError E10041 naming the file, with the reason and byte offset
in the error's params; an OM without a checksum (all zero) is read with warning WP0301.
Nothing is allocated from a size read out of the file before that size has been checked
against the real file.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field

from google.protobuf.message import DecodeError

from ge.errors import warn
from ge.fsutil import os_reason, read_regular
from ge.graph import serialize as ser

from ge.proto import ge_ir as pb
from .container import (OmHeader, Partition, PartitionType, om_error, unpack_header,
                        unpack_inout_info, unpack_kernel_store, unpack_tables, verify_checksum)
from .weights import restore_weights

__all__ = ["OmFile", "read_om", "parse_om", "UNCHECKED_OM"]

UNCHECKED_OM = "WP0301"      # the header's checksum area is all zero: nothing to verify


@dataclass
class OmFile:
    path: str
    header: OmHeader
    partitions: list[Partition]
    model_def: object                      # ge.proto.ModelDef of table 0 (Const data empty)
    task_def: object = None                # domi.ModelTaskDef or None
    kernels: list = field(default_factory=list)             # [(name, binary)] TBE_KERNELS
    cust_aicpu_kernels: list = field(default_factory=list)
    inout: dict = field(default_factory=dict)               # MODEL_INOUT_INFO, decoded
    data: bytes = field(default=b"", repr=False)

    def payload(self, ptype: int, table: int = 0) -> bytes:
        return bytes(self.payload_view(ptype, table))

    def payload_view(self, ptype: int, table: int = 0) -> memoryview:
        """A partition's bytes as a view of the file's, not a copy."""
        for p in self.partitions:
            if p.table == table and p.type == ptype:
                return memoryview(self.data)[p.offset:p.offset + p.size]
        return memoryview(b"")

    @functools.cached_property
    def weights(self) -> bytes:
        """WEIGHTS_DATA (b"" when absent), copied out of the file's bytes when first asked:
        the runtime copies it straight into its aligned weight space instead
        (`payload_view`), so a loaded model never holds it three times."""
        return self.payload(PartitionType.WEIGHTS_DATA)

    def partition_size(self, ptype: int, table: int = 0) -> int:
        return next((p.size for p in self.partitions if p.table == table and p.type == ptype), 0)

    def model_attr(self, key: str, default=None):
        if key not in self.model_def.attr:
            return default
        return ser.attr_from_proto(self.model_def.attr[key])[1]

    def model_def_with_weights(self):
        """A copy of the ModelDef with every Const's bytes put back inline."""
        model_def = pb.ModelDef()
        model_def.CopyFrom(self.model_def)
        restore_weights(model_def, self.weights, self.path)
        return model_def

    def to_graph(self):
        """The root graph (with subgraphs) and Const values restored from WEIGHTS_DATA."""
        return ser.model_def_to_graph(self.model_def_with_weights(), self.path)


def _parse_message(cls, data: bytes, what: str, source: str, offset: int):
    message = cls()
    try:
        message.ParseFromString(data)
    except (DecodeError, RecursionError, ValueError) as e:
        raise om_error(source, f"{what} partition is not a valid {cls.DESCRIPTOR.full_name} "
                               f"({e})", offset) from None
    return message


def parse_om(data: bytes, source: str = "<memory>") -> OmFile:
    header = unpack_header(data, source)
    partitions = unpack_tables(data, header, source)
    if not verify_checksum(data, header, source):
        warn(UNCHECKED_OM, {"file": source})
    om = OmFile(source, header, partitions, None, data=data)
    first = {p.type: p for p in partitions if p.table == 0}

    p = first[PartitionType.MODEL_DEF]
    om.model_def = _parse_message(pb.ModelDef, om.payload(p.type), "MODEL_DEF", source, p.offset)
    if not om.model_def.graph:
        raise om_error(source, "MODEL_DEF holds no graph", p.offset)
    if PartitionType.TASK_INFO in first:
        p = first[PartitionType.TASK_INFO]
        om.task_def = _parse_message(pb.ModelTaskDef, om.payload(p.type), "TASK_INFO", source,
                                     p.offset)
    for ptype, attr_name in ((PartitionType.TBE_KERNELS, "kernels"),
                             (PartitionType.CUST_AICPU_KERNELS, "cust_aicpu_kernels")):
        if ptype in first:
            setattr(om, attr_name, unpack_kernel_store(om.payload(ptype), source,
                                                       first[ptype].offset))
    if PartitionType.MODEL_INOUT_INFO in first:
        p = first[PartitionType.MODEL_INOUT_INFO]
        om.inout = unpack_inout_info(om.payload(p.type), source, p.offset)
    return om


def read_om(path: str) -> OmFile:
    """Read and validate the OM file at `path`."""
    try:
        data = read_regular(path)
    except OSError as e:
        raise om_error(path, os_reason(e)) from None
    return parse_om(data, path)
