"""The cache tests import their helpers (cache_helpers.py) from this directory."""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
