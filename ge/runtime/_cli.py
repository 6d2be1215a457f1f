"""What the runtime command lines share: rendering a coded error and the exit statuses."""
from __future__ import annotations

import logging
import sys

from ge.errors import GeError

__all__ = ["EXIT_OK", "EXIT_FAIL", "render_error", "guarded"]

EXIT_OK, EXIT_FAIL = 0, 255
log = logging.getLogger("ge.runtime")


def render_error(e: GeError) -> str:
    """One line: the code and its message from the code table."""
    return f"[ERROR] {e.code}: {e.message}"


def guarded(main, argv) -> int:
    """Run main(argv) -> int; coded errors are printed on stderr, never a traceback."""
    try:
        return main(argv)
    except GeError as e:
        print(render_error(e), file=sys.stderr)
        return EXIT_FAIL
    except KeyboardInterrupt:
        print("[ERROR] interrupted", file=sys.stderr)
        return EXIT_FAIL
    except MemoryError:
        print("[ERROR] E19999: out of memory", file=sys.stderr)
        return EXIT_FAIL
    except Exception as e:  # an internal fault: the traceback goes to the log only
        log.debug("internal error", exc_info=True)
        print(f"[ERROR] E19999: Unknown error occurred ({type(e).__name__}: {e}). Set "
              f"GE_RUNTIME_LOG=debug for the traceback.", file=sys.stderr)
        return EXIT_FAIL
