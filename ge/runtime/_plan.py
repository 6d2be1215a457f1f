"""OM -> execution plan: every executable op of every graph bound to its buffers.

Reads only what docs/memory-plan.md and docs/kernel-abi.md define: the model attributes
`task_gen_base_addr`, `task_gen_weight_addr`, `memory_size`; per op `input_i`, `output_i`,
`workspace`, `workspace_bytes`, `input_desc`/`output_desc` (dense row-major tensors), `id`
(execution order); `_kernelname` / `_kernel_sha256` for compiled kernels (TBE_KERNELS items);
TASK_INFO's kernel tasks (kernel_type TE = compiled kernel, anything else = the op's reference
kernel from ge.ops, the AiCpu engine).  Every address and size is checked against its space
before a view is made, so a damaged or lying OM fails with a coded error instead of reading
outside a buffer or allocating without bound.  The OM is never modified.
"""
from __future__ import annotations

import bisect

import os
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

from ge.om.container import PartitionType
from ge.om.plan import KERNEL_TYPE_TE, MEMORY_ALIGN, TASK_GEN_WEIGHT_ADDR
from ge.graph.attr_names import (ATTR_KERNEL_NAME, ATTR_KERNEL_SHA256, ATTR_KERNEL_NAME_FOR_LOAD,
    ATTR_SUBGRAPH_IR_NAMES, ATTR_PARENT_INDEX, ATTR_ORIGIN, ATTR_TARGET)
from ge.errors import GeError
from ge.graph import DATA_TYPES
from ge.graph.types import DataType, to_numpy_dtype
from ge.ops import Role, role_of

from ._errors import BAD_PLAN, TARGET_MISMATCH, UNSUPPORTED_OP

__all__ = ["TensorSpec", "Step", "GraphPlan", "Plan", "build_plan", "check_target",
           "MEMORY_ALIGN", "MAX_ARENA_BYTES", "aligned_zeros"]



def _physical_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 1 << 36


# The arena is refused past this size (the machine could not hold it anyway).
MAX_ARENA_BYTES = min(_physical_memory(), 1 << 40)


@dataclass(frozen=True)
class TensorSpec:
    """A model input or output as the user sees it."""
    name: str
    shape: tuple
    dtype: np.dtype
    index: int
    aipp: str = ""      # _data_related_aipp_mode of an input that takes an AIPP image
    data_type: str = ""  # GE DataType name; DT_BF16 is held as uint16 bit patterns

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize


@dataclass
class Step:
    """One executable op bound to its buffers."""
    name: str
    type: str
    graph: str
    origin: list                   # _datadump_original_op_names
    inputs: list                   # np.ndarray view (None = absent optional input)
    outputs: list                  # np.ndarray views into the arena
    kernel_name: str = ""          # compiled kernel ("" = reference kernel)
    call: Optional[Callable] = None   # bound at load: runs the op (set by the model)
    attrs: dict = field(default_factory=dict)
    subgraphs: dict = field(default_factory=dict)   # IR name -> GraphPlan (If branches)
    c_args: tuple = ()             # (in ptr array, out ptr array, workspace ptr) for kernels
    io: tuple = ()                 # ([None | [shape, dtype name]] per input, ... per output)


@dataclass
class GraphPlan:
    name: str
    steps: list = field(default_factory=list)
    data: list = field(default_factory=list)       # (TensorSpec, view, parent index or None)
    outputs: list = field(default_factory=list)    # (TensorSpec, view, parent index or None)


@dataclass
class Plan:
    root: GraphPlan
    graphs: dict                   # name -> GraphPlan
    arena: np.ndarray
    weights: np.ndarray
    arena_base: int
    weight_base: int


def _attr(op, key, default=None):
    if key not in op.attr:
        return default
    a = op.attr[key]
    which = a.WhichOneof("value")
    if which == "s":
        return a.s.decode("utf-8", "replace")
    if which == "i":
        return int(a.i)
    if which == "list":
        return [x.decode("utf-8", "replace") for x in a.list.s] or list(a.list.i)
    return default


