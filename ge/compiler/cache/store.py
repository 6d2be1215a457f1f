"""Cache entries on disk: lookup (validate, refresh the LRU clock) and publish (all or nothing).

Layout of one SoC directory (`<root>/kernel_cache/<soc>/`):

    <name>/                       one entry = one directory, <name> = te_<optype>_<sha256>
        <name>.so                 the kernel binary (host shared object)
        <name>.json               metadata; `sha256` of the binary is verified on every hit
    .<name>.tmp-<host>-<pid>-<rand>/    an entry being written (never read)
    .<name>.trash-<host>-<pid>-<rand>/  an entry being removed (never read)
    op_cache_file_del.lock        the aging lock (evict.py)

Publish writes both files into a fresh temp directory and commits with one rename() of the
directory, so an entry is either complete or absent; `replace` (force mode) first renames the
old entry aside, then renames the new one in, and deletes the old one: a reader holding the old
directory open keeps a consistent view.  Lookup reads both files through one directory file
descriptor (a consistent snapshot even if the entry is replaced meanwhile) and returns the bytes;
nothing is ever loaded from the cache path itself.  Temporary names, their sweep and the
test-only fault points of publish are ge.fsutil's; what may be trusted, removed or swept is
ge.compiler.cache.trust's (the same rule for compiles and for maintenance).
"""
from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import stat
from dataclasses import dataclass
from typing import Optional

from ge.fsutil import (check_stat, fault_point, os_reason, parse_temp_name, stale_temporaries,
                       temp_name)
from .key import ENTRY_NAME
from .trust import BIN_SUFFIX, discard_dir, entry_problem, temp_problem, untrusted

__all__ = ["Lookup", "lookup", "publish", "remove_entry", "removable", "clean_stale",
           "list_entries", "entry_size", "entry_mtime", "entry_meta", "check_entry", "BIN_SUFFIX",
           "META_LIMIT", "BINARY_LIMIT"]

FILE_MODE = 0o640
DIR_MODE = 0o750
META_LIMIT = 1 << 20            # an entry's JSON is a few KiB
BINARY_LIMIT = 256 << 20        # a kernel is KiBs; anything bigger is not ours


@dataclass(frozen=True)
class Lookup:
    status: str                   # "hit" | "miss" | "corrupt"
    binary: bytes = b""
    meta: Optional[dict] = None
    reason: str = ""
    inode: int = 0                # of the entry directory judged corrupt (for remove_entry)


class _Refused(Exception):
    """An entry that must not be used; the message says why."""


def _read_at(dir_fd: int, name: str, limit: int, size: Optional[int] = None) -> bytes:
    """An entry file's bytes; a FIFO or device planted in an entry is refused, never waited on,
    and so is a file above `limit` or of another `size` than the JSON records (never read)."""
    fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    try:
        st = os.fstat(fd)
        check_stat(st, name, limit)
        why = untrusted(st)
        if why:
            raise _Refused(f"{name} is {why}")
        if size is not None and st.st_size != size:
            raise _Refused(f"binary is {st.st_size} bytes, JSON records {size}")
        os.set_blocking(fd, True)
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
    finally:
        os.close(fd)


def _same_entry(path: str, inode: int) -> bool:
    try:
        return os.lstat(path).st_ino == inode
    except FileNotFoundError:
        return False


def _unusable(path: str, exc: OSError) -> Lookup:
    """An entry name that is there but cannot be opened as an entry directory."""
    reason = ("a symbolic link" if os.path.islink(path) else    # O_NOFOLLOW says ENOTDIR
              {errno.ENOTDIR: "not a directory"}.get(exc.errno, os_reason(exc)))
    try:
        inode = os.lstat(path).st_ino
    except OSError:
        inode = -1              # cannot even be looked at: nothing to remove
    return Lookup("corrupt", reason=reason, inode=inode)


def lookup(cache_dir: str, name: str, refresh: bool = True) -> Lookup:
    """Never raises for what is on disk: an entry is a hit, a miss, or corrupt (with why)."""
    path = os.path.join(cache_dir, name)
    try:
        dir_fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return Lookup("miss", reason="no entry")
    except OSError as exc:
        return _unusable(path, exc)
    try:
        st = os.fstat(dir_fd)
        inode = st.st_ino
        try:
            why = untrusted(st)
            if why:
                raise _Refused(f"the entry directory is {why}")
            meta = json.loads(_read_at(dir_fd, name + ".json", META_LIMIT).decode("utf-8"))
            size = meta.get("size") if isinstance(meta, dict) else None
            binary = _read_at(dir_fd, name + BIN_SUFFIX, BINARY_LIMIT,
                              size if isinstance(size, int) else None)
        except FileNotFoundError as exc:
            if not _same_entry(path, inode):
                return Lookup("miss", reason="entry replaced or removed while reading")
            return Lookup("corrupt", reason=f"missing file {exc.filename}", inode=inode)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            return Lookup("corrupt", reason=f"unreadable JSON ({exc})", inode=inode)
        except _Refused as exc:
            return Lookup("corrupt", reason=str(exc), inode=inode)
        except OSError as exc:      # not a regular file, too big, unreadable, I/O error
            return Lookup("corrupt", reason=f"{exc.filename}: {exc.strerror}", inode=inode)
        reason = check_entry(meta, name, binary)
        if reason:
            return Lookup("corrupt", reason=reason, inode=inode)
        if refresh:
            try:
                os.utime(name + ".json", dir_fd=dir_fd)
            except OSError:
                pass  # the entry was replaced or evicted meanwhile: our bytes are still valid
        return Lookup("hit", binary, meta)
    finally:
        os.close(dir_fd)


