"""The operator-compile disk cache (seed 002, spec/compile-options.md §3-5, docs/cache.md).

`KernelCache.open(settings)` prepares `<root>/kernel_cache/<soc>` (created 0750; a level that
is a symbolic link, foreign-owned or writable by group or others is refused: trust.py), writes a default `op_cache.ini` when none exists,
removes temporaries of dead processes and ages the directory once.  `get(name)` returns verified
bytes or None (a corrupt entry is reported with a W-code, removed and counted); `put()` publishes
all or nothing.  A file-system fault (full, read-only, not a directory) is a WP0113 warning and
the compile goes on without the cache.  Remote stores (remote.py) sit behind it: a local miss
is read through from them and published here, a new entry is written back to them.  The cache knows no ops: names and metadata come from
ge.compiler.opcompile.

Submodules, ccache style: settings (what the user asked for), key (what identifies a binary),
store (lookup / publish / remove), evict (aging), trust (what may be used or removed, for
compiles and maintenance alike), remote (shared stores: remote_entry, remote_redis,
remote_http, remote_cli); temporaries and the test-only fault points
of publish are ge.fsutil's.
"""
from __future__ import annotations

import errno
import logging
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Optional

from ge.errors import GeError, warn
from ge.fsutil import os_reason, sweep, temp_name
from . import settings as _settings
from .evict import evict
from .key import kernel_key, kernel_name, key_material
from .remote import RemoteCache
from .settings import CacheSettings, resolve
from .store import clean_stale, lookup, publish, removable, remove_entry
from .trust import check_dir

__all__ = ["KernelCache", "CacheStats", "CacheSettings", "resolve", "kernel_key", "kernel_name",
           "key_material"]

log = logging.getLogger(__name__)
WARN_CORRUPT = "WP0112"
WARN_FAULT = "WP0113"
PUBLISH_THREADS = 8             # remote hits published here at once: their fsyncs overlap


@dataclass
class CacheStats:
    hits: int = 0
    misses: int = 0
    compiles: int = 0
    evictions: int = 0
    corrupt: int = 0
    published: int = 0
    bypassed: int = 0
    stale_cleaned: int = 0
    remote_hits: int = 0            # remote.RemoteCache's counts (docs/cache.md "Statistics")
    remote_misses: int = 0
    remote_errors: int = 0
    remote_refused: int = 0
    remote_published: int = 0
    remote_bytes_read: int = 0
    remote_bytes_written: int = 0
    remote_seconds: float = 0.0
    remote: str = ""                # the stores in use, passwords masked
    evicted_names: list = field(default_factory=list)

    def as_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "evicted_names"}