def check_target(om, source: str) -> None:
    """Refuse an OM built for another host (or for no host target at all)."""
    from ge.om import host_target
    os_name, cpu = host_target()
    want = f"host-{os_name}-{cpu}"
    got = om.model_attr(ATTR_TARGET)
    if got is None:
        raise GeError(TARGET_MISMATCH, {"file": source, "host": want, "reason":
                                        f"it has no host target attribute ({ATTR_TARGET}): it "
                                        f"was not built for a host CPU"})
    if got != want:
        raise GeError(TARGET_MISMATCH, {"file": source, "host": want,
                                        "reason": f"it was built for {got}"})
    env_os, env_cpu = om.model_attr("host_env_os"), om.model_attr("host_env_cpu")
    if (env_os not in (None, os_name)) or (env_cpu not in (None, cpu)):
        raise GeError(TARGET_MISMATCH, {"file": source, "host": f"{os_name} {cpu}", "reason":
                                        f"it was built for host_env_os={env_os}, "
                                        f"host_env_cpu={env_cpu}"})


class _Spaces:
    """Logical address -> checked numpy view, for the arena and the weights."""

    def __init__(self, om, source: str):
        self.source = source
        self.base = _model_int(om, "task_gen_base_addr", 0)
        self.wbase = _model_int(om, "task_gen_weight_addr", TASK_GEN_WEIGHT_ADDR)
        size = _model_int(om, "memory_size", 0)
        if om.task_def is not None and om.task_def.memory_size and not size:
            size = int(om.task_def.memory_size)
        if size < 0 or size > MAX_ARENA_BYTES:
            raise GeError(BAD_PLAN, {"file": source, "reason": f"it asks for {size} bytes of "
                                     f"feature-map memory; the limit on this host is "
                                     f"{MAX_ARENA_BYTES}"})
        self.memory_size = size
        self.arena = aligned_zeros(size)
        raw = om.payload_view(PartitionType.WEIGHTS_DATA)
        self.weights = aligned_zeros(len(raw))
        self.weights[:] = np.frombuffer(raw, dtype=np.uint8)
        self.weights.setflags(write=False)
        self.files: list = []      # (start address, end address, bytes): external weights
        self.file_starts: list = []

    def add_file_constants(self, om, source: str) -> None:
        """Map the weight files of FileConstant ops (ge.om.external) into the weight space at
        the address each op's output desc gives; checked against their sha256 first."""
        from ge.om.external import load_file_constants
        spans = {}
        for op, view in load_file_constants(om.model_def, source):
            start = self.wbase + int(op.output_desc[0].data_offset) if op.output_desc else -1
            flat = view.reshape(-1).view(np.uint8)
            spans.setdefault((start, start + flat.size), (op.name, flat))
        end = self.wbase + self.weights.size
        for (a, b), (name, flat) in sorted(spans.items()):
            if a < end:
                raise GeError(BAD_PLAN, {"file": source, "reason": f"FileConstant {name} at "
                                         f"address {a} overlaps other weights"})
            self.files.append((a, b, flat))
            end = b
        self.file_starts = [a for a, _, _ in self.files]

    def _file_of(self, addr: int, nbytes: int):
        """The mapped FileConstant span holding [addr, addr + nbytes), or None."""
        k = bisect.bisect_right(self.file_starts, addr) - 1
        if k >= 0 and addr + nbytes <= self.files[k][1]:
            return self.files[k]
        return None

    def view(self, addr: int, td, what: str, writable: bool) -> np.ndarray:
        shape = tuple(int(d) for d in td.shape.dim)
        dtype = _np_dtype(td.dtype, what, self.source)
        if any(d < 0 for d in shape):
            raise GeError(BAD_PLAN, {"file": self.source, "reason": f"{what} has a dynamic or "
                                     f"negative shape {list(shape)}; this runtime executes "
                                     f"static shapes only"})
        nbytes = dtype.itemsize
        for d in shape:
            nbytes *= d
            if nbytes > (1 << 48):
                raise GeError(BAD_PLAN, {"file": self.source, "reason":
                                         f"{what} shape {list(shape)} is impossibly large"})
        if nbytes == 0:
            return np.empty(shape, dtype)      # an empty tensor needs no memory
        if self.base <= addr and addr + nbytes <= self.base + self.memory_size:
            buf, off = self.arena, addr - self.base
        elif self.wbase <= addr and addr + nbytes <= self.wbase + self.weights.size \
                and not writable:
            buf, off = self.weights, addr - self.wbase
        elif not writable and self._file_of(addr, nbytes) is not None:
            a, _, buf = self._file_of(addr, nbytes)
            off = addr - a
        else:
            space = "feature-map" if writable else "feature-map or weights"
            raise GeError(BAD_PLAN, {"file": self.source, "reason": f"{what} at address {addr} "
                                     f"({nbytes} bytes) lies outside the model's {space} memory"})
        return buf[off:off + nbytes].view(dtype).reshape(shape)


