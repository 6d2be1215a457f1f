"""Temporary names: the one format of every file or directory that stands in for a final name.

    .<base>.<kind>-<host>-<pid>-<rand>

`base` is the final name it stands for (an OM, a JSON, a cache entry, `ge_kernel` for a C
compiler work directory), `kind` is `tmp` (being written) or `trash` (being removed), `host` and
`pid` name the owner, `rand` keeps two temporaries of one process apart.  The leading dot keeps
temporaries out of listings of final names (cache entries, `ls`).  `sweep` removes those whose
owner is a dead process of this host, or that are older than STALE_SECONDS (a crashed process of
another host sharing the directory).  Nothing here knows what the files contain.
"""
from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import time
from dataclasses import dataclass
from typing import Iterator, Optional

__all__ = ["STALE_SECONDS", "KINDS", "TempName", "host_tag", "pid_alive", "owner_is_dead",
           "temp_name", "parse_temp_name", "stale_temporaries", "sweep", "temp_dir", "make_dirs"]

STALE_SECONDS = 3600
KINDS = ("tmp", "trash")
_PATTERN = re.compile(r"\.(?P<base>.+)\.(?P<kind>tmp|trash)-(?P<host>[^-]+)-(?P<pid>[0-9]+)"
                      r"-(?P<rand>[0-9a-f]+)")


@dataclass(frozen=True)
class TempName:
    base: str
    kind: str
    host: str
    pid: int
    rand: str


def host_tag() -> str:
    """This host's name, reduced to [A-Za-z0-9_], for names of per-process temporaries."""
    # os.uname() rather than socket.gethostname(): the same name, without importing socket
    return "".join(c if c.isalnum() else "_" for c in os.uname().nodename)[:32] or "host"


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def owner_is_dead(host: str, pid: int) -> bool:
    """A temporary named after (host, pid) belongs to a process of this host that is gone."""
    return host == host_tag() and not pid_alive(int(pid))


def temp_name(path: str, kind: str = "tmp") -> str:
    """A fresh temporary name beside `path` (same directory, so a rename is atomic)."""
    assert kind in KINDS, kind
    directory, base = os.path.split(os.path.abspath(path))
    return os.path.join(directory,
                        f".{base}.{kind}-{host_tag()}-{os.getpid()}-{os.urandom(4).hex()}")


def parse_temp_name(name: str) -> Optional[TempName]:
    """The parts of a temporary's file name, or None for any other name."""
    m = _PATTERN.fullmatch(name)
    if m is None:
        return None
    return TempName(m["base"], m["kind"], m["host"], int(m["pid"]), m["rand"])


def _remove(path: str) -> bool:
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.unlink(path)
    except FileNotFoundError:
        return False
    return True


def stale_temporaries(directory: str, base: Optional[str] = None,
                      now: Optional[float] = None) -> list:
    """The names of the stale temporaries in `directory` (of final name `base` only, when
    given): owner dead on this host, or older than STALE_SECONDS; sorted."""
    now = time.time() if now is None else now
    try:
        names = sorted(os.listdir(directory))
    except (FileNotFoundError, NotADirectoryError):
        return []
    stale = []
    for name in names:
        temp = parse_temp_name(name)
        if temp is None or (base is not None and temp.base != base):
            continue
        try:
            age = now - os.lstat(os.path.join(directory, name)).st_mtime
        except FileNotFoundError:
            continue
        if owner_is_dead(temp.host, temp.pid) or age > STALE_SECONDS:
            stale.append(name)
    return stale


def sweep(directory: str, base: Optional[str] = None, now: Optional[float] = None) -> list:
    """Remove the stale temporaries in `directory` (of final name `base` only, when given);
    returns the removed names, sorted."""
    return [name for name in stale_temporaries(directory, base, now)
            if _remove(os.path.join(directory, name))]


@contextlib.contextmanager
def temp_dir(path: str, mode: int = 0o700) -> Iterator[str]:
    """A private directory under a temporary name of `path`, removed with its contents on exit
    (a killed process leaves it to the next `sweep`)."""
    work = temp_name(path)
    os.mkdir(work, mode)
    try:
        yield work
    finally:
        shutil.rmtree(work, ignore_errors=True)


def make_dirs(path: str, mode: int = 0o777) -> None:
    """os.makedirs(path, exist_ok=True) without its recursion: a path of thousands of levels
    (within PATH_MAX) is made, or fails with an OSError, never a RecursionError."""
    missing = []
    head = os.path.abspath(path)
    while not os.path.isdir(head):
        if os.path.lexists(head):           # a file where a directory must be: as makedirs
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), path)
        missing.append(head)
        parent = os.path.dirname(head)
        if parent == head:
            break
        head = parent
    for directory in reversed(missing):
        try:
            os.mkdir(directory, mode)
        except FileExistsError:
            if not os.path.isdir(directory):
                raise
