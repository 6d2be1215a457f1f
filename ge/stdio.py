"""Standard streams that may be closed, full, or a pipe whose reader went away (docs/atc.md,
"Standard streams").

CANN's atc writes through C++ streams that drop what cannot be written, so a compile's result
never depends on where its messages go.  Ours is the same:
- every command-line entry calls `guard_std_fds()` first: a descriptor 0, 1 or 2 that is closed
  is opened on /dev/null, so no file the tool opens later (an OM, a log, a kernel) can be given
  descriptor 1 or 2 and receive messages; Python's None stream for it becomes a /dev/null one;
- messages (`write`) that cannot be written are dropped, and once a stream has failed its
  descriptor is pointed at /dev/null, so nothing of it is retried and the interpreter's final
  flush cannot fail either (which would change the exit status);
- where the printed text is the product (`--help`, `--mode=6`, the runner's report, cache
  statistics), `write_product` raises EP0006 naming the stream instead: losing it is a failure.
"""
from __future__ import annotations

import errno
import os
import sys

__all__ = ["guard_std_fds", "write", "write_product", "failed", "STREAM_FAILED"]

STREAM_FAILED = "EP0006"
_FDS = {"stdin": 0, "stdout": 1, "stderr": 2}
_closed_at_start: set = set()
_failed: dict = {}              # stream name -> (the stream object that failed, why)


def _fd_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def _to_devnull(fd: int) -> None:
    null = os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC)
    try:
        if null != fd:
            os.dup2(null, fd)           # dup2 clears O_CLOEXEC on the target: it stays open
    finally:
        if null != fd:
            os.close(null)


def guard_std_fds() -> None:
    """Open a closed descriptor 0, 1 or 2 on /dev/null, before anything opens a file."""
    for name, fd in _FDS.items():
        if _fd_open(fd):
            continue
        _closed_at_start.add(name)
        _to_devnull(fd)
        if getattr(sys, name, None) is None:
            mode = "r" if fd == 0 else "w"
            setattr(sys, name, open(fd, mode, closefd=False, errors="surrogateescape"))
        _failed[name] = (getattr(sys, name),
                         os.strerror(errno.EBADF) + " (closed when the program started)")


def failed(name: str) -> str:
    """Why stream `name` cannot take text ("" when it can, as far as we know); a stream object
    put in its place since (a test's capture, a caller's redirection) starts afresh."""
    stream, why = _failed.get(name, (None, ""))
    return why if stream is getattr(sys, name, None) else ""


def _send(name: str, text: str) -> None:
    stream = getattr(sys, name)
    if stream is None:
        raise OSError(errno.EBADF, "the stream is closed")
    data = text.encode("utf-8", "surrogateescape")
    stream.flush()
    buffer = getattr(stream, "buffer", None)
    if buffer is not None:
        buffer.write(data)
        buffer.flush()
    else:
        stream.write(data.decode("utf-8", "replace"))
        stream.flush()


def _give_up(name: str, exc: BaseException) -> None:
    """The stream failed: record why, and send what is still buffered for it to /dev/null."""
    stream = getattr(sys, name, None)
    _failed[name] = (stream, getattr(exc, "strerror", None) or str(exc) or type(exc).__name__)
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return
    if fd == _FDS[name]:
        _to_devnull(fd)
        try:
            stream.flush()
        except (OSError, ValueError):
            pass


def write(name: str, text: str) -> bool:
    """A message on stdout or stderr; dropped (False) when the stream cannot take it."""
    if failed(name):
        return False
    try:
        _send(name, text)
    except (OSError, ValueError) as exc:
        _give_up(name, exc)
        return False
    return True


def write_product(name: str, text: str) -> None:
    """Text that is what the user asked for: EP0006 naming the stream when it cannot be
    written (or the stream was closed when the program started)."""
    from ge.errors import GeError
    if not write(name, text):
        raise GeError(STREAM_FAILED, {"stream": name, "reason": failed(name)})