def aligned_zeros(size: int) -> np.ndarray:
    raw = np.zeros(size + MEMORY_ALIGN, dtype=np.uint8)
    skip = (-raw.ctypes.data) % MEMORY_ALIGN
    return raw[skip:skip + size]


def _model_int(om, key: str, default: int) -> int:
    value = om.model_attr(key)
    try:
        return int(value) if value is not None else default
    except (TypeError, ValueError):
        return default


def _type_name(proto_dtype: int) -> str:
    from ge.graph.serialize import from_proto_dtype
    return from_proto_dtype(int(proto_dtype)).name


def _np_dtype(proto_dtype: int, what: str, source: str) -> np.dtype:
    from ge.graph.serialize import from_proto_dtype
    dt = from_proto_dtype(int(proto_dtype))
    if dt == DataType.DT_BF16:
        return np.dtype(np.uint16)   # bit patterns (docs/kernel-abi.md, "Low precision")
    try:
        dtype = to_numpy_dtype(dt)
    except (TypeError, ValueError):
        dtype = None
    if dtype is None or dtype == np.object_:
        raise GeError(UNSUPPORTED_OP, {"what": f"{what} of {source}", "reason": f"data type "
                                       f"{dt.name} has no host buffer representation"})
    return dtype


def _op_attrs(op) -> dict:
    from ge.graph.serialize import attr_from_proto
    return {k: attr_from_proto(op.attr[k]) for k in op.attr}


def _graph_plan(gd, spaces: _Spaces, tasks: dict, graph_index: int, source: str,
                out_names: list) -> GraphPlan:
    plan = GraphPlan(gd.name)
    for op in sorted(gd.op, key=lambda o: o.id):
        what = f"op {op.name} ({op.type})"
        if role_of(op.type) == Role.CONST:   # its bytes are in the weight space
            continue
        if op.type in DATA_TYPES:
            if len(op.output_i) < 1 or len(op.output_desc) < 1:
                raise GeError(BAD_PLAN, {"file": source,
                                         "reason": f"Data {op.name} has no output address"})
            view = spaces.view(op.output_i[0], op.output_desc[0], f"input {op.name}", True)
            spec = TensorSpec(op.name, view.shape, view.dtype, int(_attr(op, "index", 0)),
                              str(_attr(op, "_data_related_aipp_mode", "")),
                              _type_name(op.output_desc[0].dtype))
            plan.data.append((spec, view, _attr(op, ATTR_PARENT_INDEX)))
            continue
        inputs = _bind_inputs(op, spaces, what, source)
        if op.type == "NetOutput":
            for k, v in enumerate(inputs):
                if v is None:
                    raise GeError(BAD_PLAN, {"file": source, "reason":
                                             f"graph output {k} of {gd.name} has no address"})
                name = op.input_desc[k].name or (out_names[k] if k < len(out_names) else "")
                name = name or f"output_{k}"
                parent = None
                if k < len(op.input_desc) and ATTR_PARENT_INDEX in op.input_desc[k].attr:
                    parent = int(op.input_desc[k].attr[ATTR_PARENT_INDEX].i)
                data_type = _type_name(op.input_desc[k].dtype) if k < len(op.input_desc) else ""
                plan.outputs.append((TensorSpec(name, v.shape, v.dtype, k, "", data_type), v,
                                     parent))
            continue
        outputs = []
        for k, addr in enumerate(op.output_i):
            if k >= len(op.output_desc):
                raise GeError(BAD_PLAN, {"file": source,
                                         "reason": f"output {k} of {what} has no description"})
            if addr < 0:
                raise GeError(BAD_PLAN, {"file": source, "reason":
                                         f"output {k} of {what} has no feature-map address"})
            outputs.append(spaces.view(addr, op.output_desc[k], f"output {k} of {what}", True))
        if len(outputs) != len(op.output_desc):
            raise GeError(BAD_PLAN, {"file": source, "reason": f"{what} has "
                                     f"{len(op.output_desc)} outputs but {len(op.output_i)} "
                                     f"output addresses"})
        task = tasks.get((graph_index, op.id))
        kernel_name = ""
        if task is not None and task.kernel.context.kernel_type == KERNEL_TYPE_TE:
            kernel_name = (_attr(op, ATTR_KERNEL_NAME_FOR_LOAD, "") or task.kernel.kernel_name
                           or _attr(op, ATTR_KERNEL_NAME, ""))
        step = Step(op.name, op.type, gd.name, list(_attr(op, ATTR_ORIGIN, []) or []),
                    inputs, outputs, kernel_name=kernel_name, attrs=_op_attrs(op))
        step.io = (_slot_types(op.input_i, op.input_desc), _slot_types(op.output_i,
                                                                       op.output_desc))
        if kernel_name:
            ws = [(a, b) for a, b in zip(op.workspace, op.workspace_bytes)]
            step.attrs["__workspace__"] = ws
            for a, b in ws:
                spaces.view(a, _bytes_desc(b), f"workspace of {what}", True)
        plan.steps.append(step)
    return plan


