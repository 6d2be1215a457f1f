"""Fixtures of the ATC tests live in atc_entries.py (a module with a unique name, so test files
can import its helpers without clashing with other directories' conftest modules)."""
from atc_entries import *  # noqa: F401,F403
from atc_entries import atc, entry, work  # noqa: F401  (fixtures)
