"""Help text and program-name resolution (spec/atc-cli.md §1.1, §5), generated from FLAGS."""
from __future__ import annotations

import os

from .flags import FLAGS, GROUPS, Flag
from .hostenv import HOST_CPUS_BY_OS, host_cpu, host_os

__all__ = ["program_name", "help_text"]

_COLUMN = 40                  # description column of fixed flag lines
_REGISTERED_GAP = " " * 11    # registered flags: name + 11 spaces + text (§5.2)
_BLANK_BEFORE = ("Input", "Output", "Target", "Model Tuning", "Operator Tuning", "Debug")
_ADVANCED_BEFORE = "Feature"


def program_name(argv0: str) -> str:
    """`pyatc` for the wrapper, `python3 -m ge.pyatc` for the module, else `atc`."""
    if os.path.basename(argv0) == "pyatc":
        return "pyatc"
    if argv0.endswith(" -m ge.pyatc"):
        return "python3 -m ge.pyatc"
    return "atc"


def _display_name(f: Flag) -> str:
    return "h/help" if f.name == "help" else f.name


def _host_lines(f: Flag) -> tuple[str, ...]:
    """Host platform lines that depend on this machine, appended to the two host flags."""
    if f.name == "host_env_os":
        return (f"support os: {', '.join(HOST_CPUS_BY_OS)}", f"default: {host_os()}")
    if f.name == "host_env_cpu":
        lines = tuple(f"support cpu: {', '.join(cpus)} , respond to os: {os_name}"
                      for os_name, cpus in HOST_CPUS_BY_OS.items())
        return lines + (f"default: {host_cpu()}",)
    return ()


def _flag_lines(f: Flag) -> list[str]:
    head = f"  --{_display_name(f)}"
    if f.registered:
        return [head + _REGISTERED_GAP + f.help]
    lines = [head.ljust(_COLUMN - 1) + " " + f.help]
    lines += [" " * _COLUMN + extra for extra in f.extra_help + _host_lines(f)]
    return lines


def help_text(prog: str) -> str:
    """The whole help, ending with a newline (the caller adds the final empty line)."""
    lines = [
        f"usage: {prog} <args>",
        "generate offline model example:",
        f"{prog} --model=./alexnet.prototxt --weight=./alexnet.caffemodel --framework=0 "
        "--output=./domi --soc_version=<soc_version> ",
        "generate offline model for single op example:",
        f"{prog} --singleop=./op_list.json --output=./op_model --soc_version=<soc_version> ",
        "",
        "===== Basic Functionality =====",
    ]
    for group in GROUPS:
        if group == _ADVANCED_BEFORE:
            lines.append("===== Advanced Functionality =====")
        elif group in _BLANK_BEFORE:
            lines.append("")
        lines.append(f"[{group}]")
        members = [f for f in FLAGS if f.group == group]
        for f in [m for m in members if not m.registered] + [m for m in members if m.registered]:
            lines.extend(_flag_lines(f))
    return "\n".join(lines) + "\n"
