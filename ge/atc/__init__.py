"""ge.atc: the ATC command-line contract (spec/atc-cli.md).

One flag table (`flags.py`) drives the parser, the help, the GE option map and the
compatibility matrix; one code table (`codes.py`) holds every error and warning text.
`main_impl(argv)` is the whole ATC run; the native layer and `ge.pyatc` call only it.
"""
from __future__ import annotations

from .main import leave_if_threads_linger, main_impl

__all__ = ["main_impl", "leave_if_threads_linger"]
