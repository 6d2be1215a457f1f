"""Custom operator packages: ops that users add themselves (docs/custom-ops.md).

A package is a Python package whose top module holds `GE_OP_PACKAGE = CustomPackage(...)`:
its ops (each an `OpDef` of this registry, plus an optional C kernel), and its framework
mappings (`FrameworkMapping`: an ONNX `domain::OpType`, a TensorFlow op name or a Caffe layer
type onto an IR op, with an attribute conversion).  Packages are found, in CANN's vendor order,
in the directories of `ASCEND_CUSTOM_OPP_PATH` (left to right), then in the entry points of the
group `ge.ops.packages` (by name).  Each package is validated whole before any of its ops is
registered; a faulty package is left out with a coded error (EP0900-EP0904) that names the
package, the file and the op, and neither the built-in ops nor the other packages change.

This module knows nothing of the compiler: the check that a C kernel compiles is a callback the
compiler passes to `ensure_loaded`.  Parsers read mappings through `find_mapping`.
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib
import importlib.util
import logging
import os
import re
import sys
import threading
from dataclasses import dataclass, field
from typing import Callable, Mapping, Optional, Union

from ge.errors import GeError, warn

from . import registry
from .registry import OpDef

__all__ = ["CustomPackage", "CustomOp", "CKernel", "FrameworkMapping", "LoadedOp",
           "ENV_CUSTOM_OPP_PATH", "ENTRY_POINT_GROUP", "PACKAGE_ATTR", "FRAMEWORKS",
           "KERNEL_GEN", "ensure_loaded", "unload", "custom_op", "find_mapping", "convert_attrs",
           "loaded_packages"]

log = logging.getLogger(__name__)

ENV_CUSTOM_OPP_PATH = "ASCEND_CUSTOM_OPP_PATH"
ENTRY_POINT_GROUP = "ge.ops.packages"
PACKAGE_ATTR = "GE_OP_PACKAGE"
FRAMEWORKS = ("onnx", "tensorflow", "caffe")
KERNEL_GEN = "custom"          # OpDef.kernel_gen of a custom op with a C kernel
MODULE_PREFIX = "_ge_custom_opp_"
_C_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_DTYPES = ("DT_FLOAT", "DT_DOUBLE", "DT_BOOL", "DT_INT8", "DT_UINT8", "DT_INT16", "DT_UINT16",
           "DT_INT32", "DT_UINT32", "DT_INT64", "DT_UINT64", "DT_FLOAT16", "DT_BF16")


# -- what a package declares --------------------------------------------------------------------

@dataclass(frozen=True)
class CKernel:
    """The op's kernel for the host operator compiler: C text defining `ge_kernel` (the ABI of
    docs/kernel-abi.md), or the name of a `.c` file beside the declaring module.  The compiler
    prepends the ABI symbols and GE_* macros (shapes, attributes); `dtypes` are the tensor
    dtypes the C code handles (other nodes run the numpy reference on AiCpu)."""
    source: str
    dtypes: tuple = ("DT_FLOAT",)
    workspace_bytes: Union[int, Callable] = 0     # or OpSignature -> int


@dataclass(frozen=True)
class FrameworkMapping:
    """A framework op onto an IR op (a custom one or a built-in one).
    framework "onnx": `op` is "domain::OpType", `opsets` the domain's opset range (inclusive,
    None = open); "tensorflow": `op` is the op name; "caffe": `op` is the layer type.
    `attrs`: {IR attribute: framework attribute}, or a function (framework attrs as a dict of
    plain values) -> IR attrs; IR attributes left out take the OpDef defaults."""
    framework: str
    op: str
    op_type: str
    opsets: tuple = (1, None)
    attrs: Union[Mapping, Callable] = field(default_factory=dict)


class _Declared:
    """Records the file of the module that created the declaration (`file`, for errors)."""

    def __post_init__(self):
        if not self.file:
            try:        # 0: here, 1: the dataclass __init__, 2: the declaring module
                where = sys._getframe(2).f_code.co_filename
            except ValueError:
                where = ""
            object.__setattr__(self, "file", where)


@dataclass(frozen=True)
class CustomOp(_Declared):
    """One op of a package: its registry definition (inputs, outputs, attributes, `infer`,
    `kernel` = the numpy reference) and an optional C kernel.  `file` is where it was
    declared (filled in), for error messages."""
    opdef: OpDef
    c_kernel: Optional[CKernel] = None
    file: str = field(default="", compare=False)


@dataclass(frozen=True)
class CustomPackage(_Declared):
    name: str
    version: str
    ops: tuple = ()          # tuple[CustomOp]
    mappings: tuple = ()     # tuple[FrameworkMapping]
    file: str = field(default="", compare=False)


@dataclass(frozen=True)
class LoadedOp:
    """A registered custom op: where it comes from and its C source (already read)."""
    package: str
    version: str
    file: str
    op: CustomOp
    c_source: str = ""


# -- state: what is loaded ----------------------------------------------------------------------

_lock = threading.RLock()
_ops: dict = {}               # op type -> LoadedOp
_mappings: dict = {}          # (framework, op) -> [(FrameworkMapping, package name)]
_packages: dict = {}          # package name -> (version, where)
_state: Optional[tuple] = None   # the sources the state was loaded from
_errors: list = []            # GeErrors of the packages left out


def custom_op(op_type: str) -> Optional[LoadedOp]:
    return _ops.get(op_type)


def loaded_packages() -> dict:
    """{package name: version} of the packages loaded."""
    return {name: version for name, (version, _) in _packages.items()}


def find_mapping(framework: str, op: str, version: Optional[int] = None):
    """The FrameworkMapping of a framework op (for ONNX `op` = "domain::OpType" and `version`
    = the model's opset of that domain), or None."""
    for mapping, _package in _mappings.get((framework, op), ()):
        low, high = mapping.opsets
        if version is None or ((low is None or version >= low)
                               and (high is None or version <= high)):
            return mapping
    return None


def convert_attrs(mapping: FrameworkMapping, framework_attrs: Mapping) -> dict:
    """IR attributes of a mapped node from the framework node's attributes."""
    if callable(mapping.attrs):
        return dict(mapping.attrs(dict(framework_attrs)))
    return {ir: framework_attrs[src] for ir, src in mapping.attrs.items()
            if src in framework_attrs}


# -- discovery ----------------------------------------------------------------------------------

def _path_entries() -> list:
    raw = os.environ.get(ENV_CUSTOM_OPP_PATH, "")
    return [os.path.realpath(p.strip()) for p in raw.split(os.pathsep) if p.strip()]


@functools.lru_cache(maxsize=1)
def _entry_points() -> tuple:
    """Enumerated once per process (as the pass plugins' entry points): scanning every
    installed distribution costs ~10 ms, too much for each OM the runtime loads."""
    from ge.distributions import entry_points
    return tuple(sorted(entry_points(ENTRY_POINT_GROUP), key=lambda e: (e.name, e.value)))


def _import_dir(path: str):
    init = os.path.join(path, "__init__.py")
    if not os.path.isdir(path):
        raise FileNotFoundError(f"{ENV_CUSTOM_OPP_PATH} names {path}, which is not a directory")
    if not os.path.isfile(init):
        raise FileNotFoundError(f"{path} has no __init__.py (a package is a Python package "
                                f"directory)")
    digest = hashlib.sha256(path.encode()).hexdigest()[:12]
    name = f"{MODULE_PREFIX}{os.path.basename(path)}_{digest}"
    for key in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
        del sys.modules[key]          # a package edited between compiles is read again
    spec = importlib.util.spec_from_file_location(name, init,
                                                  submodule_search_locations=[path])
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def _sources() -> list:
    """(where, loader) in precedence order: the variable's directories, then entry points."""
    out = [(path, lambda p=path: _import_dir(p)) for path in _path_entries()]
    for ep in _entry_points():
        out.append((f"entry point {ep.name} = {ep.value}", ep.load))
    return out


# -- validation ---------------------------------------------------------------------------------

def _invalid(package: str, file: str, op: str, reason: str) -> GeError:
    return GeError("EP0901", {"package": package, "file": file, "optype": op, "reason": reason})


def _kernel_error(package: str, file: str, op: str, reason: str) -> GeError:
    return GeError("EP0903", {"package": package, "file": file, "optype": op, "reason": reason})


def _op_problem(op) -> str:
    """What is missing or wrong in one CustomOp ("" when it is complete)."""
    if not isinstance(op, CustomOp):
        return f"ops must hold CustomOp entries, not {type(op).__name__}"
    d = op.opdef
    checks = (
        (isinstance(d, OpDef), "opdef must be a ge.ops.OpDef"),
        (isinstance(getattr(d, "type", None), str) and _C_NAME.match(d.type or ""),
         "the op type must be an identifier"),
        (bool(getattr(d, "outputs", ())), "it declares no outputs"),
        (callable(getattr(d, "infer", None)), "it has no shape inference (OpDef.infer)"),
        (callable(getattr(d, "kernel", None)),
         "it has no numpy reference implementation (OpDef.kernel)"),
        (getattr(d, "role", None) == registry.Role.COMPUTE and not getattr(d, "subgraphs", ()),
         "a custom op computes its outputs from its inputs (role COMPUTE, no subgraphs)"),
    )
    for ok, problem in checks:
        if not ok:
            return problem
    for port in tuple(d.inputs) + tuple(d.outputs):
        if not isinstance(port, registry.Port) or port.kind not in (
                "required", "optional", "dynamic"):
            return f"port {port!r} is not a ge.ops.Port of kind required/optional/dynamic"
    for spec in d.attrs:
        if not isinstance(spec, registry.AttrSpec) or not _C_NAME.match(spec.name):
            return f"attribute {spec!r} is not a ge.ops.AttrSpec with an identifier name"
    if op.c_kernel is not None:
        bad = [t for t in op.c_kernel.dtypes if t not in _DTYPES]
        if not op.c_kernel.dtypes or bad:
            return f"c_kernel dtypes {list(op.c_kernel.dtypes)} must be among {', '.join(_DTYPES)}"
    return ""


def _read_c_source(op: CustomOp) -> str:
    source = op.c_kernel.source
    if source.endswith(".c") and "\n" not in source:
        path = os.path.join(os.path.dirname(op.file), source)
        with open(path, encoding="utf-8") as f:
            return f.read()
    return source


def _mapping_problem(m, op_types: dict) -> str:
    if not isinstance(m, FrameworkMapping):
        return f"mappings must hold FrameworkMapping entries, not {type(m).__name__}"
    if m.framework not in FRAMEWORKS:
        return f"framework {m.framework!r} is not one of {', '.join(FRAMEWORKS)}"
    if m.framework == "onnx" and (m.op.count("::") != 1 or not all(m.op.split("::"))):
        return f"an ONNX op is written domain::OpType, not {m.op!r}"
    if not (isinstance(m.opsets, tuple) and len(m.opsets) == 2 and all(
            v is None or (isinstance(v, int) and v >= 1) for v in m.opsets)):
        return f"opsets must be (first, last), each an opset number or None, not {m.opsets!r}"
    if not (callable(m.attrs) or isinstance(m.attrs, Mapping)):
        return "attrs must be a mapping {IR attribute: framework attribute} or a function"
    opdef = op_types.get(m.op_type) or registry.get(m.op_type)
    if isinstance(m.attrs, Mapping) and opdef is not None:
        unknown = [a for a in m.attrs if opdef.attr_spec(a) is None]
        if unknown:
            return f"op {m.op_type} has no attribute {unknown[0]}"
    return ""


def _check_package(pkg, where: str, builtins: frozenset, check_kernel) -> list:
    """LoadedOps of a valid package; raises the first fault as a coded error."""
    if not isinstance(pkg, CustomPackage):
        raise GeError("EP0900", {"package": str(getattr(pkg, "__name__", where)), "file": where,
                                 "reason": f"it defines no {PACKAGE_ATTR} = "
                                           f"ge.ops.CustomPackage(...)"})
    name = pkg.name
    if not (isinstance(name, str) and name and isinstance(pkg.version, str) and pkg.version):
        raise _invalid(str(name), pkg.file, "-", "the package needs a name and a version")
    loaded, types = [], {}
    for op in pkg.ops:
        problem = _op_problem(op)
        op_type = getattr(getattr(op, "opdef", None), "type", "?")
        file = getattr(op, "file", pkg.file)
        if problem:
            raise _invalid(name, file, str(op_type), problem)
        owner = ("the built-in ops" if op_type in builtins
                 else f"package {_ops[op_type].package}" if op_type in _ops
                 else f"package {name} ({types[op_type].file})" if op_type in types else "")
        if owner:
            raise GeError("EP0902", {"package": name, "file": file, "optype": op_type,
                                     "other": owner})
        c_source = ""
        if op.c_kernel is not None:
            try:
                c_source = _read_c_source(op)
            except OSError as exc:
                raise _kernel_error(name, file, op_type, f"cannot read its C source: "
                            f"{exc.strerror or exc}") from None
        types[op_type] = LoadedOp(name, pkg.version, file, op, c_source)
    for m in pkg.mappings:
        problem = _mapping_problem(m, {t: lo.op.opdef for t, lo in types.items()})
        op_type = getattr(m, "op_type", "?")
        if problem:
            raise _invalid(name, pkg.file, str(op_type), problem)
        if m.op_type not in types and registry.get(m.op_type) is None:
            raise GeError("EP0904", {"package": name, "file": pkg.file, "mapping":
                                     f"{m.framework} {m.op}", "optype": m.op_type})
        for other, owner in _mappings.get((m.framework, m.op), ()):
            if _overlap(other.opsets, m.opsets):
                raise GeError("EP0902", {"package": name, "file": pkg.file, "optype": m.op_type,
                                         "other": f"the {m.framework} mapping of {m.op} in "
                                                  f"package {owner}"})
    if check_kernel is not None:
        for lo in types.values():
            if lo.c_source:
                reason = check_kernel(lo)
                if reason:
                    raise _kernel_error(name, lo.file, lo.op.opdef.type, reason)
    return list(types.values())


def _overlap(a: tuple, b: tuple) -> bool:
    lo = max(a[0] or 0, b[0] or 0)
    hi = min(a[1] if a[1] is not None else 1 << 30, b[1] if b[1] is not None else 1 << 30)
    return lo <= hi


# -- loading ------------------------------------------------------------------------------------

def _unload() -> None:
    for op_type in list(_ops):
        registry.REGISTRY.pop(op_type, None)
    _ops.clear()
    _mappings.clear()
    _packages.clear()
    _errors.clear()
    from . import _required_cache
    _required_cache.clear()


def _install(pkg: CustomPackage, ops: list, where: str) -> None:
    for lo in ops:
        opdef = dataclasses.replace(lo.op.opdef, family=f"custom:{pkg.name}",
                                    kernel_gen=KERNEL_GEN if lo.c_source else "")
        registry.register(opdef)
        _ops[opdef.type] = lo
    for m in pkg.mappings:
        _mappings.setdefault((m.framework, m.op), []).append((m, pkg.name))
    _packages[pkg.name] = (pkg.version, where)


def _load_one(where: str, load, builtins: frozenset, check_kernel) -> None:
    try:
        module = load()
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        log.debug("custom op package %s raised on import", where, exc_info=True)
        raise GeError("EP0900", {"package": os.path.basename(where.rstrip(os.sep)),
                                 "file": where, "reason": f"{type(exc).__name__}: {exc}"}) from None
    pkg = getattr(module, PACKAGE_ATTR, module)
    if isinstance(pkg, CustomPackage) and pkg.name in _packages:
        _version, first = _packages[pkg.name]
        warn("WP0900", {"package": pkg.name, "file": where, "other": first})
        return
    ops = _check_package(pkg, getattr(module, "__file__", None) or where, builtins,
                         check_kernel)
    _install(pkg, ops, where)


def ensure_loaded(check_kernel: Optional[Callable] = None) -> dict:
    """Load every package (again when the sources changed since the last call); returns
    {package: version}.  A faulty package is left out and its coded error raised after the
    others are loaded (the first one; the rest are logged).  `check_kernel(LoadedOp)` returns
    why its C kernel does not compile, or "" (given by the compiler, not by the runtime)."""
    with _lock:
        sources = _sources()
        state = (tuple(where for where, _ in sources), check_kernel is not None)
        if state != _state or (check_kernel is not None and _errors):
            _reload(sources, state, check_kernel)
        if _errors:
            raise _errors[0]
        return loaded_packages()


def unload() -> None:
    """Forget every package (their ops leave the registry); the next ensure_loaded() looks
    for packages again."""
    global _state
    with _lock:
        _unload()
        _state = None


def _reload(sources: list, state: tuple, check_kernel) -> None:
    global _state
    _unload()
    builtins = frozenset(registry.all_ops())
    for where, load in sources:
        try:
            _load_one(where, load, builtins, check_kernel)
        except GeError as exc:
            log.error("custom op package %s left out: %s", where, exc.message)
            _errors.append(exc)
    _state = state
