"""`python3 -m ge.pyatc <atc arguments>`; bin/pyatc calls main(<wrapper path>, args)."""
from ge.pyatc._entry import main

__all__ = ["main"]

if __name__ == "__main__":
    main()
