"""Plugin discovery: `ASCEND_GE_PY_PASS_PATH`, then `entry_points(group="ge.passes.plugins")`
(seeds/000, spec/python-passes.md §2).

Rules, each one small function below, in the spec's order:
  * the variable is read when loading starts; entries split on `os.pathsep`, stripped, empty
    ones dropped, each made absolute and symlink-resolved; processed left to right;
  * a missing path -> FileNotFoundError, a file not ending in `.py` -> ValueError;
  * a directory is scanned non-recursively in name order, with the directory on `sys.path`
    only during the scan; `_`-prefixed names are skipped; `.py` files load as file modules;
    sub-directories with `__init__.py` are imported by their plain name;
  * file modules are named `_ge_py_pass_{stem}_{abs(hash(path))}`, put in `sys.modules`
    before they run and removed if running them fails; one canonical path loads once.
`ensure_plugins_loaded()` is what the compiler calls: it loads once per process, so changing
the variable afterwards has no effect, and turns any load failure into GeError E13029.
"""
from __future__ import annotations

import importlib
import importlib.util
import logging
import os
import sys
import threading
import types
from pathlib import Path

from ge.errors import GeError
from ge.fsutil import TEXT_LIMIT, check_regular

from .registry import (PASS_KIND_DECOMPOSE, PASS_KIND_FUSION_BASE, PASS_KIND_PATTERN_FUSION,
                       clear_registered_passes, get_registered_pass_dicts)
from .registry import get_registered_passes as _descriptors

__all__ = ["ENV_PY_PASS_PATH", "ENTRY_POINT_GROUP", "MODULE_PREFIX", "load_pass_plugins",
           "load_entry_point_plugins", "get_registered_passes", "ensure_plugins_loaded",
           "unload_pass_plugins", "PASS_LOAD_ERROR"]

_log = logging.getLogger(__name__)

ENV_PY_PASS_PATH = "ASCEND_GE_PY_PASS_PATH"
ENTRY_POINT_GROUP = "ge.passes.plugins"
MODULE_PREFIX = "_ge_py_pass_"
PASS_LOAD_ERROR = "E13029"   # Failed to load custom fusion pass lib %s. Reason: %s.

_loaded_paths: dict[str, str] = {}     # canonical path -> module name
_FILE_ATTR = "_ge_pass_file"           # set on an exception: the plugin that raised it
_lock = threading.RLock()
_done = False


def _entries(value: str) -> list[Path]:
    parts = [p.strip() for p in value.split(os.pathsep)]
    return [Path(p).resolve() for p in parts if p]


def _load_file(path: Path) -> types.ModuleType:
    key = str(path)
    known = _loaded_paths.get(key)
    if known is not None:
        if known in sys.modules:
            return sys.modules[known]
        del _loaded_paths[key]
    name = f"{MODULE_PREFIX}{path.stem}_{abs(hash(key))}"
    if name in sys.modules:
        return sys.modules[name]
    check_regular(key, TEXT_LIMIT)      # a FIFO named x.py would block the import forever
    spec = importlib.util.spec_from_file_location(name, key)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load python pass file: {key}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:
        sys.modules.pop(name, None)
        _blame(exc, key)
        raise
    _loaded_paths[key] = name
    return module


def _blame(exc: BaseException, where: str) -> None:
    if getattr(exc, _FILE_ATTR, None) is None:
        try:
            setattr(exc, _FILE_ATTR, where)
        except AttributeError:  # exception types without a __dict__
            pass


def _import_package(directory: Path, child: Path) -> types.ModuleType:
    try:
        return importlib.import_module(child.name)
    except BaseException as exc:
        _blame(exc, str(child / "__init__.py"))
        raise


def _scan_dir(directory: Path) -> list[types.ModuleType]:
    modules = []
    entry = str(directory)
    added = entry not in sys.path
    if added:
        sys.path.insert(0, entry)
    try:
        for child in sorted(directory.iterdir(), key=lambda c: c.name):
            if child.name.startswith("_"):
                continue
            if child.is_file() and child.suffix == ".py":
                modules.append(_load_file(child.resolve()))
            elif child.is_dir() and (child / "__init__.py").is_file():
                modules.append(_import_package(directory, child))
    finally:
        if added and entry in sys.path:
            sys.path.remove(entry)
    return modules


