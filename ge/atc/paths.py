"""Path rules shared by many flags (spec/atc-cli.md §7.5).

Input paths: not empty (E10004), resolvable (E10001 `[Errno n] ...`), only allowed characters in
the resolved path, a regular file (no FIFO or device), readable.  Output paths: not empty,
shorter than 4096, allowed characters in the path as given, writable if present, otherwise the
parent directories are created (a side effect CANN has too).  Non-UTF-8 bytes (surrogate-escaped
by Python) fail the character rule.
"""
from __future__ import annotations

import errno
import os
import re

from ge.errors import GeError
from ge.fsutil import make_dirs

__all__ = ["check_input_path", "check_output_path", "CHAR_REASON"]

CHAR_REASON = ("The path can only contain 'a-z' 'A-Z' '0-9' '-' '.' '_' and Chinese "
               "characters.")
_ALLOWED = re.compile(r"^[A-Za-z0-9./_\-\u4e00-\u9fa5]*$")
_MAX_PATH = 4096


def _errno_reason(code: int) -> str:
    return f"[Errno {code}] {os.strerror(code)}"


def _invalid(value: str, parameter: str, reason: str) -> GeError:
    return GeError("E10001", {"value": value, "parameter": parameter, "reason": reason})


def check_input_path(value: str, flag: str) -> str:
    """Validate an input file given with `--<flag>`; return its resolved path."""
    if not value:
        raise GeError("E10004", {"parameter": flag})
    parameter = f"--{flag}"
    try:
        os.stat(value)
    except OSError as exc:
        raise _invalid(value, parameter, _errno_reason(exc.errno or errno.ENOENT)) from None
    except ValueError:          # embedded NUL
        raise _invalid(value, parameter, CHAR_REASON) from None
    resolved = os.path.realpath(value)
    if not _ALLOWED.match(resolved):
        raise _invalid(value, parameter, CHAR_REASON)
    if os.path.isdir(resolved):
        raise _invalid(value, parameter, _errno_reason(errno.EISDIR))
    from ge.fsutil import special_kind      # not at the top: --help does not need ge.fsutil
    kind = special_kind(os.stat(resolved).st_mode)
    if kind is not None:                    # a FIFO would hang the read, /dev/zero never ends
        raise _invalid(value, parameter, f"It is {kind}, not a regular file.")
    if not os.access(resolved, os.R_OK):
        raise _invalid(value, parameter, _errno_reason(errno.EACCES))
    return resolved


def check_output_path(path: str, parameter: str) -> str:
    """Validate an output file path; `parameter` is the text used in messages (with `--`)."""
    if not path:
        raise GeError("E10004", {"parameter": parameter})
    if len(path) >= _MAX_PATH:
        raise _invalid(path, parameter,
                       f"Path length is too long. It must be less than {_MAX_PATH}.")
    if not _ALLOWED.match(path):
        raise _invalid(path, parameter, CHAR_REASON)
    if os.path.exists(path):
        if not os.access(path, os.W_OK):
            raise _invalid(path, parameter, _errno_reason(errno.EACCES))
        return path
    cut = max(path.rfind("/"), path.rfind("\\"))
    parent = path[:cut] if cut > 0 else ""
    if parent:
        try:
            make_dirs(parent)
        except OSError as exc:
            raise _invalid(path, parameter, _errno_reason(exc.errno or errno.EACCES)) from None
        if not os.access(parent, os.W_OK):
            raise _invalid(path, parameter, _errno_reason(errno.EACCES))
    return path
