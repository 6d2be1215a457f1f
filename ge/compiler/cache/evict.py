"""Aging of one SoC cache directory (seed 002, spec §3.6 with our LRU clock): when the files
under the directory reach the size limit, remove least-recently-used entries (oldest JSON mtime
first) until what is left is at most `ratio` % of the limit; never an entry used in the last
30 minutes, never what is not recognisably an entry (trust.py); one aging process at a time
(non-blocking fcntl lock; a busy lock means skip).
"""
from __future__ import annotations

import fcntl
import os
import time
from dataclasses import dataclass, field
from typing import Optional

from .store import entry_mtime, entry_size, list_entries, removable, remove_entry, tree_size

__all__ = ["EvictResult", "evict", "used_bytes", "LOCK_NAME", "MIN_IDLE_SECONDS"]

LOCK_NAME = "op_cache_file_del.lock"
MIN_IDLE_SECONDS = 1800
MB = 1024 * 1024


@dataclass
class EvictResult:
    used_before: int = 0
    used_after: int = 0
    removed: list = field(default_factory=list)
    skipped: str = ""            # why nothing was tried: "aging off", "under limit", "locked"


def used_bytes(cache_dir: str) -> int:
    """Bytes used by the cache directory (every regular file, recursive)."""
    return tree_size(cache_dir)


def evict(cache_dir: str, max_mb: int, ratio: int, now: Optional[float] = None,
          dry_run: bool = False) -> EvictResult:
    result = EvictResult(used_before=used_bytes(cache_dir))
    result.used_after = result.used_before
    if max_mb == -1:
        result.skipped = "aging off"
        return result
    limit = max_mb * MB
    if result.used_before < limit:
        result.skipped = "under limit"
        return result
    fd = os.open(os.path.join(cache_dir, LOCK_NAME), os.O_RDWR | os.O_CREAT, 0o640)
    try:
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            result.skipped = "locked"
            return result
        now = time.time() if now is None else now
        to_delete = result.used_before - limit * ratio // 100
        candidates = sorted((entry_mtime(cache_dir, n), n) for n in list_entries(cache_dir))
        deleted = 0
        for mtime, name in candidates:
            if now - mtime < MIN_IDLE_SECONDS or deleted >= to_delete:
                break
            if entry_mtime(cache_dir, name) != mtime:
                continue  # used by someone since we listed it
            size = entry_size(cache_dir, name)
            if removable(cache_dir, name) if dry_run else remove_entry(cache_dir, name):
                deleted += size
                result.removed.append(name)
        result.used_after = result.used_before - deleted
        return result
    finally:
        os.close(fd)   # closing releases the lock
