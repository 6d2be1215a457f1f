"""C source -> shared object with the system C compiler, and the toolchain identity that goes
into every cache key (compiler version and target, flags, the BLAS wheel's version and headers).

`build()` runs argv lists (no shell) in a private temporary directory with fixed file names
(`kernel.c` -> `kernel.o` -> `kernel.so`) and `-ffile-prefix-map`, so the same source gives the
same bytes in any directory and any process.  It compiles with the driver (`cc -c`) and links
with the linker command the driver would run (asked once per process, `_linker_argv`).
Kernels include no header (cgen.prelude); BLAS kernels are linked to the scipy-openblas32
wheel's library by soname (ge.blas): the wheel's location is a search path only, never in the
key, the flags that are keyed, or the kernel bytes.  The directory is named
`.ge_kernel.tmp-<host>-<pid>-<rand>` under the temp root, and the compiler's own temporaries go
inside it (TMPDIR), so a killed compile leaves one recognisable directory, which the next
compile_ops removes (clean_stale_build_dirs).  It knows nothing about ops or the cache.
"""
from __future__ import annotations

import functools
import hashlib
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from typing import Optional

from ge import blas
from ge.errors import GeError
from ge.fsutil import sweep, temp_dir
from ge.host import install_command

from . import elf, support
from .cgen import DataTemplate

__all__ = ["Toolchain", "toolchain", "build", "compile_flags", "link_libs", "KernelBuildError",
           "clean_stale_build_dirs", "start_support_object", "stop_support_object",
           "provide_support_object", "made_support_object", "provide_template", "made_template"]

CC = "cc"
# -O3 vectorises the elementwise loops (portable x86-64 / aarch64 baseline: no -march, so an OM
# runs on any CPU of its host target); -fno-math-errno lets sqrtf & co. be inlined and
# vectorised (results are unchanged: only errno would have been set); -fno-trapping-math lets
# the compare-and-select of fastmath.py (exp, erf, tanh) be if-converted and vectorised (no trap
# is ever enabled, so no result changes: measured 5x on BERT's softmax rows).  Kernels declare
# what they call themselves (cgen.prelude): a call of anything undeclared is a build error, not
# an implicit `int f()`.
# The link leaves out the C start files and libc (-nostartfiles -nodefaultlibs): a kernel is
# only ever loaded into a process that has libc, and a shared object needs no start files (its
# destructors are in .fini_array, which the dynamic loader runs).  It names libm, the BLAS and
# libgcc (static) itself (link_libs).  That link costs 11 ms where the default one cost 18.
# -pipe: the assembler reads the compiler's output from a pipe, not a temporary file.
BASE_FLAGS = ("-std=c99", "-O3", "-fno-math-errno", "-fno-trapping-math", "-fPIC", "-shared",
              "-nostartfiles", "-nodefaultlibs", "-fno-ident", "-pipe",
              "-Werror=implicit-function-declaration")
LINK_FLAGS = ("-shared", "-nostartfiles", "-nodefaultlibs")  # of BASE_FLAGS, the link step's
BUILD_ID_SCHEME = "sha1(source, flags, libraries)"     # build_id(); keyed (toolchain identity)
BUILD_NAME = "ge_kernel"      # work directories get ge.fsutil temporary names of it


class KernelBuildError(GeError):
    """The C compiler rejected a generated kernel (a generator bug): carries its stderr."""


@dataclass(frozen=True)
class Toolchain:
    cc_path: str           # where the compiler is here: used to run it, never keyed
    cc_version: str        # first line of `cc --version`
    cc_target: str         # `cc -dumpmachine`

    def identity(self, needs_blas: bool) -> dict:
        """What determines the kernel bytes besides source and flags; no path of this machine."""
        ident = {"cc_version": self.cc_version, "cc_target": self.cc_target,
                 "build_id": BUILD_ID_SCHEME}
        if needs_blas:
            ident.update(blas.locate().identity())
        return ident


def _first_line(argv: list) -> str:
    out = subprocess.run(argv, capture_output=True, text=True, check=False)
    return (out.stdout.splitlines() or [""])[0].strip()


