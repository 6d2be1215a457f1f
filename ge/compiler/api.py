"""What ge.atc hands over to (docs/interfaces.md): compile, save, convert, inspect."""
from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field

from ge.fsutil import os_reason
from ge.errors import GeError
from ge.graph import Graph

log = logging.getLogger(__name__)


@dataclass
class CompiledModel:
    graph: Graph
    options: dict
    context: object = None           # pipeline.BuildContext
    framework: int = 5
    warnings: list = field(default_factory=list)
    model_attrs: dict = field(default_factory=dict)   # name -> (VT kind, value) in the OM
    dynamic: object = None           # dynamic_shape.DynamicShape of an unknown-shape model


def load_model_file(model_path: str, framework: int, options: dict,
                    graph_name: str | None = None, weight_path: str | None = None) -> Graph:
    """Parse a framework model file into a graph (ONNX, Caffe with its weights, or AIR for
    framework 1)."""
    load_custom_ops()
    if framework == 0:
        from ge.parser.caffe import parse_caffe
        graph = parse_caffe(model_path, weight_path, options, graph_name=graph_name)
    elif framework == 5:
        from ge.parser.onnx import parse_onnx
        graph = parse_onnx(model_path, options, graph_name=graph_name)
    elif framework == 1:
        from ge.graph.serialize import load_air
        graph = load_air(model_path)
    elif framework == 3:
        from ge.parser.tensorflow import parse_tensorflow
        graph = parse_tensorflow(model_path, options, graph_name=graph_name)
    else:
        raise GeError("EP0002", {"feature": f"--framework={framework}", "reason":
                                 "this implementation reads ONNX (5) and AIR (1) models"})
    return graph


def load_custom_ops() -> dict:
    """Custom operator packages (docs/custom-ops.md), each C kernel checked by a compile."""
    from ge.ops.custom import ensure_loaded
    from .opcompile.gen_custom import check_kernel
    return ensure_loaded(check_kernel)


def check_host_target(options: dict) -> None:
    """Kernels are compiled for this host: --host_env_os/--host_env_cpu naming another one
    cannot be honoured (no cross compiler), so it is refused rather than ignored."""
    from ge.host import canonical_cpu, host_cpu, host_os
    here = {"ge.host_env_os": host_os(), "ge.host_env_cpu": host_cpu()}
    for key, value in here.items():
        wanted = canonical_cpu(options.get(key) or "")
        if wanted and wanted != value:
            raise GeError("EP0002", {"feature": f"--{key[3:]}={wanted}",
                                     "reason": f"kernels are compiled for this host ({value})"})


def build_graph(graph: Graph, options: dict, framework: int = 5) -> CompiledModel:
    """Run the whole pipeline on a parsed graph (ge.offline_compile uses this too)."""
    from ge.passes.bootstrap import ensure_plugins_loaded
    from .dynamic_shape import mark_dynamic, plan_dynamic_shape
    from .gear_options import parse_gear_options
    from .input_dims import refuse_unknown_input_dims
    from .opcompile.compile import prefetch_support, stop_prefetch
    from .pipeline import run_pipeline
    check_host_target(options)
    load_custom_ops()
    gears = parse_gear_options(options)
    dynamic = None
    if gears is None:
        dynamic = plan_dynamic_shape(graph, options)
        refuse_unknown_input_dims(graph, options)
    ensure_plugins_loaded()
    cwd = os.getcwd()
    prefetch_support(graph, options)    # the C compiler works while the passes run
    try:
        if gears is not None:
            from .gears import build_gears
            compiled = build_gears(graph, gears, options, framework)
        else:
            compiled = CompiledModel(graph=graph, options=dict(options),
                                     context=run_pipeline(graph, options), framework=framework)
    finally:        # a pass that changed directory must not move relative outputs
        stop_prefetch()
        _return_to(cwd)
    record_custom_packages(compiled)
    if dynamic is not None:
        mark_dynamic(compiled, dynamic)
    return compiled


def record_custom_packages(compiled: CompiledModel) -> None:
    """Each custom op names its package and version (node attribute), and the model lists
    every package it uses, so that a runtime without one refuses the model (EP0905)."""
    from ge.graph.attr_names import ATTR_CUSTOM_PACKAGE, ATTR_CUSTOM_PACKAGES
    from ge.graph.types import AttrValueType as VT
    from ge.ops.custom import custom_op
    used = []
    for node in compiled.graph.get_all_nodes():
        loaded = custom_op(node.type)
        if loaded is not None:
            node.set_attr(ATTR_CUSTOM_PACKAGE, f"{loaded.package} {loaded.version}")
            used.append(f"{loaded.package} {loaded.version}")
    if used:
        compiled.model_attrs[ATTR_CUSTOM_PACKAGES] = (VT.VT_LIST_STRING,
                                                      sorted(dict.fromkeys(used)))


def _return_to(cwd: str) -> None:
    try:
        moved = os.getcwd() != cwd
    except OSError:             # the directory a pass moved to is gone
        moved = True
    if moved:
        log.info("a pass changed the working directory; back to %s", cwd)
        os.chdir(cwd)