def _load_entry(path: Path) -> list[types.ModuleType]:
    try:
        return _load_path(path)
    except BaseException as exc:
        _blame(exc, str(path))
        raise


def _load_path(path: Path) -> list[types.ModuleType]:
    if not path.exists():
        raise FileNotFoundError(f"python pass path does not exist: {path}")
    if path.is_dir():
        return _scan_dir(path)
    if path.suffix != ".py":
        raise ValueError(f"python pass file must end with .py: {path}")
    return [_load_file(path)]


def _dedup(modules: list) -> list:
    seen, out = set(), []
    for m in modules:
        if m.__name__ not in seen:
            seen.add(m.__name__)
            out.append(m)
    return out


def load_pass_plugins() -> list[types.ModuleType]:
    """Load every plugin named by ASCEND_GE_PY_PASS_PATH (read now); returns the modules."""
    with _lock:
        modules = []
        for path in _entries(os.environ.get(ENV_PY_PASS_PATH, "")):
            modules += _load_entry(path)
        return _dedup(modules)


def _coerce_module(value, what: str, depth: int = 0) -> types.ModuleType:
    if isinstance(value, types.ModuleType):
        return value
    if isinstance(value, str):
        return importlib.import_module(value)
    if callable(value) and depth < 4:
        return _coerce_module(value(), what, depth + 1)
    raise TypeError(f"entry point {what} must give a module, a module name or a callable "
                    f"returning one, got {type(value).__name__}")


def _entry_points() -> list:
    from ge.distributions import entry_points
    return sorted(entry_points(ENTRY_POINT_GROUP), key=lambda e: (e.name, e.value))


def load_entry_point_plugins() -> list[types.ModuleType]:
    """Import the modules of the `ge.passes.plugins` entry points (after the variable)."""
    modules = []
    for ep in _entry_points():
        what = f"{ep.name} = {ep.value}"
        try:
            modules.append(_coerce_module(ep.load(), what))
        except BaseException as exc:
            _blame(exc, f"entry point {what}")
            raise
    return _dedup(modules)


def get_registered_passes() -> list[dict]:
    """Bridge form: one dict per registered pass."""
    return get_registered_pass_dicts()


def _validate_descriptors() -> None:
    from .base import PassStage
    for d in _descriptors():
        problem = ""
        if not isinstance(d.pass_name, str) or not d.pass_name:
            problem = "pass name must be a non-empty string"
        elif not isinstance(d.stage, PassStage):
            problem = f"stage must be a PassStage member, got {d.stage!r}"
        elif d.kind not in (PASS_KIND_FUSION_BASE, PASS_KIND_PATTERN_FUSION,
                            PASS_KIND_DECOMPOSE):
            problem = f"unknown pass kind {d.kind!r}"
        if problem:
            module = sys.modules.get(d.module_name)
            where = getattr(module, "__file__", None) or d.module_name
            raise GeError(PASS_LOAD_ERROR, {"passlibname": where, "reason":
                                            f"{d.class_name} ({d.pass_name!r}): {problem}"})


def ensure_plugins_loaded() -> list:
    """Load plugins once per process; returns the registered PassDescriptors."""
    global _done
    with _lock:
        if not _done:
            try:
                load_pass_plugins()
                load_entry_point_plugins()
            except BaseException as exc:
                if isinstance(exc, KeyboardInterrupt):
                    raise
                where = getattr(exc, _FILE_ATTR, None) or os.environ.get(ENV_PY_PASS_PATH, "")
                reason = f"{type(exc).__name__}: {exc}"
                _log.error("Load python pass descriptors failed: %s", reason)
                raise GeError(PASS_LOAD_ERROR, {"passlibname": where,
                                                "reason": reason}) from exc
            _validate_descriptors()
            _done = True
        return _descriptors()


def unload_pass_plugins() -> None:
    """Forget loaded plugins: file modules leave sys.modules, the registry is cleared, and
    the next ensure_plugins_loaded() reads the variable again (packages stay cached, as in
    the reference)."""
    global _done
    with _lock:
        for name in [n for n in sys.modules if n.startswith(MODULE_PREFIX)]:
            del sys.modules[name]
        _loaded_paths.clear()
        clear_registered_passes()
        _done = False
