"""Flags → GE option map, and `--raw_ge_options` (spec/atc-cli.md §8), over the flag table.

`name_table()` is ATC's option-name table (§8.1) derived from FLAGS; `load_raw_options` reads
and validates the JSON file (§8.5 rules 1-6); `apply_raw_options` writes accepted values into
flags that the command line did not set (rule 7); `build_options` produces the flat
`dict[str, str]` handed to `ge.compiler.api` (§8.2, with our superset noted in docs/atc.md).
`default_options()` and `finish_options()` are the same map for a caller that sets GE keys
instead of flags (`ge.offline_compile`), so both entries compile a graph the same way.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

from ge.errors import GeError, GeWarning
from ge.compiler.cache.settings import OPT_REMOTE as REMOTE_CACHE_OPTION
from ge.passes.deadline import TIMEOUT_OPTION as PASS_TIMEOUT_OPTION
from ge.fsutil import read_text_regular

from .flags import BY_NAME, FLAGS, Flag
from .hostenv import host_cpu, host_os
from .parse import check_value
from .paths import check_input_path

__all__ = ["RunState", "name_table", "RAW_ONLY_KEYS", "load_raw_options", "apply_raw_options",
           "build_options", "default_options", "finish_options", "FIXED_OPTIONS",
           "FORBIDDEN_CLOSE_PASS", "check_lower_limit", "singleop_options"]

# Keys accepted in --raw_ge_options that no flag carries: our documented superset of CANN
# (decision: ge.exec.exclude_engines at any level; ge.py_pass_timeout, the pass time limit of
# ge.passes.deadline; ge.op_compiler_remote_cache, the remote kernel stores of docs/cache.md).
# They go straight into the option map.
RAW_ONLY_KEYS = ("ge.exec.exclude_engines", PASS_TIMEOUT_OPTION, REMOTE_CACHE_OPTION)

# Flags that only the command line may set (§8.5 rule 7).
CLI_ONLY_FLAGS = ("model", "output", "framework", "soc_version")

FORBIDDEN_CLOSE_PASS = "forbidden_close_pass:on"

# Fixed keys ATC always adds for the compile family (§8.2), insert-if-absent.
FIXED_OPTIONS = (
    ("ge.graphRunMode", "0"),
    ("ge.streamNum", "1"),
    ("ge.evaluateGraphResourceMode", "1"),
    ("ge.runFlag", "0"),
    ("ge.trainFlag", "0"),
    ("ge.exec.hcclFlag", "1"),
    ("ge.buildGraphMode", "offline"),
)

_LEVELS = ("global", "session", "graph")     # later levels win (§8.5 rule 4)
_INT64_MAX = 2 ** 63 - 1


@dataclass
class RunState:
    """Everything one ATC run knows after parsing; checks and modes read and update it."""
    argv: list[str]
    prog: str
    values: dict[str, str]
    user_set: dict[str, str]
    raw_set: dict[str, str] = field(default_factory=dict)     # flags written from raw options
    raw_direct: dict[str, str] = field(default_factory=dict)  # RAW_ONLY_KEYS values
    warnings: list[GeWarning] = field(default_factory=list)
    environ: dict = field(default_factory=lambda: dict(os.environ))
    check_report: str = ""          # --check_report after ASCEND_WORK_PATH prefixing

    def get(self, name: str) -> str:
        return self.values[name]

    def explicit(self, name: str) -> bool:
        """Set on the command line or through raw options (§3.4, §8.5 rule 7)."""
        return name in self.user_set or name in self.raw_set

    @property
    def mode(self) -> int:
        return int(self.values["mode"])

    @property
    def framework(self) -> int:
        return int(self.values["framework"])

    def warn(self, code: str, args: dict) -> None:
        self.warnings.append(GeWarning(code, args))


def name_table() -> dict[str, str]:
    """GE key → `--flag`, in table order (§8.1 plus the registered keys)."""
    table: dict[str, str] = {}
    for f in FLAGS:
        if f.ge_key and f.name_table:
            for key in (f.ge_key,) + f.alias_keys:
                table[key] = f"--{f.name}"
    return table


def _key_to_flag() -> dict[str, Flag]:
    return {key: BY_NAME[cli[2:]] for key, cli in name_table().items()}


def _raw_error(path: str, reason: str) -> GeError:
    return GeError("E10032", {"file": path, "reason": reason})


def _read_levels(path: str, text: str) -> dict[str, tuple[str, str]]:
    """Rules 2-4: JSON layout, then flatten with graph > session > global."""
    try:
        document = json.loads(text)
    except ValueError:
        raise _raw_error(path, "Invalid JSON format") from None
    if not isinstance(document, dict):
        raise _raw_error(path, "The top-level JSON value must be an object")
    compile_options = document.get("compile options")
    if not isinstance(compile_options, dict):
        raise _raw_error(path, "The options JSON file must contain an object under the key "
                               "(key=compile options).")
    for level in compile_options:
        if level not in _LEVELS:
            raise _raw_error(path, f"Unsupported compile options level (level={level}). "
                                   "Supported levels are [global, session, graph]")
    flat: dict[str, tuple[str, str]] = {}
    for level in _LEVELS:
        if level not in compile_options:
            continue
        options = compile_options[level]
        if not isinstance(options, dict):
            raise _raw_error(path, f"Compile options level (level={level}) must be an object")
        for key, value in options.items():
            if not key:
                raise _raw_error(path, f"Option key in level (level={level}) must not be empty")
            if not isinstance(value, str):
                raise _raw_error(path, f"Option (option={key}) in level (level={level}) "
                                       "must be a string")
            flat[key] = (value, level)
    return flat


def check_lower_limit(value: str, parameter: str) -> None:
    valid = "The valid range is [-1,9223372036854775807]."
    body = value[1:] if value.startswith("-") else value
    if not (body.isascii() and body.isdigit()):
        raise GeError("E10001", {"value": value, "parameter": parameter,
                                 "reason": f"The value must be a non-empty integer. {valid}"})
    if not -1 <= int(value) <= _INT64_MAX:
        raise GeError("E10001", {"value": value, "parameter": parameter,
                                 "reason": f"The current value is not within the valid range. "
                                           f"{valid}"})


def load_raw_options(path: str, ignore_unsupported: bool,
                     state: RunState | None = None) -> dict[str, tuple[str, str]]:
    """Rules 1-6: read, validate and filter the raw options file; key → (value, level)."""
    resolved = check_input_path(path, "raw_ge_options")
    try:
        text = read_text_regular(resolved)
    except (OSError, UnicodeDecodeError):
        raise GeError("E13001", {"file": path, "reason": "Open file failed"}) from None
    flat = _read_levels(path, text)
    by_key = _key_to_flag()
    accepted: dict[str, tuple[str, str]] = {}
    for key, (value, level) in flat.items():
        if key not in by_key and key not in RAW_ONLY_KEYS:
            if not ignore_unsupported:
                raise GeError("E10055", {"reason": f"RawGeOptions[{key}:{value}] in level "
                                                   f"[{level}] is not supported in ATC. "
                                                   "Please do not set it."})
            if state is not None:
                state.warn("WP0002", {"key": key, "level": level})
            continue
        f = by_key.get(key)
        if f is not None:
            value = check_value(f, value)
            if f.name == "static_model_ops_lower_limit":
                check_lower_limit(value, f"--{f.name}")
        accepted[key] = (value, level)
    return accepted


def apply_raw_options(state: RunState) -> None:
    """Rule 7: explicit CLI > raw file > default; model/output/framework/soc are CLI-only."""
    path = state.get("raw_ge_options")
    if not path and not state.explicit("raw_ge_options"):
        return
    ignore = state.get("raw_ge_options_ignore_unsupported") == "true"
    by_key = _key_to_flag()
    for key, (value, _level) in load_raw_options(path, ignore, state).items():
        f = by_key.get(key)
        if f is None:
            state.raw_direct[key] = value
            continue
        if f.name in state.user_set:
            continue
        if f.name in CLI_ONLY_FLAGS:
            raise GeError("E10001", {"value": value, "parameter": f"--{f.name}",
                                     "reason": "This option must be set explicitly by command "
                                               "line and cannot be replaced by raw_ge_options."})
        state.values[f.name] = value
        state.raw_set[f.name] = value


def _flag_option(state: RunState, f: Flag) -> str | None:
    if f.emit == "explicit":
        if f.name in state.user_set:
            value = state.user_set[f.name] if f.registered else state.values[f.name]
        elif f.name in state.raw_set:
            value = state.raw_set[f.name]
        else:
            return None
    else:
        value = state.values[f.name]
        if f.emit == "nonempty" and not value:
            return None
    return f.to_option(value) if f.to_option else value


def _flag_options(state: RunState) -> dict[str, str]:
    options: dict[str, str] = {}
    for f in FLAGS:
        if not f.ge_key:
            continue
        value = _flag_option(state, f)
        if value is not None:
            options[f.ge_key] = value
    return options


def default_options() -> dict[str, str]:
    """The GE options of a compile that sets nothing: every flag at its default, mapped as
    `build_options` maps it, the host flags defaulted to this host as ATC's checks do.  Not
    finished: overlay the caller's keys, then `finish_options`."""
    values = {f.name: f.default for f in FLAGS}
    values.update(host_env_os=host_os(), host_env_cpu=host_cpu())
    return _flag_options(RunState(argv=[], prog="", values=values, user_set={}, environ={}))


