"""Entry points and versions of installed distributions, without importlib.metadata's cost
when there is nothing to find.

A compile asks three times (pass plugins, custom operator packages, the BLAS wheel's version);
importlib.metadata takes ~25 ms to import and ~7 ms per scan of every installed distribution,
and usually finds no plugin at all.  Here the metadata directories of the entries of sys.path
are listed (as importlib.metadata's path finder does) and each `entry_points.txt` is searched
for the group's name: only when one names it is importlib.metadata asked, so what is loaded,
and in which order, is always its answer.  Where this listing cannot see everything (a zip
file on sys.path, another finder that lists distributions), it is asked too.
"""
from __future__ import annotations

import os
import re
import sys
from typing import Optional

__all__ = ["entry_points", "version_beside"]

_METADATA_SUFFIXES = (".dist-info", ".egg-info")


def _metadata_dirs() -> Optional[list]:
    """The metadata directories of sys.path, or None when some distribution could lie where
    a listing does not see it."""
    import importlib.machinery
    if any(hasattr(finder, "find_distributions")
           and finder is not importlib.machinery.PathFinder for finder in sys.meta_path):
        return None
    found = []
    for entry in sys.path:
        entry = entry or "."
        try:
            children = os.listdir(entry)
        except NotADirectoryError:
            return None                 # a zip archive
        except OSError:
            continue                    # missing or unreadable: importlib.metadata skips it
        names = [c for c in children if c.lower().endswith(_METADATA_SUFFIXES)]
        if entry.lower().endswith(".egg"):
            names += [c for c in children if c.lower() == "egg-info"]
        found += [os.path.join(entry, c) for c in sorted(names)]
    return found


def _may_declare(group: str) -> bool:
    dirs = _metadata_dirs()
    if dirs is None:
        return True
    for directory in dirs:
        try:
            with open(os.path.join(directory, "entry_points.txt"), encoding="utf-8",
                      errors="replace") as f:
                if group in f.read():
                    return True
        except OSError:
            continue
    return False


def entry_points(group: str) -> list:
    """importlib.metadata's entry points of `group` (in its order), [] without importing it
    when no installed distribution mentions the group."""
    if not _may_declare(group):
        return []
    from importlib.metadata import entry_points as all_entry_points
    eps = all_entry_points()
    return list(eps.select(group=group) if hasattr(eps, "select") else eps.get(group, []))


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def version_beside(package_dir: str, distribution: str) -> Optional[str]:
    """The version of `distribution` whose package lies at `package_dir`, read from the
    `.dist-info` beside it (the wheel's own metadata); importlib.metadata's answer when there
    is none there; None when neither knows it."""
    parent = os.path.dirname(os.path.abspath(package_dir))
    wanted = _normalized(distribution)
    try:
        children = sorted(os.listdir(parent))
    except OSError:
        children = []
    for child in children:
        stem, dot, suffix = child.rpartition(".")
        if dot and suffix.lower() == "dist-info" and \
                _normalized(stem.partition("-")[0]) == wanted:
            version = _metadata_version(os.path.join(parent, child, "METADATA"))
            if version:
                return version
    from importlib.metadata import PackageNotFoundError, version as installed_version
    try:
        return installed_version(distribution)
    except PackageNotFoundError:
        return None


def _metadata_version(path: str) -> str:
    """The `Version:` field of a METADATA file's header ("" when absent or unreadable)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if not line.strip():
                    break               # the header ends at the first empty line
                key, sep, value = line.partition(":")
                if sep and key.strip().lower() == "version":
                    return value.strip()
    except OSError:
        pass
    return ""
