"""OM writer: OmContent -> bytes (pure, deterministic) and write_om (temp name + rename).

Partitions in GE's order (spec/om-format.md §4.5): MODEL_INOUT_INFO, MODEL_DEF, WEIGHTS_DATA
(if any), TBE_KERNELS (if any), CUST_AICPU_KERNELS (if any), TASK_INFO.  The header's
`checksum` area carries the hex sha256 of every byte after the header, hashed from the parts
by a second thread while they are written (docs/om.md "Integrity").  Model attributes a
real ATC OM carries are filled in (§8.5), plus the host-target marker of this implementation:
`_pyatc_target` = "host-<os>-<cpu>" and `host_env_os` / `host_env_cpu`.

Publishing: the bytes go to `.<name>.tmp-<host>-<pid>-<rand>` beside the target and are
renamed into place, so an interrupted run never leaves a partial OM under the final name; the
next write of the same target removes such temporaries left by dead processes of this host (or
older than an hour).  Test-only fault points `om.partial` / `om.written` (ge.fsutil.faults) stop
the process with half / all of the bytes in the temporary.
"""
from __future__ import annotations

import struct
from concurrent.futures import ThreadPoolExecutor

from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence, Union

from ge.graph.attr_names import ATTR_TARGET
from ge.errors import GeError
from ge.fsutil import os_reason, publish
from ge.host import host_cpu, host_os
from ge.graph import DATA_TYPES, serialize as ser
from ge.graph.attrs import kind_of
from ge.graph.types import AttrValueType as VT, dtype_size

from ge.proto import ge_ir as pb
from .container import (CHECKSUM_OFFSET, HEADER_SIZE, OmHeader, PartitionType, TensorInfo,
                        body_checksum, fixed_str, header_with_checksum, pack_header,
                        pack_inout_info, pack_kernel_store, table_parts, table_size)
from .weights import weight_parts

__all__ = ["OmContent", "build_om", "write_om", "host_target"]

# --framework option value -> framework_type model attribute (spec/om-format.md §8.5)
FRAMEWORK_NAMES = {"0": "Caffe", "1": "MindSpore", "3": "TensorFlow", "4": "Android_NN",
                   "5": "Onnx"}


def host_target() -> tuple[str, str]:
    """(os, cpu) of this host in ATC's --host_env_os / --host_env_cpu spelling."""
    return host_os(), host_cpu()


@dataclass
class OmContent:
    """Everything an OM is made of.  Give either `graph` or a ready `model_def`.

    weights: None -> Const tensors are moved out of the ModelDef into WEIGHTS_DATA (512-byte
      aligned, identical constants shared); bytes, or a list of byte strings that make up
      the blob (`weight_parts`, copied once into the file image) -> used as is (the ModelDef
      must already point into them).
    task_def: a domi.ModelTaskDef; its memory_size/stream_num/event_num/weight_size are filled
      from the fields below when left 0.
    kernels / cust_aicpu_kernels: (kernel name, binary) pairs for TBE_KERNELS /
      CUST_AICPU_KERNELS, stored in the given order.
    weight_files: the external weight files (`--external_weight`, ge.om.external
      .ExternalWeights), written before the OM; their hashes go into the ModelDef.
    model_attrs: extra ModelDef attributes (Python values or (AttrValueType, value)); they
      override the standard ones set from the fields below.
    target: (os, cpu) recorded as the host target; None -> this host.
    """
    graph: object = None
    model_def: object = None
    weights: Optional[Union[bytes, list]] = None
    task_def: object = None
    kernels: Sequence[tuple[str, bytes]] = ()
    cust_aicpu_kernels: Sequence[tuple[str, bytes]] = ()
    soc_version: str = ""
    atc_cmdline: str = ""
    framework_type: str = ""        # --framework value ("5") or its name ("Onnx")
    atc_version: str = ""
    memory_size: int = 0
    stream_num: int = 1
    event_num: int = 0
    model_attrs: dict = field(default_factory=dict)
    target: Optional[tuple[str, str]] = None
    is_unknown_shape: bool = False
    op_hook: Optional[Callable] = None
    weight_files: object = None     # ge.om.external.ExternalWeights


def _set(model_def, key: str, kind: VT, value) -> None:
    model_def.attr[key].Clear()
    ser.attr_to_proto(kind, value, model_def.attr[key])


def _tensor_info(name: str, td) -> TensorInfo:
    desc, _ = ser.desc_from_proto(td)
    dims = tuple(desc.shape)
    size = 0
    if all(d >= 0 for d in dims):
        count = 1
        for d in dims:
            count *= d
        try:
            size = count * dtype_size(desc.data_type)
        except TypeError:
            size = 0
    return TensorInfo(name, size, int(desc.format), int(desc.data_type), dims, dims)


