"""Run-mode handlers (spec/atc-cli.md §4, §9): hand over to `ge.compiler.api`.

Each handler imports `ge.compiler.api` when it runs, not at module import, so `--help` and
argument errors never load the compiler.  Files ATC itself writes (JSON outputs, the pre-check
report) go through a temporary name in the same directory and a rename, with permissions 0600
as CANN's JSON saver uses.
"""
from __future__ import annotations

import json
import os

from ge.errors import GeError
from ge.fsutil import os_reason, publish

from .checks import OUTPUT_SUFFIX
from .options import RunState, build_options
from .paths import check_input_path, check_output_path
from .report import product

__all__ = ["run_mode", "MODE_HANDLERS", "write_text_atomic", "model_info_lines"]


def write_text_atomic(path: str, text: str) -> None:
    """JSON outputs are created 0600, like GE's saver (atc-cli.md §9.2)."""
    try:
        publish(path, text, mode=0o600)
    except OSError as exc:
        raise GeError("E13004", {"file": path, "reason": os_reason(exc)}) from None


def _cmdline(state: RunState) -> str:
    return " ".join(state.argv)


# ------------------------------------------------------------------ model-info block (§9.5)
_INFO_RESOURCE = ("memory_size", "weight_size", "stream_num", "event_num")
_INFO_OM = ("modeldef_size", "weight_data_size", "tbe_kernels_size",
            "cust_aicpu_kernel_store_size", "task_info_size", "so_store_size")


def model_info_lines(info: dict, cmdline: str) -> list[str]:
    def num(key: str) -> str:
        value = info.get(key)
        return "-1" if value is None else str(value)

    lines = ["============ Display Model Info start ============",
             f"Original Atc command line: {info.get('atc_cmdline', cmdline)}",
             f"system   info: atc_version[{info.get('atc_version', '')}], "
             f"soc_version[{info.get('soc_version', '')}], "
             f"framework_type[{info.get('framework_type', '')}].",
             "resource info: " + ", ".join(
                 f"{k}[{num(k)} B]" if k.endswith("size") else f"{k}[{num(k)}]"
                 for k in _INFO_RESOURCE) + "."]
    sizes = info.get("om_info_list")
    if sizes is None:
        lines.append("om       info: attribute om_info_list not found in the model "
                     "(the model was built by an incompatible version).")
    elif len(sizes) != len(_INFO_OM) - 1:
        lines.append(f"om       info: attribute om_info_list has {len(sizes)} entries, "
                     f"expected {len(_INFO_OM) - 1}.")
    else:
        lines.append("om       info: " + ", ".join(f"{k}[{num(k)} B]" for k in _INFO_OM) + ".")
    for source, config in info.get("aipp") or ():
        lines.append(f"aipp     info: input[{source}], config[{config}].")
    if info.get("is_unknown_shape"):        # ours: the ranges of an unknown-shape model
        lines.append(f"dynamic  info: unknown shape model, "
                     f"input_shape_range[{info.get('input_shape_range', '')}], "
                     f"compiled at[{info.get('compiled_input_shapes', '')}].")
    gears = info.get("gears")
    if gears:                                # ours: the gears of the root Case
        lines.append(f"dynamic  info: {gears['option']}["
                     + ";".join(",".join(str(v) for v in g) for g in gears["gears"])
                     + f"], inputs[{','.join(gears['inputs'])}].")
    if info.get("precision_mode"):          # ours: the dtype-assignment stage's record
        counts = ", ".join(f"{d}[{n}]" for d, n in
                           (item.rsplit(":", 1) for item in info.get("precision_dtypes") or ()))
        lines.append(f"precision info: precision_mode[{info['precision_mode']}]"
                     + (f", float ops per dtype: {counts}" if counts else "") + ".")
    if info.get("custom_op_packages"):      # ours: the packages the runtime needs
        lines.append("custom   info: custom operator packages[" +
                     ", ".join(info["custom_op_packages"]) + "].")
    for name, count, size in info.get("external_weights") or ():    # ours: weight/ files
        lines.append(f"external info: file[weight/{name}], file_constant_num[{count}], "
                     f"size[{size} B].")
    lines.append("============ Display Model Info end   ============")
    return lines