@functools.lru_cache(maxsize=1)
def toolchain() -> Toolchain:
    cc = shutil.which(CC)
    if cc is None:
        raise GeError("EP0114", {"compiler": CC, "install": install_command(["gcc"])})
    return Toolchain(cc, _first_line([cc, "--version"]), _first_line([cc, "-dumpmachine"]))


def compile_flags(debug_flags: tuple = ()) -> list:
    """Compiler flags that are keyed (no file names, no search paths); `debug_flags` come from
    op debug options and replace the optimisation level."""
    flags = list(BASE_FLAGS)
    if debug_flags:
        flags = [f for f in flags if not f.startswith("-O")] + list(debug_flags)
    return flags


def link_libs(needs_blas: bool) -> list:
    return ([f"-l{blas.LINK_NAME}"] if needs_blas else []) + ["-lm", "-lgcc"]


def _library_paths(needs_blas: bool) -> list:
    """Where this machine keeps the BLAS wheel's library: changes where it is found, not the
    bytes (kernels name it by soname)."""
    return [f"-L{blas.locate().lib_dir}"] if needs_blas else []


@functools.lru_cache(maxsize=4)
def _linker_argv(cc_path: str, libs: tuple) -> tuple:
    """The command the compiler driver would run to link `kernel.o` into `kernel.so` with
    `libs`, asked once (`-###`) and then run directly: the driver and its collect2 wrapper
    cost more than the link itself.  The LTO plugin options are left out (kernels are not
    LTO objects); () when the driver's answer is not understood (then the driver links)."""
    probe = subprocess.run([cc_path, "-###", *LINK_FLAGS, "-o", "kernel.so", "kernel.o", *libs],
                           capture_output=True, text=True, check=False)
    commands = [line for line in probe.stderr.splitlines() if line.startswith(" ")]
    if probe.returncode != 0 or not commands:
        return ()
    argv = shlex.split(commands[-1])
    if os.path.basename(argv[0]) == "collect2":     # gcc: collect2 runs ld with the same args
        ld = _first_line([cc_path, "-print-prog-name=ld"])
        argv[0] = ld if os.path.isabs(ld) else shutil.which(ld) or ""
    plugin = {i + 1 for i, a in enumerate(argv) if a == "-plugin"}     # `-plugin <path>`
    argv = [a for i, a in enumerate(argv) if i not in plugin and not a.startswith("-plugin")]
    if not argv[0] or "kernel.o" not in argv:
        return ()
    return tuple(argv)


def clean_stale_build_dirs(temp_root: str = "") -> list:
    """Remove the build directories of dead processes of this host (ge.fsutil.sweep)."""
    return sweep(temp_root or tempfile.gettempdir(), BUILD_NAME)