def inout_info_of(model_def) -> bytes:
    """MODEL_INOUT_INFO from the root graph: Data ops by `index`, NetOutput inputs (§5.3)."""
    if not model_def.graph:
        return b""
    root = model_def.graph[0]
    data_ops = [op for op in root.op if op.type in DATA_TYPES or op.type == "AnnData"]
    data_ops.sort(key=lambda op: op.attr["index"].i if "index" in op.attr else 0)
    inputs = [_tensor_info(op.name, op.output_desc[0]) for op in data_ops if op.output_desc]
    outputs = []
    out_names = []
    if "attr_model_out_nodes_name" in model_def.attr:
        out_names = [s.decode() for s in model_def.attr["attr_model_out_nodes_name"].list.s]
    for op in root.op:
        if op.type != "NetOutput":
            continue
        for i, td in enumerate(op.input_desc):
            src = op.src_name[i] if i < len(op.src_name) else ""
            idx = op.src_index[i] if i < len(op.src_index) else 0
            if i < len(out_names):
                name = out_names[i] if ":" in out_names[i] else f"{out_names[i]}:{idx}"
            else:
                name = f"output_{i}_{src}_{idx}"
            outputs.append(_tensor_info(name, td))
        break
    return pack_inout_info(inputs, outputs) + gear_blocks(root)


# MODEL_INOUT_INFO block types of a model with gears (spec/om-format.md §5.3), by the Case's
# mbatch_dynamic_type: 1 batch, 2 image size (H,W), 3 dims; 6 the input name order.
_GEAR_BLOCK = {1: 2, 2: 3, 3: 4}
_SHAPE_ORDER_BLOCK = 6


def _block(block_type: int, value: bytes) -> bytes:
    return struct.pack("<II", block_type, len(value)) + value


def gear_blocks(root) -> bytes:
    """MODEL_DYNAMIC_BATCH / _HW / _DIMS and MODEL_DESIGNATE_SHAPE_ORDER from the gear Case
    of the root graph (b"" for a model without gears)."""
    case = next((op for op in root.op if op.type == "Case" and "_batch_num" in op.attr), None)
    if case is None:
        return b""
    gears = [list(case.attr[f"_pred_value_{i}"].list.i)
             for i in range(case.attr["_batch_num"].i)]
    kind = case.attr["mbatch_dynamic_type"].i if "mbatch_dynamic_type" in case.attr else 3
    if kind == 1:
        value = struct.pack(f"<I{len(gears)}Q", len(gears), *[g[0] for g in gears])
    else:
        flat = [v for g in gears for v in g]
        value = (struct.pack(f"<I{len(gears)}I", len(gears), *[len(g) for g in gears])
                 + struct.pack(f"<{len(flat)}q", *flat))
    out = _block(_GEAR_BLOCK.get(kind, 4), value)
    names = [n for n in case.attr["user_designate_shape_order"].list.s] \
        if "user_designate_shape_order" in case.attr else []
    if names:
        out += _block(_SHAPE_ORDER_BLOCK, struct.pack(f"<I{len(names)}I", len(names),
                                                      *[len(n) for n in names]) + b"".join(names))
    return out


def _model_def_of(content: OmContent):
    if content.model_def is not None:
        model_def = pb.ModelDef()
        model_def.CopyFrom(content.model_def)
        return model_def
    if content.graph is None:
        raise GeError("EP0301", {"reason": "OmContent needs a graph or a model_def"})
    return ser.graph_to_model_def(content.graph, op_hook=content.op_hook)


def build_om(content: OmContent) -> bytes:
    """The bytes of the OM file for `content` (deterministic); weights that are FileRanges
    are read here (`write_om` copies them file to file instead)."""
    return b"".join(b"".join(bytes(c) for c in part.chunks()) if hasattr(part, "chunks")
                    else part for part in build_om_parts(content))