def _write_default_ini(path: str) -> None:
    tmp = temp_name(path)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o640)
    try:
        os.write(fd, _settings.INI_TEMPLATE.encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(tmp, path)          # never overwrite a file someone created meanwhile
    except FileExistsError:
        pass
    finally:
        os.unlink(tmp)


def _make_dir(path: str) -> None:
    # each level ourselves: makedirs gives intermediate levels the umask's mode
    if os.path.islink(path):
        return                  # refused by check_dir, whatever it points to
    if os.path.lexists(path) and not os.path.isdir(path):
        raise NotADirectoryError(errno.ENOTDIR, "it is not a directory", path)
    os.makedirs(path, mode=0o750, exist_ok=True)


class KernelCache:
    """A handle on one SoC cache directory for one compile.

    The cache is an optimisation: a fault of the file system under it (full, read-only, not a
    directory, unreadable) never fails a compile.  The first fault of a compile is warned
    (WP0113) and logged; the compile goes on without the part that failed: no cache at all when
    its directories cannot be made, no new entries once a publish failed.  Only an insecure
    directory (EP0111) is an error: it is what the user configured, and it is unsafe."""

    def __init__(self, settings: CacheSettings):
        self.settings = settings
        self.dir = settings.cache_dir
        self.stats = CacheStats()
        self.writable = True
        self.faulted = False
        self.remote: Optional[RemoteCache] = None
        self._publisher: Optional[ThreadPoolExecutor] = None
        self._lock = threading.Lock()

    def _fault(self, exc: OSError, fallback: str, where: str = "") -> None:
        where = where or exc.filename or self.dir
        log.info("kernel cache fault at %s: %s", where, exc)
        if not self.faulted:
            self.faulted = True
            warn(WARN_FAULT, {"path": where, "reason": os_reason(exc), "fallback": fallback})

    @classmethod
    def open(cls, settings: CacheSettings, age: bool = True) -> Optional["KernelCache"]:
        """The cache of this compile, or None (warned) when its directories cannot be used."""
        cache = cls(settings)
        kernel_cache = os.path.dirname(settings.cache_dir)
        for path in (settings.root, kernel_cache, settings.cache_dir):
            try:
                _make_dir(path)
                check_dir(path)                 # EP0111 is a GeError: it is not caught here
            except OSError as exc:
                cache._fault(exc, "every kernel is compiled without the cache")
                return None
        try:
            cache._housekeeping(age)
        except OSError as exc:
            cache._fault(exc, "the cache is used but not cleaned or aged in this compile")
        if settings.remote:
            cache.remote = RemoteCache.open(settings.remote, settings.remote_source, cache.stats)
        return cache

    def close(self) -> None:
        """Wait for the local publishes of remote hits; close the stores' connections."""
        if self._publisher is not None:
            self._publisher.shutdown(wait=True)
            self._publisher = None
        if self.remote is not None:
            self.remote.close()

    def _housekeeping(self, age: bool) -> None:
        """The default op_cache.ini, temporaries of dead processes, aging."""
        settings = self.settings
        sweep(os.path.dirname(settings.ini_path), os.path.basename(settings.ini_path))
        if not os.path.lexists(settings.ini_path):
            _write_default_ini(settings.ini_path)
        self.stats.stale_cleaned = len(clean_stale(settings.cache_dir)[0])
        if age:
            result = evict(settings.cache_dir, settings.max_mb, settings.ratio)
            self.stats.evictions += len(result.removed)
            self.stats.evicted_names += result.removed
            if result.removed:
                log.info("kernel cache aging removed %d entries (%d -> %d bytes)",
                         len(result.removed), result.used_before, result.used_after)

    def get(self, name: str):
        """Verified (binary, meta) of a local hit, else of a remote one (then published here),
        or None.  A corrupt entry is warned and removed; something under the name that is not
        an entry is warned and left alone, and this compile does not publish over it (nor
        reads the remote stores for it)."""
        found = lookup(self.dir, name, refresh=self.settings.aging)
        if found.status == "hit":
            self.stats.hits += 1
            return found.binary, found.meta
        self.stats.misses += 1
        if found.status == "corrupt" and not self._corrupt(name, found):
            return None
        fetched = self.remote.get(name) if self.remote is not None else None
        if fetched is not None:
            self._publish_soon(name, *fetched)
        return fetched

    def own(self, name: str):
        """Verified (binary, meta) of a local entry that is not a kernel (the operator
        compiler's support object, a template), or None: no hit or miss counted, never read
        from the remote stores; a corrupt one is warned, counted and removed like a kernel's."""
        found = lookup(self.dir, name, refresh=self.settings.aging)
        if found.status == "corrupt":
            self._corrupt(name, found)
        return (found.binary, found.meta) if found.status == "hit" else None

    def keep(self, name: str, binary: bytes, meta: dict, replace: bool = False) -> str:
        """Publish an entry that is not a kernel here only (see own)."""
        return self._publish(name, binary, meta, replace, counted=False)

    def _corrupt(self, name: str, found) -> bool:
        """Warn of a corrupt entry and remove it (True), or leave it alone when it is not an
        entry of ours (False: nothing is published over it)."""
        self.stats.corrupt += 1
        entry = os.path.join(self.dir, name)
        if removable(self.dir, name):
            warn(WARN_CORRUPT, {"entry": entry, "reason": found.reason,
                                "fallback": "it is recompiled and replaced"})
            remove_entry(self.dir, name, found.inode)
            return True
        warn(WARN_CORRUPT, {"entry": entry, "reason": found.reason,
                            "fallback": "it is not an entry of ours, so it is left alone and "
                                        "the kernel is compiled without the cache"})
        return False

    def _publish_soon(self, name: str, binary: bytes, meta: dict) -> None:
        """Publish a remote hit here in the background (done by close()): its bytes are
        verified and already in use, and publishes in threads overlap their fsyncs (ResNet-50's
        44 entries: 0.7 s one after the other, 0.08 s in 8 threads)."""
        if self._publisher is None:
            self._publisher = ThreadPoolExecutor(PUBLISH_THREADS,
                                                 thread_name_prefix="kernel-cache-publish")
        self._publisher.submit(self._publish, name, binary, meta)

    def put(self, name: str, binary: bytes, meta: dict, replace: bool = False) -> str:
        """Publish here (see _publish) and write back to the remote stores."""
        status = self._publish(name, binary, meta, replace)
        if self.remote is not None:
            self.remote.put(name, binary, meta)
        return status

    def _publish(self, name: str, binary: bytes, meta: dict, replace: bool = False,
                 counted: bool = True) -> str:
        """"published", "replaced", "exists", "foreign" (something else has the name), or
        "skipped" once a publish of this compile failed (the kernel is used all the same)."""
        if not self.writable:
            return "skipped"
        try:
            status = publish(self.dir, name, binary, meta, replace=replace)
        except OSError as exc:
            with self._lock:
                self.writable = False
                # the directory, not the temporary name the publish failed on
                self._fault(exc, "new kernels are not added to it in this compile", self.dir)
            return "skipped"
        if counted and status not in ("exists", "foreign"):
            with self._lock:
                self.stats.published += 1
        return status
