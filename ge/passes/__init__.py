"""`ge.passes`: the Python fusion-pass API of CANN GE (spec/python-passes.md §3), in Python.

Exports are resolved lazily on first access, except `pattern`, which is the decorator (the
submodule of the same name stays importable: `from ge.passes.pattern import NodeIo`).
The compiler uses `ge.passes.bootstrap.ensure_plugins_loaded()` and
`ge.passes.runner.run_stage()`; see docs/passes.md.
"""
from __future__ import annotations

import importlib

from . import pattern as _pattern_module

__all__ = [
    "FusionBasePass", "PatternFusionPass", "DecomposePass", "PassStage", "infer_shape",
    "PassContext", "MatchResult", "PatternMatcherConfig", "PatternMatcherConfigBuilder",
    "SubgraphInput", "SubgraphOutput", "SubgraphBoundary", "SubgraphRewriter",
    "Pattern", "NodeIo", "pattern", "create_pattern", "create_replacement",
    "register_fusion_pass", "register_decompose_pass", "get_registered_passes",
    "get_registered_pass_dicts", "get_registered_pass_by_descriptor_key",
    "clear_registered_passes", "FuseCheckResult", "can_fuse", "report_fuse",
]

_WHERE = {
    "FusionBasePass": "base", "PatternFusionPass": "base", "DecomposePass": "base",
    "PassStage": "base", "infer_shape": "base", "PassContext": "base", "MatchResult": "base",
    "PatternMatcherConfig": "base", "PatternMatcherConfigBuilder": "base",
    "SubgraphInput": "base", "SubgraphOutput": "base", "SubgraphBoundary": "base",
    "SubgraphRewriter": "base", "Pattern": "pattern", "NodeIo": "pattern",
    "create_pattern": "pattern", "create_replacement": "replacement",
    "register_fusion_pass": "registry", "register_decompose_pass": "registry",
    "get_registered_passes": "registry", "get_registered_pass_dicts": "registry",
    "get_registered_pass_by_descriptor_key": "registry",
    "clear_registered_passes": "registry", "FuseCheckResult": "fuse_inspector",
    "can_fuse": "fuse_inspector", "report_fuse": "fuse_inspector",
    "load_pass_plugins": "bootstrap",
}

pattern = _pattern_module.pattern  # the decorator, not the submodule (CANN naming quirk)


def __getattr__(name):
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module 'ge.passes' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{where}"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(__all__) | set(globals()))
