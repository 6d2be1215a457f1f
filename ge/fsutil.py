"""Publishing files safely: a temporary name beside the target, fsync, rename.

Every artefact under a final name (OM, JSON outputs, dumps, reports, cache files) is written
through `publish`, so an interrupted or failed run never leaves a partial file there.
Temporaries are named `.<name>.tmp-<host>-<pid>-<rand>`; `clean_stale_temporaries` removes
those of dead processes of this host (or any older than an hour).
"""
from __future__ import annotations

import os
import secrets
import socket
import time
from typing import Callable, Optional, Union

STALE_SECONDS = 3600


def host_tag() -> str:
    """This host's name, reduced to [A-Za-z0-9_], for names of per-process temporaries."""
    return "".join(c if c.isalnum() else "_" for c in socket.gethostname())[:32] or "host"


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def owner_is_dead(host: str, pid: str) -> bool:
    """A temporary named after (host, pid) belongs to a process of this host that is gone."""
    return host == host_tag() and pid.isdigit() and not pid_alive(int(pid))


def temp_name(path: str) -> str:
    directory, base = os.path.split(os.path.abspath(path))
    return os.path.join(directory,
                        f".{base}.tmp-{host_tag()}-{os.getpid()}-{secrets.token_hex(4)}")


def clean_stale_temporaries(path: str, now: Optional[float] = None) -> list:
    """Remove temporaries of `path` left by dead processes of this host; returns their names."""
    directory, base = os.path.split(os.path.abspath(path))
    prefix = f".{base}.tmp-"
    now = time.time() if now is None else now
    removed = []
    try:
        entries = sorted(os.listdir(directory))
    except FileNotFoundError:
        return removed
    for entry in entries:
        if not entry.startswith(prefix):
            continue
        parts = entry[len(prefix):].split("-")
        temp = os.path.join(directory, entry)
        try:
            age = now - os.lstat(temp).st_mtime
        except FileNotFoundError:
            continue
        dead = len(parts) == 3 and owner_is_dead(parts[0], parts[1])
        if dead or age > STALE_SECONDS:
            try:
                os.unlink(temp)
                removed.append(entry)
            except FileNotFoundError:
                pass
    return removed


def _write_all(fd: int, view: memoryview) -> None:
    while view.nbytes:
        view = view[os.write(fd, view):]


def publish(path: str, data: Union[bytes, str, list], mode: int = 0o600,
            on_half: Optional[Callable[[], None]] = None,
            before_rename: Optional[Callable[[], None]] = None) -> None:
    """Write `data` (bytes, text, or a list of buffers written in order) to `path` atomically.
    `on_half` / `before_rename` are fault-injection points for tests (called once about half
    the bytes are written, and after fsync)."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    parts = [memoryview(p).cast("B") for p in (data if isinstance(data, list) else [data])]
    total = sum(p.nbytes for p in parts)
    clean_stale_temporaries(path)
    tmp = temp_name(path)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        try:
            written, half_done = 0, on_half is None
            for part in parts:
                if not half_done and written + part.nbytes >= total // 2:
                    cut = total // 2 - written        # stop at exactly half the file
                    _write_all(fd, part[:cut])
                    on_half()
                    half_done = True
                    part = part[cut:]
                    written += cut
                _write_all(fd, part)
                written += part.nbytes
            os.fsync(fd)
        finally:
            os.close(fd)
        if before_rename is not None:
            before_rename()
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