def check_entry(meta, name: str, binary: bytes) -> str:
    """Why `meta` and `binary` are not entry `name` ("" when they are): the check of every hit,
    local or remote."""
    if not isinstance(meta, dict):
        return "JSON is not an object"
    if meta.get("binFileName") != name or meta.get("binFileSuffix") != BIN_SUFFIX:
        return "JSON names another binary"
    if meta.get("size") != len(binary):
        return f"binary is {len(binary)} bytes, JSON records {meta.get('size')}"
    actual = hashlib.sha256(binary).hexdigest()
    if meta.get("sha256") != actual:
        return f"sha256 of the binary is {actual}, JSON records {meta.get('sha256')}"
    return ""


def entry_meta(name: str, binary: bytes, meta: dict) -> dict:
    """The JSON of entry `name`: the kernel's metadata, the names and the binary's size and
    sha256 (what check_entry verifies)."""
    return dict(meta, kernelName=name, binFileName=name, binFileSuffix=BIN_SUFFIX,
                size=len(binary), sha256=hashlib.sha256(binary).hexdigest())


def _write_file(dir_path: str, name: str, data: bytes, step_partial: str) -> None:
    fd = os.open(os.path.join(dir_path, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    try:
        half = len(data) // 2
        os.write(fd, data[:half])
        fault_point(step_partial)
        view = memoryview(data)[half:]
        while view:
            n = os.write(fd, view)
            view = view[n:]
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(path: str) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def publish(cache_dir: str, name: str, binary: bytes, meta: dict, replace: bool = False) -> str:
    """Commit one entry; returns "published", "replaced", "exists" (another process won) or
    "foreign" (something that is not an entry has the name: it is left alone, nothing is
    committed)."""
    meta = entry_meta(name, binary, meta)
    tmp = temp_name(os.path.join(cache_dir, name))
    os.mkdir(tmp, DIR_MODE)
    fault_point("cache.tmpdir_created")
    try:
        _write_file(tmp, name + BIN_SUFFIX, binary, "cache.binary_partial")
        fault_point("cache.binary_written")
        text = json.dumps(meta, sort_keys=True, indent=1).encode("utf-8") + b"\n"
        _write_file(tmp, name + ".json", text, "cache.json_partial")
        _fsync_dir(tmp)
        fault_point("cache.before_commit")
        final = os.path.join(cache_dir, name)
        status = "published"
        if os.path.lexists(final) and entry_problem(cache_dir, name):
            return "foreign"
        if replace and os.path.lexists(final):
            trash = temp_name(final, "trash")
            try:
                os.rename(final, trash)
                status = "replaced"
                fault_point("cache.old_moved_aside")
            except FileNotFoundError:
                trash = ""
        else:
            trash = ""
        try:
            os.rename(tmp, final)
        except OSError as exc:
            if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR):
                raise
            status = "exists" if status == "published" else status
        if trash:
            discard_dir(trash, name)
        _fsync_dir(cache_dir)
        fault_point("cache.after_commit")
        return status
    finally:
        if os.path.isdir(tmp):
            shutil.rmtree(tmp, ignore_errors=True)


def removable(cache_dir: str, name: str) -> bool:
    """Only what is recognisably an entry is ever removed (ge.compiler.cache.trust)."""
    return not entry_problem(cache_dir, name)


def remove_entry(cache_dir: str, name: str, inode: int = 0) -> bool:
    """Rename the entry aside (readers keep their snapshot), then delete its two files and the
    directory.  With `inode`, only the very directory that was judged (not a fresh
    replacement) is removed; what is not recognisably an entry is never removed."""
    final = os.path.join(cache_dir, name)
    if inode and not _same_entry(final, inode):
        return False
    if not removable(cache_dir, name):
        return False
    trash = temp_name(final, "trash")
    try:
        os.rename(final, trash)
    except OSError:             # gone already, or not ours to remove (a read-only cache)
        return False
    discard_dir(trash, name)
    return True


def clean_stale(cache_dir: str, now: Optional[float] = None, dry_run: bool = False) -> tuple:
    """Temporaries of dead processes (or older than an hour): returns (removed, left) where
    `left` pairs each stale name that is not an entry's temporary with why; those stay."""
    removed, left = [], []
    for name in stale_temporaries(cache_dir, now=now):
        base = parse_temp_name(name).base
        why = temp_problem(cache_dir, name, base)
        if why:
            left.append((name, why))
        elif dry_run or discard_dir(os.path.join(cache_dir, name), base):
            removed.append(name)
    return removed, left


def list_entries(cache_dir: str) -> list:
    """Every name of an entry, whatever is there under it (a planted file is an entry to judge);
    the aging lock, op_cache.ini, temporaries and foreign names are not entries."""
    try:
        names = os.listdir(cache_dir)
    except FileNotFoundError:
        return []
    return sorted(n for n in names if ENTRY_NAME.fullmatch(n))


def entry_size(cache_dir: str, name: str) -> int:
    return tree_size(os.path.join(cache_dir, name))


def tree_size(path: str) -> int:
    """Sum of the sizes of every regular file under `path` (recursive)."""
    try:
        st = os.lstat(path)
    except OSError:
        return 0
    if not stat.S_ISDIR(st.st_mode):
        return st.st_size
    total = 0
    for dirpath, _dirs, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(dirpath, f)).st_size
            except FileNotFoundError:
                pass
    return total


def entry_mtime(cache_dir: str, name: str) -> float:
    """The LRU clock: mtime of the entry's JSON (the directory's if the JSON is gone)."""
    path = os.path.join(cache_dir, name)
    try:
        if os.path.islink(path):            # never looked through (trust.py)
            return os.lstat(path).st_mtime
        return os.stat(os.path.join(path, name + ".json"), follow_symlinks=False).st_mtime
    except OSError:
        try:
            return os.lstat(path).st_mtime
        except OSError:
            return 0.0
