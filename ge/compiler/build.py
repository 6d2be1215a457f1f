"""Model build: the compiled graph, its memory plan, weights and kernels -> OmContent.

Addresses follow docs/memory-plan.md: feature maps at TASK_GEN_BASE_ADDR + offset, weights at
TASK_GEN_WEIGHT_ADDR + offset inside WEIGHTS_DATA.
"""
from __future__ import annotations

from ge.om.external import FILE_CONSTANT
from ge.om.plan import (KERNEL_TYPE_AI_CPU, KERNEL_TYPE_TE, MODEL_TASK_KERNEL, TASK_GEN_BASE_ADDR,
                         TASK_GEN_WEIGHT_ADDR)
from ge.graph.attr_names import ATTR_DYNAMIC_SOURCE, ATTR_KERNEL_NAME
from ge import __version__
from ge.graph import CONST_TYPES, serialize as ser
from ge.graph.types import AttrValueType as VT
from ge.ops import Role, role_of

from .opcompile.cgen import KERNEL_SYMBOL



def _addresses(graph_def, plan) -> dict:
    """(op name, output index) -> logical address, for one GraphDef."""
    addr = {}
    for op in graph_def.op:
        if op.type == FILE_CONSTANT and op.output_desc:   # its bytes: a weight file's
            addr[(op.name, 0)] = TASK_GEN_WEIGHT_ADDR + op.output_desc[0].data_offset
            continue
        if op.type in CONST_TYPES and "value" in op.attr:
            desc = op.attr["value"].t.desc
            if desc.weight_size or not op.attr["value"].t.data:
                addr[(op.name, 0)] = TASK_GEN_WEIGHT_ADDR + desc.data_offset
            continue
        mem = plan.nodes.get((graph_def.name, op.name))
        if mem is not None:
            for i, off in enumerate(mem.output_offsets):
                addr[(op.name, i)] = -1 if off < 0 else TASK_GEN_BASE_ADDR + off
    return addr


def _fill_addresses(model_def, plan) -> None:
    for graph_def in model_def.graph:
        addr = _addresses(graph_def, plan)
        for op in graph_def.op:
            del op.output_i[:]
            op.output_i.extend(addr.get((op.name, i), -1) for i in range(len(op.output_desc)))
            del op.input_i[:]
            for text in op.input:
                if not text:
                    op.input_i.append(-1)
                    continue
                src, _, idx = text.rpartition(":")
                if idx == "-1":
                    continue  # control edge
                op.input_i.append(addr.get((src, int(idx)), -1))
            mem = plan.nodes.get((graph_def.name, op.name))
            if mem is not None and mem.workspace_bytes:
                del op.workspace[:], op.workspace_bytes[:]
                op.workspace.extend(TASK_GEN_BASE_ADDR + o for o in mem.workspace_offsets)
                op.workspace_bytes.extend(mem.workspace_bytes)


# ModelTaskType / ccKernelType values (spec/om-format.md §9)
NO_TASK_ROLES = frozenset({Role.DATA, Role.CONST, Role.OUTPUT})  # nothing to execute


def build_tasks(model_def):
    """TASK_INFO: one KERNEL task per executable op, in OpDef.id order, graph by graph.
    A compiled op names its TBE_KERNELS item in kernel_name (kernel_type TE); any other op
    runs on the AiCpu engine with the reference kernel of its type (kernel_type AI_CPU,
    kernel_name = op type).  context.op_index is the OpDef.id, context.op_id the graph index."""
    from ge.om import ModelTaskDef
    task_def = ModelTaskDef()
    task_def.version = "pyatc-host-1"
    task_def.base_addr = TASK_GEN_BASE_ADDR
    task_def.weight_addr = TASK_GEN_WEIGHT_ADDR
    for graph_index, graph_def in enumerate(model_def.graph):
        for op in sorted(graph_def.op, key=lambda o: o.id):
            if role_of(op.type) in NO_TASK_ROLES:
                continue
            task = task_def.task.add()
            task.id = len(task_def.task) - 1
            task.type = MODEL_TASK_KERNEL
            kernel = task.kernel
            kernel.context.op_index = op.id
            kernel.context.op_id = graph_index
            if ATTR_KERNEL_NAME in op.attr:
                kernel.context.kernel_type = KERNEL_TYPE_TE
                kernel.kernel_name = op.attr[ATTR_KERNEL_NAME].s.decode()
                kernel.stub_func = KERNEL_SYMBOL
            else:
                kernel.context.kernel_type = KERNEL_TYPE_AI_CPU
                kernel.kernel_name = op.type
    return task_def