def _slot_types(addresses, descs) -> list:
    """What the model gives a kernel per slot, in its signature's terms (ge.runtime._validate)."""
    from ge.graph.serialize import from_proto_dtype
    return [None if addr < 0 or k >= len(descs) else [[int(d) for d in descs[k].shape.dim],
                                   from_proto_dtype(int(descs[k].dtype)).name]
            for k, addr in enumerate(addresses)]


def _bytes_desc(n: int):
    from ge.om import TensorDescriptor
    td = TensorDescriptor()
    td.dtype = 4   # DT_UINT8 in the proto numbering
    td.shape.dim.append(int(n))
    return td


def _bind_inputs(op, spaces: _Spaces, what: str, source: str) -> list:
    inputs = []
    for k, addr in enumerate(op.input_i):
        if addr < 0:
            inputs.append(None)
            continue
        if k >= len(op.input_desc):
            raise GeError(BAD_PLAN, {"file": source, "reason":
                                     f"input {k} of {what} has an address but no description"})
        inputs.append(spaces.view(addr, op.input_desc[k], f"input {k} of {what}", False))
    return inputs


def build_plan(om, source: str) -> Plan:
    if not om.model_def.graph:
        raise GeError(BAD_PLAN, {"file": source, "reason": "it has no graph"})
    spaces = _Spaces(om, source)
    spaces.add_file_constants(om, source)
    tasks = {}
    if om.task_def is not None:
        for t in om.task_def.task:
            tasks[(int(t.kernel.context.op_id), int(t.kernel.context.op_index))] = t
    graphs = {}
    inout = om.inout or {}
    out_names = [t.name for t in inout.get("outputs", ())]
    for index, gd in enumerate(om.model_def.graph):
        graphs[gd.name] = _graph_plan(gd, spaces, tasks, index, source,
                                      out_names if index == 0 else [])
    _attach_subgraphs(om.model_def, graphs, source)
    root = graphs[om.model_def.graph[0].name]
    root.data.sort(key=lambda d: d[0].index)
    return Plan(root, graphs, spaces.arena, spaces.weights, spaces.base, spaces.wbase)


def _attach_subgraphs(model_def, graphs: dict, source: str) -> None:
    for gd in model_def.graph:
        by_name = {s.name: s for s in graphs[gd.name].steps}
        for op in gd.op:
            if not op.subgraph_name:
                continue
            ir_names = _attr(op, ATTR_SUBGRAPH_IR_NAMES, []) or []
            step = by_name.get(op.name)
            if step is None:
                continue
            for k, inst in enumerate(op.subgraph_name):
                if inst not in graphs:
                    raise GeError(BAD_PLAN, {"file": source, "reason": f"op {op.name} "
                                             f"({op.type}) names subgraph {inst}, which the "
                                             f"model does not contain"})
                ir = ir_names[k] if k < len(ir_names) else f"subgraph_{k}"
                step.subgraphs[ir] = graphs[inst]