def _display_info(state: RunState, om_path: str) -> None:
    from ge.compiler.api import om_info
    info = om_info(om_path)
    product("\n".join(model_info_lines(info, _cmdline(state))))


def _write_fusion_result(state: RunState, compiled) -> None:
    """`fusion_result.json` unless `--export_compile_stat=0` (compile-options.md §6.5)."""
    if state.get("export_compile_stat") == "0":
        return
    from ge.compiler.api import write_fusion_result
    write_fusion_result(compiled)


# ------------------------------------------------------------------ handlers
def _mode_compile(state: RunState) -> None:
    """Mode 0 (7 and 30 are refused before dispatch)."""
    from ge.compiler.api import compile_model_file, save_om
    options = build_options(state, state.check_report)
    output = state.get("output")
    # parsed models are named after the output file (atc-cli.md §9.1)
    compiled = compile_model_file(state.get("model"), state.framework, options,
                                  weight_path=state.get("weight") or None,
                                  graph_name=os.path.basename(output) or None)
    if getattr(compiled, "host_platform_dependent", False):
        output += f"_{state.get('host_env_os')}_{state.get('host_env_cpu')}"
    path = output + OUTPUT_SUFFIX[state.mode]
    save_om(path, compiled, _cmdline(state))
    _write_fusion_result(state, compiled)
    if state.get("display_model_info") == "1":
        _display_info(state, path)


def _mode_precheck(state: RunState) -> None:
    """Mode 3: parse only, write the pre-check report; no model file."""
    from ge.compiler.api import precheck
    options = build_options(state, state.check_report)
    report = precheck(state.get("model"), state.framework, options)
    write_text_atomic(state.check_report, json.dumps(report, indent=2) + "\n")
    if report.get("result") == "failed":
        raise GeError("EP0003", {"file": state.check_report})


def _check_json_io(state: RunState) -> tuple[str, str]:
    om, json_path = state.get("om"), state.get("json")
    if not om:
        raise GeError("E10004", {"parameter": "om"})
    if state.mode == 5 and om.rsplit(".", 1)[-1] != "txt":
        raise GeError("E10001", {"value": om, "parameter": "--om", "reason":
                                 "If the value of --model is 5, --om only supports *.txt format."})
    if not json_path:
        raise GeError("E10004", {"parameter": "json"})
    resolved = check_input_path(om, "om")
    check_output_path(json_path, "--json")
    return resolved, json_path


def _mode_to_json(state: RunState) -> None:
    """Mode 1: OM (no --framework) or an original model (--framework 0/3/5) to JSON."""
    from ge.compiler.api import inferred_graph_to_json, model_to_json, om_to_json
    om, json_path = _check_json_io(state)
    if state.framework == -1:
        text = om_to_json(om)
    elif state.get("dump_mode") == "1":
        text = inferred_graph_to_json(om, state.framework,
                                      build_options(state, state.check_report),
                                      weight_path=state.get("weight") or None)
    else:
        text = model_to_json(om, state.framework)
    write_text_atomic(json_path, text)


def _mode_pbtxt(state: RunState) -> None:
    from ge.compiler.api import pbtxt_to_json
    om, json_path = _check_json_io(state)
    write_text_atomic(json_path, pbtxt_to_json(om))


def _mode_display(state: RunState) -> None:
    if state.framework != -1:
        raise GeError("E10057", {"parameter1": "om", "parameter2": "mode"})
    om = state.get("om")
    if not om:
        raise GeError("E10004", {"parameter": "om"})
    _display_info(state, check_input_path(om, "om"))


MODE_HANDLERS = {0: _mode_compile, 1: _mode_to_json, 3: _mode_precheck, 5: _mode_pbtxt,
                 6: _mode_display}


def run_mode(state: RunState) -> None:
    MODE_HANDLERS[state.mode](state)
