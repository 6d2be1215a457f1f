"""`python3 -m ge.atc ARGS`: run the ATC flow in this interpreter (development entry).

The exit status follows the C convention of `main` returning -1: 255.
"""
from __future__ import annotations

import sys

from . import leave_if_threads_linger, main_impl


def main() -> None:
    rc = main_impl(list(sys.argv))
    leave_if_threads_linger(rc)
    sys.exit(rc & 0xFF)


if __name__ == "__main__":
    main()
