"""The machine we run on, in ATC's spelling (`--host_env_os` / `--host_env_cpu`).

One table of CPU name aliases serves the ATC defaults, the OM's host-target marker and the
check that an OM or a requested target is this host.
"""
from __future__ import annotations

import platform

__all__ = ["CPU_ALIASES", "canonical_cpu", "host_os", "host_cpu"]

# machine names -> the CPU name ATC and the OM use; arm64 and aarch64 are the same CPU
CPU_ALIASES = {"amd64": "x86_64", "x64": "x86_64", "armv7l": "arm", "armv8l": "aarch64",
               "arm64": "aarch64"}


def canonical_cpu(name: str) -> str:
    name = name.strip().lower()
    return CPU_ALIASES.get(name, name)


def host_os() -> str:
    return platform.system().lower() or "linux"


def host_cpu() -> str:
    return canonical_cpu(platform.machine()) or "x86_64"
