"""Ordered validation of the ATC flow (spec/atc-cli.md §2 steps 7-9, §4.1, §6.11-§6.14).

Each check is a small function raising `GeError`; `COMPILE_CHECKS` is the ordered tuple run for
the compile family (the CheckFlags order).  Refusals of what this implementation does not
support (EP0002) run last, after every CANN check, so the CANN codes stay observable.
"""
from __future__ import annotations

import os

from ge.errors import GeError
from ge.fsutil import make_dirs

from .flags import FLAGS, FRAMEWORK_NAMES, NO_EFFECT, refused_value
from .hostenv import HOST_CPUS_BY_OS, KNOWN_SOCS, NANO_SOCS, host_cpu, host_os
from .options import RunState, check_lower_limit
from .paths import check_input_path, check_output_path
from .shapes import check_shapes_and_gears

__all__ = ["check_global", "check_singleop", "check_common", "prepare_check_report",
           "COMPILE_CHECKS", "check_compile_family", "refuse_unsupported", "no_effect_warnings",
           "OUTPUT_SUFFIX", "OM2_UNSUPPORTED"]

COMPILE_MODES = (0, 3, 7, 30)
OUTPUT_SUFFIX = {0: ".om", 7: ".om2", 30: ".exeom"}
OM2_UNSUPPORTED = (
    "input_hint_shape", "om", "singleop", "check_report", "json", "virtual_type", "op_name_map",
    "quant_dumpable", "ac_parallel_enable", "tiling_schedule_optimize", "dump_mode",
    "display_model_info", "status_check", "save_original_model", "compress_weight_conf",
    "enable_compress_weight", "enable_attr_compression", "h2d_overlapped_with_compute",
    "cluster_config", "hccl_sub_comm_config", "input_shape_range", "static_model_ops_lower_limit",
)
_INPUT_FORMATS = {   # framework → (allowed, reason)
    0: (("NCHW", "ND"), "The value must be NCHW or ND in Caffe model."),
    3: (("NCHW", "NHWC", "ND", "NCDHW", "NDHWC"),
        "The value must be NCHW, NHWC, ND, NCDHW or NDHWC in TF model."),
    5: (("NCHW", "ND", "NCDHW"), "The value must be NCHW, ND or NCDHW in ONNX model."),
}
_MIX_PRECISION = ("allow_mix_precision", "allow_mix_precision_fp16", "allow_mix_precision_bf16")
_MIXED_V2 = ("mixed_float16", "mixed_bfloat16", "mixed_hif8")
_REGISTERED_VALUES = {   # registered optimisation flags: accepted values (§6.10)
    "oo_constant_folding": ("", "true", "false"),
    "oo_dead_code_elimination": ("", "true", "false"),
    "topo_sorting_mode": ("", "0", "1", "2", "3"),
    "export_compile_stat": ("0", "1", "2"),
}


def _invalid(value: str, parameter: str, reason: str) -> GeError:
    return GeError("E10001", {"value": value, "parameter": parameter, "reason": reason})


# ------------------------------------------------------------------ §2 step 7 (every mode)
def check_global(state: RunState) -> None:
    if state.get("auto_tune_mode"):
        raise _invalid(state.get("auto_tune_mode"), "--auto_tune_mode",
                       "The Auto Tune function has been removed; use the AOE tool instead.")
    if not state.explicit("deterministic_level"):
        return
    det, level = state.get("deterministic"), state.get("deterministic_level")
    for name, value in (("--deterministic", det), ("--deterministic_level", level)):
        if not (value.isascii() and value.isdigit()):
            raise _invalid(value, name, "must be an integer.")
    if (int(det) == 0) != (int(level) == 0):
        raise _invalid(f"{det} / {level}", "ge.deterministic / ge.deterministicLevel",
                       "must both be 0 or both non-zero.")


# ------------------------------------------------------------------ §6.13 single-op flow
def check_singleop(state: RunState) -> None:
    if (state.get("display_model_info") == "1" or state.explicit("framework")
            or state.get("insert_op_conf") or state.mode != 0):
        raise _invalid(state.get("singleop"), "--singleop",
                       "When --singleop is specified, --display_model_info=1, --framework, "
                       "--insert_op_conf, and --mode values other than 0 are not supported.")
    for name in ("output", "soc_version"):
        if not state.get(name):
            raise GeError("E10054", {"parameter": f"--{name}"})
    _check_soc_name(state.get("soc_version"))
    check_output_path(state.get("output"), "--output")
    _check_tuning(state)                    # implmode pair, op_precision_mode, precision
    _one_of(state, "allow_hf32", ("", "true", "false"), "E10005")
    # the op-list file itself is the reader's (E10023-E10032): ge.parser.singleop


