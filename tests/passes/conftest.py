"""Fixtures of the pass tests live in pass_samples.py (a module with a unique name, so test
files can import its helpers without clashing with other directories' conftest modules)."""
from pass_samples import *  # noqa: F401,F403
from pass_samples import isolated_registry, sample  # noqa: F401  (fixtures)