def compile_model_file(model_path: str, framework: int, options: dict,
                       weight_path: str | None = None,
                       graph_name: str | None = None) -> CompiledModel:
    """Parse and compile; `graph_name` names a parsed model's graph (ATC: the output's base
    name).  `weight_path` is the Caffe .caffemodel."""
    graph = load_model_file(model_path, framework, gear_parse_options(options), graph_name,
                            weight_path)
    return build_graph(graph, options, framework)


def gear_parse_options(options: dict) -> dict:
    """With gear options the parsers read the largest gear's static --input_shape (the gear
    build then gives every gear copy its own shapes); other options are passed unchanged."""
    from .gear_options import parse_gear_options, static_shape_text
    gears = parse_gear_options(options)
    if gears is None:
        return options
    text = static_shape_text(gears, gears.largest())
    return {**options, "input_shape": text, "ge.inputShape": text}


def read_single_ops(path: str) -> list:
    """The checked ops of an `--singleop` list file (ge.parser.singleop)."""
    from ge.parser.singleop import read_op_list
    return read_op_list(path)


def build_single_op(op, graph_name: str, options: dict) -> CompiledModel:
    """One op of the list compiled on its own (Data per input -> op -> NetOutput)."""
    from .singleop import build_single_op as _build
    return _build(op, graph_name, options)


def save_om(path: str, compiled: CompiledModel, atc_cmdline: str = "") -> None:
    from .build import build_om_content
    from ge.om import write_om
    write_om(path, build_om_content(compiled, atc_cmdline, path))


def compile_report(compiled: CompiledModel) -> dict:
    """The `compile_report.json` content (docs/cache.md "Statistics"): engine placement counts
    and the kernel-cache statistics of this compile."""
    from .engines import ATTR_ENGINE
    engines: dict = {}
    for node in compiled.graph.get_all_nodes():
        engine = node.attr(ATTR_ENGINE) or ""
        if engine:
            engines[engine] = engines.get(engine, 0) + 1
    stats = dict(getattr(compiled.context.kernels, "stats", None) or {})
    return {"graph_name": compiled.graph.name, "engines": dict(sorted(engines.items())),
            "kernel_cache": stats}


def write_fusion_result(compiled: CompiledModel) -> str | None:
    """fusion_result.json, and compile_report.json in the same directory.  They report on a
    compile that is done: a file that cannot be written (full disk, read-only directory) is a
    WP0003 warning, never a failure; returns the fusion_result.json path, None if not written."""
    import json
    from ge.graph.serialize import write_atomic
    from ge.passes.report import fusion_result_path, write_fusion_result as _write
    work = os.environ.get("ASCEND_WORK_PATH") or None
    path = fusion_result_path(work)
    report_path = os.path.join(os.path.dirname(path), "compile_report.json")
    report = json.dumps(compile_report(compiled), indent=4, sort_keys=True) + "\n"
    written = _written(path, lambda: _write(compiled.context.report, work))
    _written(report_path, lambda: write_atomic(report_path, report.encode()))
    return path if written else None


def _written(path: str, write) -> bool:
    from ge.errors import warn
    try:
        write()
    except OSError as exc:
        warn("WP0003", {"file": path, "reason": os_reason(exc)})
        return False
    return True


def om_to_json(om_path: str) -> str:
    from ge.om import om_to_json as _conv
    return _conv(om_path)


def model_to_json(model_path: str, framework: int) -> str:
    if framework == 0:
        from ge.parser.caffe import model_to_json as _caffe
        return _caffe(model_path)
    if framework == 5:
        from ge.parser.onnx_json import model_to_json as _conv
        return _conv(model_path)
    if framework == 1:
        from ge.om import air_to_json
        return air_to_json(model_path)
    if framework == 3:
        from ge.parser.tensorflow_json import model_to_json as _tf_conv
        return _tf_conv(model_path)
    raise GeError("EP0002", {"feature": f"--framework={framework}", "reason":
                             "this implementation reads ONNX (5) and AIR (1) models"})


def inferred_graph_to_json(model_path: str, framework: int, options: dict,
                           weight_path: str | None = None) -> str:
    """Mode 1 with --dump_mode=1: the parsed graph after shape inference, as ModelDef JSON
    (weights omitted, like the OM conversion)."""
    from ge.graph import serialize as ser
    from ge.om import extract_weights, model_def_to_json
    from .prepare import infer_shapes
    graph = load_model_file(model_path, framework, options, weight_path=weight_path)
    infer_shapes(graph)
    model_def = ser.graph_to_model_def(graph)
    extract_weights(model_def)
    return model_def_to_json(model_def)


def pbtxt_to_json(path: str) -> str:
    from ge.om import pbtxt_to_json as _conv
    return _conv(path)


def om_info(om_path: str) -> dict:
    from ge.om import om_info as _info
    return _info(om_path)


def precheck(model_path: str, framework: int, options: dict) -> dict:
    """Mode 3: parse the model and report, per node, whether its op is supported."""
    from .precheck import run_precheck
    return run_precheck(model_path, framework, options)
