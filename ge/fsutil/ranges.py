"""`FileRange`: bytes of a file that are copied or hashed without being read into an object.

The OM writer lays unchanged weights out as FileRanges (ge.graph.filebacked finds them); the
publisher copies each with os.copy_file_range (falling back to reads through one buffer where
the kernel or the target refuses), and the checksum hashes them through one reused buffer.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

__all__ = ["FileRange", "CHUNK"]

CHUNK = 8 << 20          # bytes per read when a range is hashed or copied through memory


def _write_all(fd: int, data) -> None:
    view = memoryview(data)
    while view.nbytes:
        view = view[os.write(fd, view):]


@dataclass(frozen=True)
class FileRange:
    """`length` bytes of the file `path` from `offset`."""
    path: str
    offset: int
    length: int

    def __len__(self) -> int:
        return self.length

    @property
    def nbytes(self) -> int:
        return self.length

    def head(self, n: int) -> "FileRange":
        return FileRange(self.path, self.offset, min(n, self.length))

    def tail(self, n: int) -> "FileRange":
        n = min(n, self.length)
        return FileRange(self.path, self.offset + n, self.length - n)

    def chunks(self, size: int = CHUNK):
        """The bytes in order, as memoryviews of one reused buffer (each valid until the next);
        OSError when the file is shorter than the range."""
        buf = memoryview(bytearray(max(min(size, self.length), 1)))
        with open(self.path, "rb", buffering=0) as f:
            done = 0
            while done < self.length:
                want = min(len(buf), self.length - done)
                got = os.preadv(f.fileno(), [buf[:want]], self.offset + done)
                if got <= 0:
                    raise OSError(f"{self.path} ends {self.length - done} bytes before the "
                                  f"end of the range [{self.offset}, {self.offset + self.length})")
                yield buf[:got]
                done += got

    def copy_to(self, fd: int) -> None:
        """Append the range at `fd`'s position (a kernel-side copy where the system has one)."""
        done = 0
        with open(self.path, "rb", buffering=0) as f:
            while done < self.length:
                try:
                    got = os.copy_file_range(f.fileno(), fd, self.length - done,
                                             self.offset + done)
                except OSError:        # O_APPEND, a pipe, a filesystem without support
                    break
                if got <= 0:
                    break
                done += got
        for part in self.tail(done).chunks():
            _write_all(fd, part)
