"""Reading input files safely: regular files only, and files read whole within a size limit.

A FIFO blocks open() or read() until a writer comes, a device such as /dev/zero never ends and
a directory cannot be read, so every file the tool reads goes through this module: the path is
checked (stat) before it is opened, opened without blocking and checked again on the opened
descriptor (fstat: no race with a rename), and read up to the size it had, never past a limit.
Failures are OSError, so callers keep their own codes and quote `strerror`.

Limits (docs/interfaces.md, "Files the tool reads"):
  TEXT_LIMIT   files read whole as text: JSON, ini, switch, option and pass source files
  MODEL_LIMIT  model files parsed whole (protobuf cannot hold more than 2 GiB)
Binary inputs read whole otherwise (OM files, external weights) are bounded by their own size
as a regular file; callers that know the size they need pass it as the limit.
"""
from __future__ import annotations

import errno
import os
import stat
from typing import Optional

__all__ = ["TEXT_LIMIT", "MODEL_LIMIT", "NotRegularFile", "os_reason", "check_regular", "check_stat",
           "open_regular", "read_regular", "read_text_regular", "special_kind"]

TEXT_LIMIT = 64 << 20
MODEL_LIMIT = (2 << 30) - 1

_KINDS = {stat.S_IFDIR: "a directory", stat.S_IFIFO: "a FIFO", stat.S_IFCHR: "a character device",
          stat.S_IFBLK: "a block device", stat.S_IFSOCK: "a socket"}


class NotRegularFile(OSError):
    """The path names something other than a regular file (errno EISDIR for a directory)."""


def os_reason(exc: OSError) -> str:
    """The text an error message quotes for a failed file operation."""
    return exc.strerror or str(exc)


def special_kind(mode: int) -> Optional[str]:
    """'a FIFO', 'a character device', ... for a non-regular st_mode; None for a regular file."""
    return None if stat.S_ISREG(mode) else _KINDS.get(stat.S_IFMT(mode), "not a regular file")


def check_stat(st: os.stat_result, path: str, limit: Optional[int] = None) -> None:
    """Refuse what `st` describes unless it is a regular file of at most `limit` bytes."""
    kind = special_kind(st.st_mode)
    if kind is not None:
        code = errno.EISDIR if stat.S_ISDIR(st.st_mode) else errno.EINVAL
        raise NotRegularFile(code, f"it is {kind}, not a regular file", path)
    if limit is not None and st.st_size > limit:
        raise OSError(errno.EFBIG, f"it has {st.st_size} bytes, more than the limit of {limit}",
                      path)


def check_regular(path: str, limit: Optional[int] = None) -> os.stat_result:
    """stat `path` (following links) and refuse a non-regular file or one above `limit`."""
    st = os.stat(path)
    check_stat(st, path, limit)
    return st


def open_regular(path: str, limit: Optional[int] = None):
    """A binary file object for the regular file `path`; never blocks on a FIFO."""
    check_regular(path, limit)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        check_stat(os.fstat(fd), path, limit)      # it may have been swapped since the stat
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: str, limit: Optional[int] = None, offset: int = 0,
                 length: int = -1) -> bytes:
    """The bytes of the regular file `path` (from `offset`, `length` of them or to the end);
    refused above `limit` bytes, and never more than the file had when it was opened."""
    with open_regular(path, limit) as f:
        size = os.fstat(f.fileno()).st_size
        available = max(size - offset, 0)
        f.seek(offset)
        return f.read(available if length < 0 else min(length, available))


def read_text_regular(path: str, limit: int = TEXT_LIMIT, encoding: str = "utf-8",
                      errors: str = "strict") -> str:
    """A text file read whole; bytes that are not `encoding` are an OSError (EILSEQ) naming
    the offset, so every caller's "cannot read the file" error covers them too."""
    data = read_regular(path, limit)
    try:
        return data.decode(encoding, errors)
    except UnicodeDecodeError as exc:
        raise OSError(errno.EILSEQ, f"it is not {encoding.upper()} text (byte "
                      f"0x{data[exc.start]:02x} at offset {exc.start})", path) from None
