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
test-only fault points of publish are ge.fsutil's.
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

from ge.fsutil import check_stat, fault_point, os_reason, sweep, temp_name
from .key import ENTRY_NAME

__all__ = ["Lookup", "lookup", "publish", "remove_entry", "clean_stale", "list_entries",
           "entry_size", "entry_mtime", "entry_meta", "check_entry", "BIN_SUFFIX", "META_LIMIT",
           "BINARY_LIMIT"]

BIN_SUFFIX = ".so"
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


def _untrusted(st: os.stat_result) -> str:
    """Cached kernels are native code: only an entry we (or root) own, that group and others
    cannot write, is used.  Root-owned counts as ours: root can replace anything anyway."""
    if st.st_uid not in (os.geteuid(), 0):
        return f"owned by uid {st.st_uid}"
    if st.st_mode & 0o022:
        return f"writable by group or others (mode {oct(st.st_mode & 0o777)})"
    return ""


def _read_at(dir_fd: int, name: str, limit: int, size: Optional[int] = None) -> bytes:
    """An entry file's bytes; a FIFO or device planted in an entry is refused, never waited on,
    and so is a file above `limit` or of another `size` than the JSON records (never read)."""
    fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    try:
        st = os.fstat(fd)
        check_stat(st, name, limit)
        why = _untrusted(st)
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
    reason = {errno.ENOTDIR: "not a directory",
              errno.ELOOP: "a symbolic link"}.get(exc.errno, os_reason(exc))
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
            why = _untrusted(st)
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
    """Commit one entry; returns "published", "replaced" or "exists" (another process won)."""
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
        if replace and os.path.lexists(final):     # a file planted there is replaced too
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
            if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                raise
            status = "exists" if status == "published" else status
        if trash:
            _discard(trash)
        _fsync_dir(cache_dir)
        fault_point("cache.after_commit")
        return status
    finally:
        if os.path.isdir(tmp):
            shutil.rmtree(tmp, ignore_errors=True)


def remove_entry(cache_dir: str, name: str, inode: int = 0) -> bool:
    """Rename the entry aside (readers keep their snapshot), then delete it.  With `inode`, only
    the very directory that was judged (not a fresh replacement) is removed."""
    final = os.path.join(cache_dir, name)
    if inode and not _same_entry(final, inode):
        return False
    trash = temp_name(final, "trash")
    try:
        os.rename(final, trash)
    except OSError:             # gone already, or not ours to remove (a read-only cache)
        return False
    _discard(trash)
    return True


def _discard(path: str) -> None:
    """Delete what was renamed aside: an entry directory, or whatever was planted in its place."""
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        try:
            os.unlink(path)
        except OSError:
            pass                # left to the stale sweep (it is under a trash name)


def clean_stale(cache_dir: str, now: Optional[float] = None) -> list:
    """Remove temp/trash directories left by dead processes (or older than an hour)."""
    return sweep(cache_dir, now=now)


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
        return os.stat(os.path.join(path, name + ".json")).st_mtime
    except OSError:
        try:
            return os.lstat(path).st_mtime
        except OSError:
            return 0.0
