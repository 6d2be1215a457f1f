"""Throw-away virtual environments for tests (shared by tests/conftest.py and tests/install)."""
from __future__ import annotations

import os
import site
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import List

__all__ = ["outer_site_dirs", "make_venv", "venv_purelib"]


def outer_site_dirs() -> List[str]:
    """site-packages directories of the interpreter running the tests."""
    dirs = list(site.getsitepackages())
    for key in ("purelib", "platlib"):
        dirs.append(sysconfig.get_paths()[key])
    return list(dict.fromkeys(d for d in dirs if os.path.isdir(d)))


def make_venv(path: Path, see_outer_packages: bool) -> Path:
    """Creates a venv without pip; returns its python. With see_outer_packages, the test
    interpreter's site-packages are appended to its sys.path (a .pth file), so it has the
    runtime dependencies without installing anything."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    python = path / "bin" / "python"
    if see_outer_packages:
        pth = Path(venv_purelib(python), "_pyatc_test_outer.pth")
        pth.write_text("\n".join(outer_site_dirs()) + "\n")
    return python


def venv_purelib(python: Path) -> str:
    return subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True).stdout.strip()
