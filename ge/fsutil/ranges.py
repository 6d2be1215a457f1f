"""`FileRange`: bytes of a file that are copied or hashed without being read into an object.

The OM writer lays unchanged weights out as FileRanges (ge.graph.filebacked finds them); the
publisher copies each with os.copy_file_range (falling back to reads through one buffer where
the kernel or the target refuses), and the checksum hashes them through one reused buffer.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

__all__ = ["FileRange", "CHUNK", "file_identity"]

CHUNK = 8 << 20          # bytes per read when a range is hashed or copied through memory


def _write_all(fd: int, data) -> None:
    view = memoryview(data)
    while view.nbytes:
        view = view[os.write(fd, view):]


def file_identity(st: os.stat_result) -> tuple:
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


@dataclass(frozen=True)
class FileRange:
    """`length` bytes of the file `path` from `offset`; with `identity` (`file_identity` of
    the file when its bytes were mapped) a file replaced or modified since is an OSError
    instead of other bytes."""
    path: str
    offset: int
    length: int
    identity: tuple = ()

    def _open(self):
        f = open(self.path, "rb", buffering=0)
        if self.identity and file_identity(os.fstat(f.fileno())) != self.identity:
            f.close()
            raise OSError(f"{self.path} was replaced or modified while the model was compiled")
        return f

    def __len__(self) -> int:
        return self.length

    @property
    def nbytes(self) -> int:
        return self.length

    def head(self, n: int) -> "FileRange":
        return FileRange(self.path, self.offset, min(n, self.length), self.identity)

    def tail(self, n: int) -> "FileRange":
        n = min(n, self.length)
        return FileRange(self.path, self.offset + n, self.length - n, self.identity)

    def chunks(self, size: int = CHUNK):
        """The bytes in order, as memoryviews of one reused buffer (each valid until the next);
        OSError when the file is shorter than the range."""
        buf = memoryview(bytearray(max(min(size, self.length), 1)))
        with self._open() as f:
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
        with self._open() as f:
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