# ------------------------------------------------------------------ §2 step 9
def check_common(state: RunState) -> None:
    """CheckWeightAndFrameWork, then the mode-30 SoC pairing."""
    mode, framework = state.mode, state.framework
    if mode == 1 and framework not in (-1, 0, 3, 5):
        raise _invalid(str(framework), "--framework",
                       "The framework must be selected from {0(Caffe), 3(TensorFlow), 5(Onnx)} "
                       "when model is set to 1(JSON).")
    if state.get("weight"):
        check_input_path(state.get("weight"), "weight")
    if mode in (0, 3, 30):
        if framework == -1:
            support = " or ".join(f"{k}({v})" for k, v in FRAMEWORK_NAMES.items())
            raise GeError("E10007", {"parameter": "framework", "support": support})
        if framework == 0 and not state.get("weight"):
            raise GeError("E10008", {})
    soc = state.get("soc_version")
    if mode == 30 and soc not in NANO_SOCS:
        raise GeError("E10055", {"reason": f"Option soc_version  {' '.join(NANO_SOCS)}  and "
                                           "mode 30 must be set together"})
    if soc in NANO_SOCS and mode != 30:
        raise GeError("E10055", {"reason": f"Option soc_version {soc} and mode 30 must be "
                                           "set together"})


def prepare_check_report(state: RunState) -> str:
    """`--check_report` under ASCEND_WORK_PATH when the user did not set it (§4.1 step 3)."""
    report = state.get("check_report")
    work = state.environ.get("ASCEND_WORK_PATH", "")
    if state.explicit("check_report") or not work:
        return report
    try:
        make_dirs(work)
    except OSError as exc:
        raise _invalid(work, "ASCEND_WORK_PATH", f"[Errno {exc.errno}] {exc.strerror}") from None
    return os.path.join(work, report)


# ------------------------------------------------------------------ compile family (§4.1)
def _check_input_format(state: RunState) -> None:
    value, framework = state.get("input_format"), state.framework
    if framework in _INPUT_FORMATS and value:
        allowed, reason = _INPUT_FORMATS[framework]
        if value not in allowed:
            raise _invalid(value, "--input_format", reason)
    if not value:
        state.values["input_format"] = "NHWC" if framework == 3 else "NCHW"


def _default_host_env(state: RunState) -> None:
    state.values["host_env_os"] = state.get("host_env_os") or host_os()
    state.values["host_env_cpu"] = state.get("host_env_cpu") or host_cpu()


def _check_soc_name(soc: str) -> None:
    if soc not in KNOWN_SOCS:
        raise _invalid(soc, "--soc_version", "The SoC is unknown. The valid values are: "
                       + ", ".join(KNOWN_SOCS) + ".")


def _check_required(state: RunState) -> None:                      # steps 1-2
    if not state.get("soc_version"):
        raise GeError("E10054", {"parameter": "--soc_version"})
    if state.mode in OUTPUT_SUFFIX and not state.get("output"):
        raise GeError("E10054", {"parameter": "--output"})
    if not state.get("model"):
        raise GeError("E10054", {"parameter": "--model"})
    check_input_path(state.get("model"), "model")
    _check_soc_name(state.get("soc_version"))


def _check_output(state: RunState) -> None:                        # step 3
    if state.mode not in OUTPUT_SUFFIX:
        return
    output = state.get("output")
    if output.endswith(("/", "\\")):
        raise GeError("E10022", {"path": output, "parameter": "output"})
    if len(output) > 4096:
        raise GeError("E10021", {"parameter": "output", "length": "4096"})
    check_output_path(output + OUTPUT_SUFFIX[state.mode], "--output")
    if state.mode == 30:
        check_output_path(output + ".dbg", "--output")


def _one_of(state: RunState, name: str, allowed: tuple[str, ...], code: str) -> None:
    value = state.get(name)
    if value not in allowed:
        raise GeError(code, {"value": value, "parameter": name})


def _check_tuning(state: RunState) -> None:                        # steps 4-7
    _one_of(state, "disable_reuse_memory", ("0", "1"), "E10006")
    if state.get("optypelist_for_implmode") and not state.get("op_select_implmode"):
        raise _invalid("", "--op_select_implmode", "Parameters --op_select_implmode and "
                       "--optypelist_for_implmode must be set at the same time.")
    if state.get("op_precision_mode"):
        check_input_path(state.get("op_precision_mode"), "op_precision_mode")
    _one_of(state, "is_weight_clip", ("0", "1"), "E10006")
    precision, precision_v2 = state.get("precision_mode"), state.get("precision_mode_v2")
    if precision and precision_v2:
        raise GeError("E10056", {"parameter1": "ge.exec.precision_mode",
                                 "parameter2": "ge.exec.precision_mode_v2"})
    mixlist = state.get("modify_mixlist")
    if mixlist:
        if precision and precision not in _MIX_PRECISION:
            reason = f"--precision_mode={precision} is not a mixed precision mode."
        elif precision_v2 and precision_v2 not in _MIXED_V2:
            reason = f"--precision_mode_v2={precision_v2} is not a mixed precision mode."
        elif not precision and not precision_v2:
            reason = "It needs a mixed --precision_mode or --precision_mode_v2."
        else:
            reason = ""
        if reason:
            raise _invalid(mixlist, "--modify_mixlist", reason)