def precision_attrs(summary) -> dict:
    """The precision mode the model was built with and its float ops per dtype."""
    from ge.graph.attr_names import ATTR_MODEL_DTYPE_COUNTS, ATTR_MODEL_PRECISION
    if summary is None:
        return {}
    counts = [f"{k}:{v}" for k, v in sorted(summary.counts.items())]
    return {ATTR_MODEL_PRECISION: (VT.VT_STRING, summary.mode),
            ATTR_MODEL_DTYPE_COUNTS: (VT.VT_LIST_STRING, counts)}


def build_om_content(compiled, atc_cmdline: str = "", om_path: str = ""):
    """The OmContent of a compiled model; with `ge.externalWeight` 1 or 2 the constants go to
    weight files beside `om_path` (ge.om.external), which the writer publishes first."""
    from ge.om import OmContent
    from ge.om.external import check_mode, externalize
    from ge.om.weights import place_weights
    ctx = compiled.context
    options = compiled.options
    consts: list = []
    model_def = ser.graph_to_model_def(compiled.graph, weights=consts)
    dynamic = getattr(compiled, "dynamic", None)
    source_consts: list = []
    if dynamic is not None:          # the source graph's constants share WEIGHTS_DATA
        from .dynamic_shape import source_without_weights
        source_def, source_consts = source_without_weights(dynamic)
    mode = check_mode(options.get("ge.externalWeight", "0"))
    files = externalize(consts, om_path, mode) if mode != "0" else None
    # the arrays themselves (or their file ranges): copied once, by the writer, into the file
    weights = place_weights([(op, data) for op, data in consts + source_consts
                             if op.type != FILE_CONSTANT])
    _fill_addresses(model_def, ctx.memory)
    kernels = getattr(ctx.kernels, "kernels", None) or ()
    task_def = build_tasks(model_def)
    out_nodes = [n for n in options.get("ge.outputNodeName", "").split(";") if n]
    attrs = {
        "task_gen_base_addr": (VT.VT_INT, TASK_GEN_BASE_ADDR),
        "task_gen_weight_addr": (VT.VT_INT, TASK_GEN_WEIGHT_ADDR),
        "core_type": (VT.VT_INT, 1 if options.get("ge.engineType") == "VectorCore" else 0),
    }
    if out_nodes:
        attrs["attr_model_out_nodes_name"] = (VT.VT_LIST_STRING, out_nodes)
    attrs.update(precision_attrs(ctx.precision))
    attrs.update(compiled.model_attrs)
    if dynamic is not None:
        from .dynamic_shape import mark_model_def
        mark_model_def(model_def, dynamic)
        attrs[ATTR_DYNAMIC_SOURCE] = (VT.VT_BYTES,
                                      source_def.SerializeToString(deterministic=True))
    return OmContent(
        model_def=model_def, weights=weights, task_def=task_def, kernels=list(kernels),
        soc_version=options.get("ge.socVersion", ""), atc_cmdline=atc_cmdline,
        framework_type=str(compiled.framework) if compiled.framework >= 0 else "",
        atc_version=__version__,
        memory_size=ctx.memory.memory_size, model_attrs=attrs, weight_files=files,
        is_unknown_shape=dynamic is not None)