class _Cancel:
    """The compiler processes of one background make, killed when what they make is no longer
    wanted: each runs in a session of its own, so the kill reaches its cc1 and as too, and a
    Ctrl-C at the terminal reaches only us (the make is stopped from here, see build_graph)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._procs: set = set()
        self.cancelled = False

    def track(self, proc) -> None:
        with self._lock:
            self._procs.add(proc)
            if self.cancelled:
                _kill(proc)

    def untrack(self, proc) -> None:
        with self._lock:
            self._procs.discard(proc)

    def cancel(self) -> None:
        with self._lock:
            self.cancelled = True
            for proc in self._procs:
                _kill(proc)


def _kill(proc) -> None:
    if proc.returncode is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _run(argv: list, work: str, what: str, cancel: Optional[_Cancel] = None) -> None:
    proc = subprocess.Popen(argv, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=dict(os.environ, TMPDIR=work),
                            start_new_session=cancel is not None)
    if cancel is not None:
        cancel.track(proc)
    try:
        _, stderr = proc.communicate()
    finally:
        if cancel is not None:
            cancel.untrack(proc)
    if cancel is not None and cancel.cancelled:
        raise KernelBuildError("EP0110", {"kernel": what, "reason": "cancelled"})
    if proc.returncode != 0:
        raise KernelBuildError("EP0110", {"kernel": what, "reason": stderr[-2000:]})


def _compile(work: str, source: str, name: str, debug_flags: tuple, what: str,
             cancel: Optional[_Cancel] = None) -> None:
    """`name`.c -> `name`.o in `work`, with the keyed flags and no path in the bytes."""
    with open(os.path.join(work, f"{name}.c"), "w", encoding="utf-8") as f:
        f.write(source)
    flags = [f for f in compile_flags(debug_flags) if f not in LINK_FLAGS]
    _run([toolchain().cc_path, *flags, f"-ffile-prefix-map={work}=.", "-c", "-o", f"{name}.o",
          f"{name}.c"], work, what, cancel)


def _in_work_dir(what: str, step):
    base = os.path.join(tempfile.gettempdir(), BUILD_NAME)
    try:
        with temp_dir(base) as work:
            return step(work)
    except OSError as exc:          # TMPDIR full, read-only or missing: say where
        raise KernelBuildError("EP0110", {"kernel": what, "reason": (
            f"its work directory in {os.path.dirname(base)} (TMPDIR) cannot be used: "
            f"{exc.strerror or exc}")}) from None


class _PerProcess:
    """Values made once per process, key by key: the build threads that ask for one while it
    is being made wait for it (one lock: what is made here is made once, early).  `start`
    begins making one in a thread of its own, for a get() that comes later; `stop` cancels
    that while it still runs."""

    def __init__(self):
        self._lock = threading.Lock()
        self._values: dict = {}
        self._background: dict = {}             # key -> (thread, _Cancel) of a start()
        self._started_lock = threading.Lock()   # not _lock: that one is held while making

    def get(self, key, make):
        with self._lock:
            if key not in self._values:
                self._values[key] = make()
            return self._values[key]

    def peek(self, key):
        """The value if it is made, else None (without waiting for a make)."""
        return self._values.get(key)

    def put(self, key, value) -> None:
        """A value from elsewhere (the kernel cache), unless one is made or being made."""
        if self._lock.acquire(blocking=False):
            try:
                self._values.setdefault(key, value)
            finally:
                self._lock.release()

    def start(self, key, make) -> None:
        """get(key, make) in a background thread, once per key (make(cancel) there, with the
        _Cancel that stop() uses); an error there is raised again by the get() that needs the
        value (it makes it anew)."""
        with self._started_lock:
            if key in self._background or key in self._values:
                return
            cancel = _Cancel()

            def run():
                try:
                    self.get(key, lambda: make(cancel))
                except Exception:       # noqa: BLE001 - raised where the value is needed
                    pass
            thread = threading.Thread(target=run, name="ge-per-process", daemon=True)
            self._background[key] = (thread, cancel)
        thread.start()

    def stop(self, key, finish: bool = False) -> None:
        """Wait for the thread of the start() of `key`, having cancelled it unless `finish`
        (or its value is made already): its compiler processes killed, its work directory
        removed.  A later start() begins anew."""
        with self._started_lock:
            started = self._background.pop(key, None)
        if started is not None:
            thread, cancel = started
            if not finish and key not in self._values:
                cancel.cancel()
            thread.join()

    def clear(self) -> None:
        with self._lock:
            self._values.clear()

    def __len__(self) -> int:
        return len(self._values)


_support_objects = _PerProcess()    # debug flags -> support.o bytes
_templates = _PerProcess()          # (template text, needs_blas) -> _Template


def _make_support_object(debug_flags: tuple):
    """The maker of support.o (support.py): compiled (not linked) with the kernels' flags."""
    def step(work, cancel):
        _compile(work, support.SOURCE, "support", debug_flags, "support", cancel)
        with open(os.path.join(work, "support.o"), "rb") as f:
            return f.read()
    return lambda cancel=None: _in_work_dir("support", lambda work: step(work, cancel))


def support_object(debug_flags: tuple = ()) -> bytes:
    """support.o: once per process and flag set."""
    return _support_objects.get(debug_flags, _make_support_object(debug_flags))


def start_support_object(debug_flags: tuple = ()) -> None:
    """Begin compiling support.o in the background now, for the kernels that will link it
    (compile.prefetch_support: started before the passes, it is ready when they are built)."""
    _support_objects.start(debug_flags, _make_support_object(debug_flags))


def stop_support_object(debug_flags: tuple = (), finish: bool = False) -> None:
    """End a background compile of support.o: cancelled, or with `finish` waited for."""
    _support_objects.stop(debug_flags, finish)


