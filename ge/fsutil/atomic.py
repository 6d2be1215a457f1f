"""Publishing files safely: a temporary name beside the target, then a rename.

Every artefact under a final name (OM, JSON outputs, dumps, reports, cache files) is written
through `publish`, so an interrupted or failed run never leaves a partial file there: on any
exception, Ctrl-C included, the temporary is removed; a killed process leaves it to the next
publish of the same name, which sweeps it (ge.fsutil.temps).

No fsync, as ATC, cp and compilers do: a compile's outputs can be made again, and waiting for
the disk cost more than anything else in writing them (ResNet-50's OM: 0.14 s of a 0.75 s
compile; a 6.7 GB OM: the disk's whole write time).  A power cut soon after a compile may
leave an OM short or zero-filled under its final name; the OM reader refuses it (E10041:
shorter than its header says, or its checksum differs).
The kernel cache keeps its own fsyncs (ge.compiler.cache: entries shared between processes).

What is at the path decides how it is written (`docs/interfaces.md`, "Files under a final name"):
nothing or a regular file is replaced atomically; a symlink is followed and its target replaced
(the link stays); a character device or FIFO (`/dev/stdout`, `/dev/null`, a pipe) is written
through, never replaced, and so is a stream named through /proc (/dev/stdout redirected to a
file); a directory, block device or socket is refused with an OSError.
"""
from __future__ import annotations

import errno
import os
import re
import stat
import sys
from typing import Callable, Optional, Union

from .faults import armed, fault_point
from .reading import special_kind
from .temps import sweep, temp_name

__all__ = ["publish"]


def _write_all(fd: int, view) -> None:
    if hasattr(view, "copy_to"):        # a FileRange: copied file to file
        view.copy_to(fd)
        return
    while view.nbytes:
        view = view[os.write(fd, view):]


def _write_parts(fd: int, parts: list, half_point: str) -> None:
    """Write the buffers in order; with `half_point` armed, stop there at exactly half."""
    half = sum(p.nbytes for p in parts) // 2 if half_point and armed(half_point) else -1
    written = 0
    for part in parts:
        if 0 <= half - written < part.nbytes:
            cut = half - written
            _write_all(fd, part.head(cut) if hasattr(part, "head") else part[:cut])
            fault_point(half_point)
            part = part.tail(cut) if hasattr(part, "tail") else part[cut:]
            written += cut
        _write_all(fd, part)
        written += part.nbytes


_REFUSED = (stat.S_IFDIR, stat.S_IFBLK, stat.S_IFSOCK)
_STREAMS = (stat.S_IFCHR, stat.S_IFIFO)    # written through: nothing to replace


def _proc_link(path: str) -> Optional[int]:
    """None unless `path` resolves through /proc, where /dev/stdout, /dev/fd/1 and
    /proc/self/fd/1 are "magic" links to an open descriptor (a tty, a pipe, or the file a shell
    redirected to); then the descriptor number if it is one of this process's, else -1."""
    own = re.compile(rf"/proc/{os.getpid()}(?:/task/\d+)?/fd/(\d+)")
    p = os.path.abspath(path)
    for _ in range(40):                     # the kernel's own limit on a chain of links
        parent = os.path.realpath(os.path.dirname(p))
        found = own.fullmatch(os.path.join(parent, os.path.basename(p)))
        if found:
            return int(found.group(1))
        if parent.startswith("/proc/"):
            return -1
        if not os.path.islink(p):
            return None
        p = os.path.join(os.path.dirname(p), os.readlink(p))
    return None


def _atomic_target(path: str) -> Union[str, None]:
    """The path to replace atomically (symlinks resolved), or None to write through to `path`.
    A stream named through /proc is written through even when it is a regular file: replacing
    it would leave the writer that holds it (a shell's `> out.txt`) writing to a deleted file."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return os.path.realpath(path)          # a new file, or the target of a dangling link
    kind = stat.S_IFMT(st.st_mode)
    if kind in _REFUSED:
        code = errno.EISDIR if kind == stat.S_IFDIR else errno.EINVAL
        raise OSError(code, f"it is {special_kind(st.st_mode)}, which is never replaced",
                      path)
    if kind in _STREAMS or _proc_link(path) is not None:
        return None
    return os.path.realpath(path)


def _write_through(path: str, parts: list, half_point: str) -> None:
    """Write into the existing stream at `path`. One of our own descriptors (/dev/stdout) is
    written directly, after our buffered output, so the two keep their order in a shared file;
    a FIFO nobody reads is refused (ENXIO) instead of waiting for a reader forever."""
    own = _proc_link(path)
    if own is not None and own >= 0:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
        _write_parts(own, parts, half_point)
        return
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise OSError(errno.ENXIO, "it is a FIFO that no process reads", path) from None
        raise
    try:
        os.set_blocking(fd, True)
        _write_parts(fd, parts, half_point)
    finally:
        os.close(fd)


def _patched(part, patch) -> memoryview:
    offset, data = patch()
    out = bytearray(part)
    out[offset:offset + len(data)] = data
    return memoryview(out)


def publish(path: str, data: Union[bytes, str, list], mode: int = 0o600,
            half_point: str = "", written_point: str = "",
            patch: Optional[Callable[[], tuple]] = None) -> None:
    """Write `data` (bytes, text, or a list of buffers written in order; a buffer may be a
    ge.fsutil.FileRange or another part with `copy_to`) to `path`: atomically for a regular
    file (through symlinks), written through for a character device or FIFO.  `patch()` ->
    (offset, bytes) overwrites bytes of the first buffer once all of them are written: the
    OM's checksum, hashed by another thread while the body is copied.  `half_point` /
    `written_point` name test-only fault points (ge.fsutil.faults): half of the bytes written,
    and all of them written but not yet renamed."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    parts = [p if hasattr(p, "copy_to") else memoryview(p).cast("B")
             for p in (data if isinstance(data, list) else [data])]
    target = _atomic_target(path)
    if target is None:
        if patch is not None:          # a stream cannot be rewritten: patch before writing
            parts[0] = _patched(parts[0], patch)
        _write_through(path, parts, half_point)
        return
    directory, base = os.path.split(target)
    sweep(directory, base)
    tmp = temp_name(target)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        try:
            _write_parts(fd, parts, half_point)
            if patch is not None:   # computed meanwhile (the OM's checksum)
                offset, data = patch()
                os.pwrite(fd, data, offset)
        finally:
            os.close(fd)
        if written_point:
            fault_point(written_point)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
