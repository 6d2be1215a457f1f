"""Precision modes: the dtype-assignment stage and what it reads (docs/precision.md).

    summary = assign_dtypes(graph, options)    # PrecisionSummary: mode, dtype counts, casts
"""
from __future__ import annotations

from .assign import FLOATS, PrecisionSummary, assign_dtypes, dtype_name
from .modes import DEFAULT_MODE, Policy, resolve_policy

__all__ = ["assign_dtypes", "PrecisionSummary", "resolve_policy", "Policy", "DEFAULT_MODE",
           "FLOATS", "dtype_name"]
