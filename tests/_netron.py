"""Netron's own OM reader (tests/om/netron_read.js run under Node): where it is, and what it
sees in an OM file.  Tests that open OMs with Netron skip with `needs_netron` when Node or the
netron package is missing."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent / "om" / "netron_read.js"


def _netron_dir():
    try:
        import netron
    except ImportError:
        return None
    directory = os.path.dirname(netron.__file__)
    return directory if os.path.exists(os.path.join(directory, "om.js")) else None


NODE, NETRON = shutil.which("node"), _netron_dir()
needs_netron = pytest.mark.skipif(not NODE or not NETRON, reason="needs node and netron")


def netron_view(path, sizes: bool = False) -> dict:
    """What Netron sees: {format, graphs: [{name, nodes, initializers}]} (initializer byte
    counts instead of bytes with `sizes`)."""
    argv = [NODE, str(SCRIPT), NETRON, str(path)] + (["--sizes"] if sizes else [])
    run = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)