def finish_options(options: dict[str, str]) -> dict[str, str]:
    """The keys ATC settles after merging (§8.2), in place: `forbidden_close_pass:on` appended
    to the caller's pass switches (or alone), then the fixed keys where absent."""
    switch = options.get("ge.optimizationSwitch", "")
    options["ge.optimizationSwitch"] = (f"{switch};{FORBIDDEN_CLOSE_PASS}" if switch
                                        else FORBIDDEN_CLOSE_PASS)
    for key, value in FIXED_OPTIONS:
        options.setdefault(key, value)
    return options


def build_options(state: RunState, check_report: str = "") -> dict[str, str]:
    """The flat GE option map of the compile family (§8.2)."""
    options = _flag_options(state)
    if check_report:
        options["check_report"] = check_report
    if state.get("save_original_model"):
        options["ge.originalModelFile"] = state.get("output") + "_original.om"
    for key, value in state.raw_direct.items():
        options.setdefault(key, value)
    finish_options(options)
    # ATC's own keys: the compiler reads neither
    options["MULTI_THREAD_COMPILE"] = _multi_thread(state.environ.get("MULTI_THREAD_COMPILE"))
    options["ge.optionNameMap"] = json.dumps(name_table(), separators=(",", ":"))
    return options


# §8.3: the single-op flow hands over these flags (deterministic_level only when set,
# optimization_switch only when not empty, without the forbidden_close_pass suffix) and its own
# fixed keys; raw-option-only keys are not merged in.
SINGLEOP_FLAGS = (
    "op_precision_mode", "allow_hf32", "precision_mode", "precision_mode_v2", "soc_version",
    "virtual_type", "core_type", "aicore_num", "op_select_implmode", "optypelist_for_implmode",
    "op_debug_level", "debug_dir", "op_compiler_cache_dir", "op_compiler_cache_mode",
    "mdl_bank_path", "op_bank_path", "device_id", "modify_mixlist", "enable_small_channel",
    "sparsity", "atomic_clean_policy", "external_weight", "deterministic", "deterministic_level",
    "customize_dtypes", "is_weight_clip", "jit_compile", "optimization_switch")
