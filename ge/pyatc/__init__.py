"""ge.pyatc: the in-process ATC entry (`pyatc`, `python3 -m ge.pyatc`).

This layer only adapts the calling convention: it fixes argv[0] (spec/atc-cli.md §1.1), hands
argv through cffi to ``GeApiWrapper_Atc_Main`` in ``libpyatc_wrapper.so`` (which runs
``ge.atc.main_impl`` in this interpreter) and exits with its status. It validates no argument
and prints no help; the ATC flow does both.

Where the library is looked for, first hit wins:
  1. ``$PYATC_WRAPPER_LIB`` (full path of the library file), when set;
  2. next to this package (``ge/pyatc/libpyatc_wrapper.so``, the pip/venv layout);
  3. each directory of ``$LD_LIBRARY_PATH`` (``<cann>/lib64`` after ``source set_env.sh``).
"""
from ge.pyatc._entry import main

__all__ = ["main"]