def build_om_parts(content: OmContent, checksum: bool = True) -> list:
    """The OM file as a list of buffers, in order (the weights are not copied here); without
    `checksum` the header's checksum area is left zero (`write_om` fills it in)."""
    if content.weight_files:
        content.weight_files.settle()       # hashed already when write_om wrote them
    model_def = _model_def_of(content)
    if content.weights is None:
        weights = weight_parts(model_def)                  # parts: joined once, into the file
    elif isinstance(content.weights, (bytes, bytearray, memoryview)):
        weights = [bytes(content.weights)] if content.weights else []
    else:
        weights = [part for part in content.weights if part]
    weights_size = sum(len(part) for part in weights)
    tbe = pack_kernel_store(content.kernels)
    cust = pack_kernel_store(content.cust_aicpu_kernels)

    task_def = pb.ModelTaskDef()
    if content.task_def is not None:
        task_def.CopyFrom(content.task_def)
    task_def.memory_size = task_def.memory_size or content.memory_size
    task_def.stream_num = task_def.stream_num or max(content.stream_num, 1)
    task_def.event_num = task_def.event_num or content.event_num
    task_def.weight_size = task_def.weight_size or weights_size
    task = task_def.SerializeToString(deterministic=True)

    os_name, cpu = content.target or host_target()
    standard = (
        ("soc_version", VT.VT_STRING, content.soc_version),
        ("atc_version", VT.VT_STRING, content.atc_version),
        ("atc_cmdline", VT.VT_STRING, content.atc_cmdline),
        ("framework_type", VT.VT_STRING,
         FRAMEWORK_NAMES.get(content.framework_type, content.framework_type)),
        ("memory_size", VT.VT_INT, content.memory_size),
        ("weight_size", VT.VT_INT, weights_size),
        ("stream_num", VT.VT_INT, max(content.stream_num, 1)),
        ("event_num", VT.VT_INT, content.event_num),
        ("label_num", VT.VT_INT, 0),
        ("om_info_list", VT.VT_LIST_INT, [weights_size, len(tbe), len(cust), len(task), 0]),
        ("host_env_os", VT.VT_STRING, os_name),
        ("host_env_cpu", VT.VT_STRING, cpu),
        (ATTR_TARGET, VT.VT_STRING, f"host-{os_name}-{cpu}"),
    )
    for key, kind, value in standard:
        _set(model_def, key, kind, value)
    for key, value in content.model_attrs.items():
        if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], VT):
            _set(model_def, key, value[0], value[1])
        else:
            _set(model_def, key, kind_of(value), value)

    payloads = [(PartitionType.MODEL_INOUT_INFO, inout_info_of(model_def)),
                (PartitionType.MODEL_DEF, model_def.SerializeToString(deterministic=True)),
                (PartitionType.WEIGHTS_DATA, weights),
                (PartitionType.TBE_KERNELS, tbe),
                (PartitionType.CUST_AICPU_KERNELS, cust),
                (PartitionType.TASK_INFO, task)]
    payloads = [(ptype, data) for ptype, data in payloads if data]  # empty ones are not written
    for ptype, data in payloads:
        if len(data) > 0xFFFFFFFF and ptype not in (PartitionType.WEIGHTS_DATA,
                                                    PartitionType.TBE_KERNELS,
                                                    PartitionType.CUST_AICPU_KERNELS):
            raise GeError("EP0301", {"reason": f"{ptype.name} exceeds 4 GiB"})
    header = OmHeader(
        name=fixed_str(model_def.name, 32),
        platform_version=fixed_str(ser.PLATFORM_VERSION, 20),
        om_ir_version=ser.IR_VERSION,
        model_length=table_size(payloads),
        # our kernels are native code for the host: loaders must compare host_env_os/cpu
        need_check_os_cpu_info=1 if content.kernels or content.cust_aicpu_kernels else 0,
        is_unknow_model=1 if content.is_unknown_shape else 0,
    )
    parts = table_parts(payloads, prefix=pack_header(header))
    # the integrity checksum covers everything after the header: hashed here, part by part,
    # from the buffers about to be written (no second pass over the file)
    if checksum:
        parts[0] = header_with_checksum(parts[0], parts[1:])
    return parts


def write_om(path: str, content: OmContent) -> None:
    """Build the OM and publish it at `path` (temporary name beside it, then rename), after
    its external weight files, so a published OM never names a weight file still missing
    (their hashes, which the ModelDef records, are computed while they are written)."""
    if content.weight_files:
        content.weight_files.write()
    parts = build_om_parts(content, checksum=False)
    assert len(parts[0]) >= HEADER_SIZE
    # the body is hashed by a second thread while this one copies it into the file (both
    # release the GIL); the checksum goes into the header before the rename
    with ThreadPoolExecutor(1) as pool:
        digest = pool.submit(body_checksum, parts[1:])
        try:
            publish(path, parts, half_point="om.partial", written_point="om.written",
                    patch=lambda: (CHECKSUM_OFFSET, digest.result()))
        except OSError as e:
            raise GeError("E13004", {"file": path, "reason": os_reason(e)}) from None