SINGLEOP_FIXED = (
    ("ge.streamNum", "1"), ("ge.runFlag", "0"), ("ge.graphRunMode", "0"),
    ("ge.exec.single_op", "1"), ("ge.exec.hcclFlag", "0"),
    ("ge.evaluateGraphResourceMode", "1"), ("ge.buildGraphMode", "offline"),
)


def singleop_options(state: RunState) -> dict[str, str]:
    """The GE option map of `--singleop` (§8.3)."""
    keys = {BY_NAME[name].ge_key for name in SINGLEOP_FLAGS}
    options = {k: v for k, v in _flag_options(state).items() if k in keys}
    if not options.get("ge.optimizationSwitch"):
        options.pop("ge.optimizationSwitch", None)
    options.update(SINGLEOP_FIXED)
    options["ge.optionNameMap"] = json.dumps(name_table(), separators=(",", ":"))
    return options


def _multi_thread(raw: str | None) -> str:
    """Decimal `strtol` of the variable, `1` when unset (§8.2)."""
    if raw is None:
        return "1"
    text = raw.strip()
    sign = -1 if text.startswith("-") else 1
    digits = ""
    for ch in text.lstrip("+-"):
        if not ch.isdigit():
            break
        digits += ch
    return str(sign * int(digits)) if digits else "0"