def _check_files(state: RunState) -> None:                         # steps 12-16
    for name in ("weight", "cal_conf", "op_name_map", "insert_op_conf", "compress_weight_conf"):
        if state.get(name):
            check_input_path(state.get(name), name)
    _one_of(state, "enable_compress_weight", ("", "true", "false"), "E10005")
    if state.get("enable_compress_weight") == "true" and state.get("compress_weight_conf"):
        raise GeError("E10047", {"parameter1": "enable_compress_weight",
                                 "parameter2": "compress_weight_conf"})
    if state.get("keep_dtype"):
        check_input_path(state.get("keep_dtype"), "keep_dtype")
    check_output_path(state.check_report, "--check_report")
    _one_of(state, "save_original_model", ("", "true", "false"), "E10005")


def _check_switches(state: RunState) -> None:                      # steps 17-18
    _one_of(state, "enable_single_stream", ("", "true", "false"), "E10005")
    _one_of(state, "external_weight", ("0", "1", "2"), "E10006")
    _one_of(state, "ac_parallel_enable", ("", "0", "1"), "E10006")
    _one_of(state, "tiling_schedule_optimize", ("", "0", "1"), "E10006")
    if state.mode == 30 and state.get("display_model_info") == "1":
        raise _invalid("1", "--display_model_info",
                       "Parameter display_model_info does not support execute-om for nano.")


def _check_host_env(state: RunState) -> None:                      # step 19
    if state.mode == 7:
        for name in OM2_UNSUPPORTED:
            if state.explicit(name):
                value = state.user_set.get(name, state.raw_set.get(name, ""))
                raise _invalid(value, name, "this option is not supported in om2 mode.")
        return
    os_name, cpu = state.get("host_env_os"), state.get("host_env_cpu")
    if os_name not in HOST_CPUS_BY_OS:
        raise _invalid(os_name, "--host_env_os",
                       f"The OS {os_name} is invalid. It should be like 'linux' or 'minios'.")
    if cpu not in HOST_CPUS_BY_OS["linux"]:
        raise _invalid(cpu, "--host_env_cpu", f"The CPU {cpu} is invalid. It should be like "
                       "'x86_64', 'aarch64', 'arm64', or 'arm'.")


def _check_last(state: RunState) -> None:                          # step 20 + GE-side checks
    _one_of(state, "allow_hf32", ("", "true", "false"), "E10005")
    _one_of(state, "quant_dumpable", ("", "0", "1"), "E10006")
    attr = state.get("enable_attr_compression")
    if attr.lower() not in ("", "true", "false"):
        raise GeError("E10005", {"value": attr, "parameter": "enable_attr_compression"})
    limit = state.get("static_model_ops_lower_limit")
    if limit:
        check_lower_limit(limit, "--static_model_ops_lower_limit")
    if state.get("oo_level") not in ("O1", "O3"):
        raise _invalid(state.get("oo_level"), "--oo_level", "The value must be O1 or O3.")
    for name, allowed in _REGISTERED_VALUES.items():
        if state.explicit(name) and state.get(name) not in allowed:
            raise _invalid(state.get(name), f"--{name}",
                           "The value must be one of: " + ", ".join(repr(v) for v in allowed)
                           + ".")


COMPILE_CHECKS = (_check_input_format, _default_host_env, _check_required, _check_output,
                  _check_tuning, check_shapes_and_gears, _check_files, _check_switches,
                  _check_host_env, _check_last)


def check_compile_family(state: RunState) -> None:
    for check in COMPILE_CHECKS:
        check(state)


# ------------------------------------------------------------------ our refusals and warnings
_REFUSED_MODES = {7: "--mode=7 (OM2 package)", 30: "--mode=30 (execute-om for nano)"}


def refuse_unsupported(state: RunState, flags: tuple = FLAGS) -> None:
    """EP0002 for refused modes and values of `flags` (decisions table)."""
    reason = "it is not implemented for the host CPU target"
    if state.mode in _REFUSED_MODES:
        raise GeError("EP0002", {"feature": _REFUSED_MODES[state.mode], "reason": reason})
    for f in flags:
        value = state.get(f.name)
        if f.refuse is not None and refused_value(f, value):
            raise GeError("EP0002", {"feature": f"--{f.name}={value}", "reason": reason})


def no_effect_warnings(state: RunState, flags: tuple = FLAGS) -> None:
    """WP0001 for every explicitly set flag of `flags` this implementation accepts without
    effect."""
    for f in flags:
        if f.support == NO_EFFECT and state.explicit(f.name):
            state.warn("WP0001", {"parameter": f.name, "value": state.get(f.name)})
