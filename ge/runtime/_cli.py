"""What the runtime command lines share: rendering a coded error and the exit statuses."""
from __future__ import annotations

import logging

from ge import stdio
from ge.errors import GeError

__all__ = ["EXIT_OK", "EXIT_FAIL", "render_error", "guarded"]

EXIT_OK, EXIT_FAIL = 0, 255
log = logging.getLogger("ge.runtime")


def render_error(e: GeError) -> str:
    """One line: the code and its message from the code table."""
    return f"[ERROR] {e.code}: {e.message}"


def _error(line: str) -> int:
    stdio.write("stderr", line + "\n")
    return EXIT_FAIL


def guarded(main, argv) -> int:
    """Run main(argv) -> int; coded errors are printed on stderr, never a traceback.  The
    standard streams are guarded first (ge.stdio): what main prints as its product goes through
    stdio.write_product, so a lost report is EP0006."""
    stdio.guard_std_fds()
    try:
        return main(argv)
    except GeError as e:
        return _error(render_error(e))
    except KeyboardInterrupt:
        return _error("[ERROR] interrupted")
    except MemoryError:
        return _error("[ERROR] E19999: out of memory")
    except Exception as e:  # an internal fault: the traceback goes to the log only
        log.debug("internal error", exc_info=True)
        return _error(f"[ERROR] E19999: Unknown error occurred ({type(e).__name__}: {e}). Set "
                      f"GE_RUNTIME_LOG=debug for the traceback.")
