"""ge.fsutil: everything the project writes under a temporary name, in one place.

  temps    the temporary-name format, the stale sweep, private work directories
  atomic   atomic publication of a file (temporary name beside it, rename; no fsync)
  reading  reading inputs: regular files only, files read whole within a size limit
  ranges   FileRange: bytes of a file copied or hashed without reading them into an object
  faults   test-only fault points (GE_TEST_FAULT): kill the process, or wait for a signal

A leaf package: it imports nothing from ge.
"""
from .faults import fault_point
from .atomic import publish
from .ranges import FileRange
from .reading import (MODEL_LIMIT, TEXT_LIMIT, NotRegularFile, check_regular, check_stat,
                      open_regular, os_reason, read_regular, read_text_regular,
                      special_kind)
from .temps import (STALE_SECONDS, TempName, host_tag, owner_is_dead, parse_temp_name, pid_alive,
                    make_dirs, stale_temporaries, sweep, temp_dir, temp_name)

__all__ = ["publish", "FileRange", "fault_point", "MODEL_LIMIT", "TEXT_LIMIT", "NotRegularFile",
           "check_regular", "check_stat", "open_regular", "os_reason", "read_regular", "read_text_regular",
           "special_kind", "STALE_SECONDS", "TempName", "host_tag", "owner_is_dead",
           "parse_temp_name", "pid_alive", "make_dirs", "stale_temporaries", "sweep", "temp_dir", "temp_name"]
