"""What the kernel cache is: one rule for every side that reads or removes it (a compile's
lookup, publish and aging, the stale sweep, and `python3 -m ge.compiler.cache`).

Cached kernels are native code that compiles load.  So:
- the cache's own levels (root, `kernel_cache`, SoC directory) must be real directories (not
  symbolic links), owned by us or root, not writable by group or others: else EP0111;
- an entry is recognisably ours only as a real directory `te_<op>_<key>` holding its
  `<name>.json` and `<name>.so` as regular files and nothing else (a damaged entry may lack
  one of them); only such a directory is ever removed, and only those two files in it are
  deleted;
- a temporary (`.<name>.tmp-...`, `.<name>.trash-...`) is removed only under the same rule, for
  the entry it stands for;
- anything else is reported and left alone.  Nothing here follows a symbolic link.
"""
from __future__ import annotations

import errno
import os
import stat

from ge.errors import GeError
from ge.fsutil import os_reason

__all__ = ["UNSAFE_DIR", "BIN_SUFFIX", "untrusted", "dir_problem", "check_dir",
           "entry_problem", "temp_problem", "discard_dir"]

UNSAFE_DIR = "EP0111"
BIN_SUFFIX = ".so"
_OPEN_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def untrusted(st: os.stat_result) -> str:
    """Why a file or directory of the cache must not be trusted, or "".  Root-owned counts as
    ours: root can replace anything anyway."""
    if st.st_uid not in (os.geteuid(), 0):
        return f"owned by uid {st.st_uid}"
    if st.st_mode & 0o022:
        return f"writable by group or others (mode {oct(st.st_mode & 0o777)})"
    return ""


def dir_problem(path: str) -> str:
    """Why `path` cannot be one of the cache's own directories, or "" (OSError when it cannot
    even be looked at)."""
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        return "it is a symbolic link"
    if not stat.S_ISDIR(st.st_mode):
        return "it is not a directory"
    return untrusted(st)


def check_dir(path: str) -> None:
    why = dir_problem(path)
    if why:
        raise GeError(UNSAFE_DIR, {"path": path, "reason": why})


def _own_files(name: str) -> set:
    return {name + ".json", name + BIN_SUFFIX}


def _layout_problem(path: str, name: str) -> str:
    """Why `path` is not a real directory holding nothing but the files of entry `name`, as
    regular files; "" when it is."""
    try:
        if os.path.islink(path):        # O_NOFOLLOW|O_DIRECTORY would just say ENOTDIR
            return "it is a symbolic link"
        fd = os.open(path, _OPEN_DIR)
    except OSError as exc:
        return {errno.ENOTDIR: "it is not a directory"}.get(exc.errno, os_reason(exc))
    try:
        found = set(os.listdir(fd))
        own = _own_files(name)
        if found - own:
            return "it also holds " + ", ".join(sorted(found - own))
        for child in sorted(found):
            if not stat.S_ISREG(os.stat(child, dir_fd=fd, follow_symlinks=False).st_mode):
                return f"{child} is not a regular file"
    except OSError as exc:
        return os_reason(exc)
    finally:
        os.close(fd)
    return ""


def entry_problem(cache_dir: str, name: str) -> str:
    """"" when `<cache_dir>/<name>` is recognisably an entry (its bytes may still be bad)."""
    return _layout_problem(os.path.join(cache_dir, name), name)


def temp_problem(cache_dir: str, temp: str, base: str) -> str:
    """"" when the temporary `temp` standing for entry `base` is one we may remove."""
    return _layout_problem(os.path.join(cache_dir, temp), base)


def discard_dir(path: str, name: str) -> bool:
    """Delete the files of entry `name` in the directory `path`, then the directory; whatever
    else appeared in it stays, and so does the directory.  True when it is gone."""
    try:
        fd = os.open(path, _OPEN_DIR)
    except OSError:
        return False
    try:
        for child in sorted(_own_files(name)):
            try:
                os.unlink(child, dir_fd=fd)
            except OSError:
                pass        # gone already, or a directory planted under that name: left alone
    finally:
        os.close(fd)
    try:
        os.rmdir(path)
    except OSError:
        return False
    return True
