"""The machine we run on, in ATC's spelling (`--host_env_os` / `--host_env_cpu`).

One table of CPU name aliases serves the ATC defaults, the OM's host-target marker and the
check that an OM or a requested target is this host.  One table of package managers says how
this distribution installs what the operator compiler needs (a C compiler; cmake to build), for
error messages and for scripts/install_missing.sh (`python3 -m ge.host install gcc cmake`),
which the quickstart and .ci/run call.
"""
from __future__ import annotations

import os
import sys

__all__ = ["CPU_ALIASES", "canonical_cpu", "host_os", "host_cpu", "INSTALLERS",
           "distro_family", "install_command"]

# machine names -> the CPU name ATC and the OM use; arm64 and aarch64 are the same CPU
CPU_ALIASES = {"amd64": "x86_64", "x64": "x86_64", "armv7l": "arm", "armv8l": "aarch64",
               "arm64": "aarch64"}


def canonical_cpu(name: str) -> str:
    name = name.strip().lower()
    return CPU_ALIASES.get(name, name)


def host_os() -> str:
    return os.uname().sysname.lower() or "linux"


def host_cpu() -> str:
    return canonical_cpu(os.uname().machine) or "x86_64"


# /etc/os-release ID or ID_LIKE word -> the install command line of that distribution family
INSTALLERS = (
    ("debian", "apt-get install -y"), ("ubuntu", "apt-get install -y"),
    ("fedora", "dnf install -y"), ("rhel", "dnf install -y"), ("centos", "dnf install -y"),
    ("suse", "zypper install -y"), ("opensuse", "zypper install -y"),
    ("alpine", "apk add"), ("arch", "pacman -S --noconfirm"),
)
_EXTRA_PACKAGES = {"alpine": {"gcc": "gcc musl-dev"}}     # where gcc alone cannot link


def distro_family(os_release: str = "/etc/os-release") -> str:
    """The first INSTALLERS family named by this system's ID / ID_LIKE ("" when unknown)."""
    words = []
    try:
        with open(os_release, encoding="utf-8", errors="replace") as f:
            for line in f:
                key, _, value = line.strip().partition("=")
                if key in ("ID", "ID_LIKE"):
                    words += value.strip().strip('"').lower().split()
    except OSError:
        return ""
    known = dict(INSTALLERS)
    return next((w for w in words if w in known), "")


def install_command(packages, family: str = None) -> str:
    """`apt-get install -y gcc` and the like for this system; both common families when the
    distribution is unknown."""
    family = distro_family() if family is None else family
    known = dict(INSTALLERS)
    if family not in known:
        return " or ".join(install_command(packages, f) for f in ("debian", "fedora"))
    names = [_EXTRA_PACKAGES.get(family, {}).get(p, p) for p in packages]
    return " ".join([known[family]] + names)


if __name__ == "__main__":      # python3 -m ge.host install <package>...
    if sys.argv[1:2] != ["install"] or len(sys.argv) < 3:
        sys.exit("usage: python3 -m ge.host install <package>...")
    print(install_command(sys.argv[2:]))