def provide_support_object(debug_flags: tuple, data: bytes) -> None:
    """support.o from the kernel cache: no compile in this process."""
    _support_objects.put(debug_flags, data)


def made_support_object(debug_flags: tuple = ()) -> Optional[bytes]:
    """support.o if this process has it already (compiled or provided), else None."""
    return _support_objects.peek(debug_flags)


def build_id(source: str, needs_blas: bool, debug_flags: tuple = ()) -> str:
    """The kernel's GNU build-id (40 hex digits), from what determines its bytes, given to the
    linker instead of its hash of the output: a kernel patched from a template
    (_from_template) carries the one its own compile would."""
    flags = " ".join(compile_flags(debug_flags) + link_libs(needs_blas))
    return hashlib.sha1(f"{source}\0{flags}".encode("utf-8")).hexdigest()


def build(source: str, needs_blas: bool, debug_flags: tuple = (), what: str = "",
          template: Optional[DataTemplate] = None) -> bytes:
    """Compile one translation unit into a shared object, linked with the support object
    when it calls into it (support.py), and return its bytes; with a `template` (and no debug
    flags), the template compiled once per process with this kernel's data written in."""
    if support.uses_support(source):    # beside this kernel's or template's own compile
        start_support_object(debug_flags)
    if template is not None and not debug_flags:
        patched = _from_template(source, needs_blas, template, what)
        if patched is not None:
            return patched
    tc = toolchain()
    libs = _library_paths(needs_blas) + link_libs(needs_blas)
    identity = build_id(source, needs_blas, debug_flags)

    def step(work):
        _compile(work, source, "kernel", debug_flags, what)
        objects = ["kernel.o"]
        if support.uses_support(source):    # after the kernel's own compile: in parallel
            with open(os.path.join(work, "support.o"), "wb") as f:
                f.write(support_object(debug_flags))
            objects.append("support.o")
        link = [f"--build-id=0x{identity}" if a == "--build-id" else a
                for a in _linker_argv(tc.cc_path, tuple(libs))]
        if link:
            at = link.index("kernel.o")
            link[at:at + 1] = objects
        _run(link or [tc.cc_path, *LINK_FLAGS, f"-Wl,--build-id=0x{identity}", "-o",
                      "kernel.so", *objects, *libs], work, what)
        with open(os.path.join(work, "kernel.so"), "rb") as f:
            return f.read()
    return _in_work_dir(what, step)


@dataclass(frozen=True)
class _Template:
    binary: bytes
    symbols: dict                   # name -> (file offset, size): elf.symbol_ranges
    build_id: tuple                 # (file offset, size) of the build-id's bytes


def _template_of(binary: bytes) -> _Template:
    return _Template(binary, elf.symbol_ranges(binary), elf.build_id_range(binary) or (0, -1))


def _compiled_template(text: str, needs_blas: bool, what: str) -> _Template:
    return _template_of(build(text, needs_blas, (), what))


def provide_template(template: DataTemplate, needs_blas: bool, binary: bytes) -> None:
    """A template's compiled binary from the kernel cache: no compile in this process."""
    _templates.put((template.text, needs_blas), _template_of(binary))


def made_template(template: DataTemplate, needs_blas: bool) -> Optional[bytes]:
    """A template's binary if this process has it already (compiled or provided), else None."""
    made = _templates.peek((template.text, needs_blas))
    return made.binary if made is not None else None


def _from_template(source: str, needs_blas: bool, template: DataTemplate,
                   what: str) -> Optional[bytes]:
    """The kernel as a copy of its template's binary with its own data and build-id, or None
    when the template's layout does not take them (then the kernel is compiled)."""
    made = _templates.get((template.text, needs_blas),
                          lambda: _compiled_template(template.text, needs_blas, what))
    out = bytearray(made.binary)
    places = [made.symbols.get(symbol, (0, -1)) for symbol, _ in template.patches]
    values = [value for _, value in template.patches]
    for (offset, size), value in zip(places + [made.build_id],
                                     values + [bytes.fromhex(build_id(source, needs_blas))]):
        if size != len(value):
            return None
        out[offset:offset + size] = value
    return bytes(out)
