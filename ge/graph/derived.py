"""Constants computed from other constants only when their values are needed.

`RowScaled(source, factor)` is `source * factor[row]` along the first axis: a convolution's
filter with an inference BatchNorm folded into it (ge.compiler.fusion.rules).  Such filters
make up nearly all of a CNN's weights (ResNet-50: ~100 MB); computed eagerly they are a second
copy of the weights in fresh memory, faulted in page by page, only to be copied into the OM.
Here nothing is allocated until a pass asks for the values (`Tensor.numpy()` materializes
them, once); the OM writer asks for `chunks` instead: the same float32 products, a few rows at
a time in one small reused buffer, so the bytes are identical to the eager product's.
"""
from __future__ import annotations

import os

import numpy as np

__all__ = ["RowScaled", "computed"]

_CHUNK = 1 << 20            # bytes of products per chunk: stays in cache while it is written


class RowScaled:
    """`source * factor[row]` (float32, C-contiguous `source`), computed when asked."""

    __slots__ = ("source", "factor", "shape", "dtype", "nbytes")

    def __init__(self, source: np.ndarray, factor: np.ndarray):
        self.source = np.ascontiguousarray(source)
        self.factor = np.asarray(factor, dtype=self.source.dtype).reshape(
            (-1,) + (1,) * (self.source.ndim - 1))
        self.shape, self.dtype, self.nbytes = self.source.shape, self.source.dtype, \
            self.source.nbytes

    def __len__(self) -> int:
        return self.nbytes

    def materialize(self) -> np.ndarray:
        return self.source * self.factor

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        array = self.materialize()
        return array if dtype is None else array.astype(dtype, copy=False)

    def chunks(self, size: int = _CHUNK):
        """The product's bytes in order, as memoryviews of one reused buffer (each valid
        until the next)."""
        rows = self.shape[0] if self.shape else 0
        if self.nbytes == 0 or rows == 0:
            return
        step = max(1, size // (self.nbytes // rows))
        buffer = np.empty((min(step, rows),) + self.shape[1:], self.dtype)
        for start in range(0, rows, step):
            out = buffer[:min(step, rows - start)]
            np.multiply(self.source[start:start + len(out)],
                        self.factor[start:start + len(out)], out=out)
            yield memoryview(out).cast("B")

    def copy_to(self, fd: int) -> None:
        """Append the bytes at `fd`'s position (ge.fsutil.publish)."""
        for chunk in self.chunks():
            while chunk.nbytes:
                chunk = chunk[os.write(fd, chunk):]

    def head(self, n: int) -> memoryview:
        return memoryview(self.materialize()).cast("B")[:n]

    def tail(self, n: int) -> memoryview:
        return memoryview(self.materialize()).cast("B")[n:]


def computed(data):
    """`data`, or a derived constant's values (for a consumer that needs the bytes whole)."""
    return data.materialize() if isinstance(data, RowScaled) else data
