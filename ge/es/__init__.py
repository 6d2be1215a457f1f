"""`ge.es`: eager-style graph building (spec/python-passes.md §5).

GraphBuilder and TensorHolder are hand-written; op functions are generated from the `ge.ops`
registry into `ge.es.math`, `ge.es.nn` and `ge.es.all`.  Extra op packages registered through
the entry-point group `ge.es.plugins` are installed as `ge.es.<name>` at import.
"""
from __future__ import annotations

import importlib
import logging
import sys
import types

from . import all as _all, math as _math, nn as _nn
from .graph_builder import GraphBuilder
from .tensor_holder import TensorHolder

__all__ = ["GraphBuilder", "TensorHolder", "list_plugins", "get_plugin"]

_log = logging.getLogger(__name__)
_BUILTIN = ("math", "nn", "all")
_plugins: dict[str, types.ModuleType] = {"math": _math, "nn": _nn, "all": _all}


def _coerce_module(value, depth=0):
    if isinstance(value, types.ModuleType):
        return value
    if isinstance(value, str):
        return importlib.import_module(value)
    if callable(value) and depth < 4:
        return _coerce_module(value(), depth + 1)
    raise TypeError(f"ES plugin must give a module, a module name or a callable, "
                    f"got {type(value).__name__}")


def _load_entry_point_plugins() -> None:
    try:
        from ge.distributions import entry_points
        group = entry_points("ge.es.plugins")
    except Exception as exc:  # a broken distribution must not break `import ge.es`
        _log.warning("cannot list ge.es.plugins entry points: %s", exc)
        return
    for ep in sorted(group, key=lambda e: e.name):
        if ep.name in _BUILTIN:
            continue
        try:
            module = _coerce_module(ep.load())
        except Exception as exc:  # reference prints and goes on; we log and go on
            _log.warning("failed to load ES plugin %s (%s): %s", ep.name, ep.value, exc)
            continue
        _plugins[ep.name] = module
        sys.modules[f"{__name__}.{ep.name}"] = module
        setattr(sys.modules[__name__], ep.name, module)


def list_plugins() -> list[str]:
    """The built-in op modules, then the loaded plugins by name."""
    return list(_plugins)


def get_plugin(name: str):
    if name not in _plugins:
        raise KeyError(f"ES plugin {name!r} is not loaded; loaded: {', '.join(list_plugins())}")
    return _plugins[name]


_load_entry_point_plugins()
