"""Publishing files safely: a temporary name beside the target, fsync, rename.

Every artefact under a final name (OM, JSON outputs, dumps, reports, cache files) is written
through `publish`, so an interrupted or failed run never leaves a partial file there: on any
exception, Ctrl-C included, the temporary is removed; a killed process leaves it to the next
publish of the same name, which sweeps it (ge.fsutil.temps).
"""
from __future__ import annotations

import os
from typing import Union

from .faults import armed, fault_point
from .temps import sweep, temp_name

__all__ = ["publish"]


def _write_all(fd: int, view: memoryview) -> None:
    while view.nbytes:
        view = view[os.write(fd, view):]


def _write_parts(fd: int, parts: list, half_point: str) -> None:
    """Write the buffers in order; with `half_point` armed, stop there at exactly half."""
    half = sum(p.nbytes for p in parts) // 2 if half_point and armed(half_point) else -1
    written = 0
    for part in parts:
        if 0 <= half - written < part.nbytes:
            cut = half - written
            _write_all(fd, part[:cut])
            fault_point(half_point)
            part, written = part[cut:], written + cut
        _write_all(fd, part)
        written += part.nbytes


def publish(path: str, data: Union[bytes, str, list], mode: int = 0o600,
            half_point: str = "", written_point: str = "") -> None:
    """Write `data` (bytes, text, or a list of buffers written in order) to `path` atomically.
    `half_point` / `written_point` name test-only fault points (ge.fsutil.faults): half of the
    bytes written, and all of them fsynced but not yet renamed."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    parts = [memoryview(p).cast("B") for p in (data if isinstance(data, list) else [data])]
    directory, base = os.path.split(os.path.abspath(path))
    sweep(directory, base)
    tmp = temp_name(path)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        try:
            _write_parts(fd, parts, half_point)
            os.fsync(fd)
        finally:
            os.close(fd)
        if written_point:
            fault_point(written_point)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
