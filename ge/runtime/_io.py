"""Input and output files of the runtime command lines (msame style).

`.npy` files are read without pickles and checked against the model input before any copy;
any other extension is raw bytes (`.bin`) whose size must be exactly the input's size, the
shape and dtype then coming from the model.  Sizes are compared with the file size before
anything is allocated.
"""
from __future__ import annotations

import io
import os

import numpy as np

from ge.fsutil import publish

from ._errors import BAD_INPUT, FILE_OPEN, error
from ._plan import TensorSpec

__all__ = ["read_input", "write_outputs", "OUTPUT_FORMATS"]

OUTPUT_FORMATS = ("NPY", "BIN", "TXT")


def read_input(path: str, spec: TensorSpec) -> np.ndarray:
    if not os.path.isfile(path):
        reason = "it is a directory" if os.path.isdir(path) else "no such file"
        raise error(FILE_OPEN, f"Failed to open file {path}. Reason: {reason}.", file=path)
    size = os.path.getsize(path)
    if path.lower().endswith(".npy"):
        return _read_npy(path, spec)
    if size != spec.nbytes:
        raise error(BAD_INPUT, f"Input file {path} has {size} bytes; input {spec.name} "
                               f"({list(spec.shape)}, {spec.dtype}) needs {spec.nbytes}.",
                    file=path, input=spec.name)
    try:
        data = np.fromfile(path, dtype=spec.dtype, count=int(np.prod(spec.shape)))
    except OSError as e:
        raise error(FILE_OPEN, f"Failed to open file {path}. Reason: {e}.", file=path) from None
    return data.reshape(spec.shape)


def _read_npy(path: str, spec: TensorSpec) -> np.ndarray:
    try:
        arr = np.load(path, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError, EOFError) as e:
        raise error(BAD_INPUT, f"Input file {path} is not a valid .npy file: {e}",
                    file=path, input=spec.name) from None
    if not isinstance(arr, np.ndarray):
        raise error(BAD_INPUT, f"Input file {path} holds no array.", file=path)
    if arr.dtype != spec.dtype or tuple(arr.shape) != tuple(spec.shape):
        raise error(BAD_INPUT, f"Input file {path} holds {arr.dtype} {list(arr.shape)}; input "
                               f"{spec.name} must be {spec.dtype} {list(spec.shape)}.",
                    file=path, input=spec.name)
    return np.array(arr)


def write_outputs(directory: str, outputs: list, fmt: str = "NPY") -> list:
    """DIR/output_<i>.<npy|bin|txt>, each published atomically (ge.fsutil); returns the paths."""
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as e:
        raise error(FILE_OPEN, f"Failed to create output directory {directory}. Reason: "
                               f"{e.strerror}.", file=directory) from None
    paths = []
    for i, value in enumerate(outputs):
        path = os.path.join(directory, f"output_{i}.{fmt.lower()}")
        buffer = io.BytesIO()
        if fmt == "NPY":
            np.save(buffer, value, allow_pickle=False)
        elif fmt == "BIN":
            buffer.write(np.ascontiguousarray(value).tobytes())
        else:
            np.savetxt(buffer, value.reshape(-1, value.shape[-1] if value.ndim else 1))
        try:
            publish(path, buffer.getbuffer(), mode=0o644)
        except OSError as e:
            raise error(FILE_OPEN, f"Failed to write file {path}. Reason: {e.strerror}.",
                        file=path) from None
        paths.append(path)
    return paths
