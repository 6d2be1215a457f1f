"""Constant bytes that stay in their file (docs/om.md "Lazy weights").

A parser maps a model or external-data file read-only (`map_file`) and hands the compiler numpy
views of it (`file_view`): nothing is read until a pass looks at the values, and then the pages
come from the page cache, not from a copy.  The OM writer asks `file_range_of(array)` where an
unchanged constant's bytes are and copies them file to file (ge.fsutil.ranges.FileRange.copy_to:
os.copy_file_range), hashing them through one reused buffer, so the
weights never pass through Python objects.  A pass that changes a constant makes a new array,
which is written from memory as before.
"""
from __future__ import annotations

import mmap
import os

import numpy as np

from ge.fsutil.ranges import FileRange, file_identity

__all__ = ["FileRange", "map_file", "file_view", "file_range_of"]



class _FileMap(mmap.mmap):
    """A read-only map of a whole file that remembers the file's path and identity."""
    path: str
    identity: tuple


def map_file(path: str) -> np.ndarray:
    """The whole regular file `path` as a read-only uint8 array backed by a map of the file."""
    with open(path, "rb") as f:
        st = os.fstat(f.fileno())
        if st.st_size == 0:
            return np.zeros(0, np.uint8)
        fm = _FileMap(f.fileno(), 0, access=mmap.ACCESS_READ)
    fm.path, fm.identity = os.path.realpath(path), file_identity(st)
    return np.frombuffer(fm, dtype=np.uint8)


def file_view(mapped: np.ndarray, offset: int, length: int, dtype, shape) -> np.ndarray:
    """The constant of `dtype`/`shape` at `offset` of a `map_file` array (no bytes read)."""
    dtype = np.dtype(dtype)
    return mapped[offset:offset + length].view(dtype.newbyteorder("<")) \
        .astype(dtype, copy=False).reshape(shape)


def file_range_of(data) -> FileRange | None:
    """Where the bytes of `data` lie in a mapped file, or None (in memory, or not contiguous)."""
    if not isinstance(data, np.ndarray) or not data.flags.c_contiguous or data.nbytes == 0:
        return None
    root, holder = data, data.base
    while isinstance(holder, np.ndarray):
        root, holder = holder, holder.base
    if not isinstance(holder, memoryview) or not isinstance(holder.obj, _FileMap):
        return None
    start = root.ctypes.data
    offset = data.ctypes.data - start
    if offset < 0 or offset + data.nbytes > len(holder.obj):
        return None
    return FileRange(holder.obj.path, offset, data.nbytes, holder.obj.identity)
