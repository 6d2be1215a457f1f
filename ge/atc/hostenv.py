"""Host platform facts and the known SoC table used by the ATC checks.

`--host_env_os` / `--host_env_cpu` default to the machine we run on (spec/atc-cli.md §4.1
step 5); `--soc_version` is validated against `KNOWN_SOCS` (decisions table: the Ascend names of
the CANN documentation).  The SoC name only keys the kernel cache and is recorded in the OM.
"""
from __future__ import annotations

from ge.host import host_cpu, host_os

__all__ = ["HOST_CPUS_BY_OS", "host_os", "host_cpu", "KNOWN_SOCS", "NANO_SOCS"]

# OS names and the CPUs each supports (§6.3).
HOST_CPUS_BY_OS = {"linux": ("x86_64", "aarch64", "arm64", "arm"), "minios": ("aarch64",)}

# Nano SoCs that pair with --mode=30 (§4).
NANO_SOCS = ("Ascend035", "Ascend035A", "Ascend035B")

KNOWN_SOCS = (
    "Ascend310", "Ascend310B1", "Ascend310B2", "Ascend310B3", "Ascend310B4",
    "Ascend310P1", "Ascend310P3", "Ascend310P5", "Ascend310P7",
    "Ascend610", "Ascend610Lite", "Ascend615", "Ascend031",
    "Ascend910", "Ascend910A", "Ascend910B", "Ascend910ProA", "Ascend910ProB",
    "Ascend910PremiumA", "Ascend910B1", "Ascend910B2", "Ascend910B2C", "Ascend910B3",
    "Ascend910B4", "Ascend910B4-1", "Ascend910_9391", "Ascend910_9392", "Ascend910_9381",
    "Ascend910_9382", "Ascend910_9372", "Ascend910_9362",
    "BS9SX1AA", "BS9SX1AB", "BS9SX1AC", "BS9SX2AA", "BS9SX2AB",
    "Hi3796CV300ES", "Hi3796CV300CS", "SD3403",
) + NANO_SOCS
