"""Opening our OM files with Netron's own OM reader (the `netron` package's om.js, run by
node through tests/om/netron_read.js): what every Netron test needs."""
from __future__ import annotations

import os
import shutil

NETRON_SCRIPT = os.path.join(os.path.dirname(__file__), "om", "netron_read.js")


def netron_dir():
    """The netron package directory when it ships the OM reader, else None."""
    try:
        import netron
    except ImportError:
        return None
    directory = os.path.dirname(netron.__file__)
    return directory if os.path.exists(os.path.join(directory, "om.js")) else None


NODE, NETRON = shutil.which("node"), netron_dir()
