"""argv[0] rule, dependency check and the call into libpyatc_wrapper.so.

Failures of this layer (no library, a library that does not load, a missing runtime dependency)
are install problems, not ATC errors: one line on stderr naming the path or module and the fix,
exit status 255 (the status every ATC failure has).
"""
from __future__ import annotations

import importlib.util
import os
import sys

TYPE_CHECKING = False       # typing costs ~10 ms of `pyatc --help`; annotations only
if TYPE_CHECKING:
    from typing import NoReturn, Optional, Sequence

__all__ = ["main", "find_library", "LIBRARY_NAME", "LIBRARY_ENV", "RUNTIME_DEPENDENCIES"]

LIBRARY_NAME = "libpyatc_wrapper.so"
LIBRARY_ENV = "PYATC_WRAPPER_LIB"
FAILURE_STATUS = 255
# import name -> pip distribution name
RUNTIME_DEPENDENCIES = (
    ("cffi", "cffi"),
    ("numpy", "numpy"),
    ("onnx", "onnx"),
    ("google.protobuf", "protobuf"),
    ("scipy_openblas32", "scipy-openblas32"),
)


class _InstallProblem(Exception):
    """One-line description of why the ATC flow cannot be reached from this interpreter."""


def _fail(message: str) -> NoReturn:
    from ge.stdio import write
    write("stderr", f"pyatc: {message}\n")
    sys.exit(FAILURE_STATUS)


def _is_importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _check_dependencies() -> None:
    missing = [dist for module, dist in RUNTIME_DEPENDENCIES if not _is_importable(module)]
    if missing:
        raise _InstallProblem(
            f"the Python interpreter {sys.executable} lacks {', '.join(missing)}; install with: "
            f"{sys.executable} -m pip install {' '.join(missing)}")


def find_library() -> str:
    """Path of libpyatc_wrapper.so by the search order in the package docstring."""
    explicit = os.environ.get(LIBRARY_ENV, "")
    if explicit:
        return explicit
    candidates = [os.path.join(os.path.dirname(os.path.abspath(__file__)), LIBRARY_NAME)]
    for directory in os.environ.get("LD_LIBRARY_PATH", "").split(os.pathsep):
        if directory:
            candidates.append(os.path.join(directory, LIBRARY_NAME))
    for path in candidates:
        if os.path.isfile(path):
            return path
    raise _InstallProblem(
        f"{LIBRARY_NAME} not found next to ge.pyatc or on LD_LIBRARY_PATH; "
        f"run 'source <install>/set_env.sh' or set {LIBRARY_ENV} to the library path")


def _load_entry(path: str):
    # cffi ABI mode, declarations precompiled by ge/pyatc/_ffi_build.py (no C parser at start)
    from ge.pyatc._wrapper_ffi import ffi

    try:
        lib = ffi.dlopen(path, ffi.RTLD_GLOBAL | ffi.RTLD_NOW)
    except OSError as exc:
        reason = " ".join(str(exc).split())
        raise _InstallProblem(
            f"cannot load {path} ({reason}); run 'source <install>/set_env.sh' "
            f"or set {LIBRARY_ENV} to a working library") from None
    return ffi, lib


def _program_argv0(cmdline_argv0: Optional[str]) -> str:
    argv0 = cmdline_argv0 if cmdline_argv0 is not None else (sys.argv[0] if sys.argv else "")
    if os.path.basename(argv0) == "__main__.py":
        return f"{sys.executable} -m ge.pyatc"
    return argv0


def main(cmdline_argv0: Optional[str] = None, args: Optional[Sequence[str]] = None) -> NoReturn:
    """Run the ATC main flow in this interpreter and exit with its status.

    cmdline_argv0: the program as invoked (bin/pyatc passes its real path); default sys.argv[0].
    args: the ATC arguments, untouched; default sys.argv[1:].
    """
    from ge.stdio import guard_std_fds
    guard_std_fds()         # before anything opens a file: see ge/stdio.py
    argv = [_program_argv0(cmdline_argv0)]
    argv += list(sys.argv[1:] if args is None else args)
    try:
        try:
            _check_dependencies()
            ffi, lib = _load_entry(find_library())
        except _InstallProblem as problem:
            _fail(str(problem))
        # os.fsencode mirrors the fsdecode in native/ge_main_impl.c: undecodable bytes
        # round-trip.
        buffers = [ffi.new("char[]", os.fsencode(arg)) for arg in argv]
        c_argv = ffi.new("char *[]", buffers)
        rc = lib.GeApiWrapper_Atc_Main(len(argv), c_argv)
    except KeyboardInterrupt:       # Ctrl-C outside the ATC flow (which reports its own: EP0004)
        rc = FAILURE_STATUS
    # the flow ran: threads a pass left must not keep us alive (a stand-in flow may lack this)
    leave = getattr(sys.modules.get("ge.atc"), "leave_if_threads_linger", None)
    if leave is not None:
        leave(rc)
    sys.exit(rc)
