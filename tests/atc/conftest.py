"""Fixtures of the ATC tests live in atc_entries.py (a module with a unique name, so test files
can import its helpers without clashing with other directories' conftest modules)."""
from atc_entries import atc, atc_globals, entry, fake_api, kernel_cache, work  # noqa: F401
