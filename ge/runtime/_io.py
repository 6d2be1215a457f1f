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

from ge.errors import GeError
from ge.fsutil import publish

from ._aipp import DYNAMIC_AIPP_MODE
from ._errors import BAD_INPUT, FILE_OPEN
from ._plan import TensorSpec

__all__ = ["read_input", "read_inputs", "write_outputs", "load_npy", "OUTPUT_FORMATS"]

OUTPUT_FORMATS = ("NPY", "BIN", "TXT")


def read_input(path: str, spec: TensorSpec, any_shape: bool = False) -> np.ndarray:
    """`any_shape`: an input of an unknown-shape model, whose .npy may hold any shape (the
    model checks it against its ranges); raw bytes are read at the compiled shape."""
    if not os.path.isfile(path):
        reason = "it is a directory" if os.path.isdir(path) else "no such file"
        raise GeError(FILE_OPEN, {"file": path, "reason": reason})
    size = os.path.getsize(path)
    if path.lower().endswith(".npy"):
        return _read_npy(path, spec, any_shape)
    if -1 in spec.shape:
        raise GeError("EP0201", {"value": path, "option": "--input", "reason": f"input "
                                 f"{spec.name} {list(spec.shape)} has gear dimensions: a raw "
                                 f"file needs --dymBatch, --dymHW or --dymDims to name the gear "
                                 f"(or give a .npy file)"})
    if spec.aipp == DYNAMIC_AIPP_MODE and 0 < size < spec.nbytes:
        # a dynamic AIPP image fills the start of its max_src_image_size buffer
        data = np.zeros(spec.nbytes, dtype=np.uint8)
        data[:size] = np.fromfile(path, dtype=np.uint8)
        return data.reshape(spec.shape)
    if size != spec.nbytes:
        raise GeError(BAD_INPUT, {"reason": f"input file {path} has {size} bytes; input "
                                            f"{spec.name} ({list(spec.shape)}, {spec.dtype}) "
                                            f"needs {spec.nbytes}"})
    try:
        data = np.fromfile(path, dtype=spec.dtype, count=int(np.prod(spec.shape)))
    except OSError as e:
        raise GeError(FILE_OPEN, {"file": path, "reason": str(e)}) from None
    return data.reshape(spec.shape)


def read_inputs(paths: list, specs: list, ranges: dict | None = None) -> list:
    """One file per model input, in input order; `ranges`: Model.input_ranges."""
    if len(paths) != len(specs):
        raise GeError(BAD_INPUT, {"reason": f"the model has {len(specs)} input(s) "
                                            f"({', '.join(s.name for s in specs)}); "
                                            f"{len(paths)} file(s) given"})
    return [read_input(path, spec, spec.name in (ranges or {}))
            for path, spec in zip(paths, specs)]


def load_npy(path: str, mmap_mode=None, what: str = "") -> np.ndarray:
    """np.load without pickles.  numpy's header parser meets a damaged file with ValueError,
    SyntaxError, TypeError, tokenize.TokenError, ... : each is EP0403 naming the file."""
    try:
        return np.load(path, mmap_mode=mmap_mode, allow_pickle=False)
    except Exception as e:         # noqa: BLE001 - every fault of the file's bytes
        raise GeError(BAD_INPUT, {"reason": f"{what}{path} is not a valid .npy file: "
                                            f"{type(e).__name__}: {e}"}) from None


def _read_npy(path: str, spec: TensorSpec, any_shape: bool = False) -> np.ndarray:
    arr = load_npy(path, "r", "input file ")
    if not isinstance(arr, np.ndarray):
        raise GeError(BAD_INPUT, {"reason": f"input file {path} holds no array"})
    fits = len(arr.shape) == len(spec.shape) and all(
        d == s or s == -1 for d, s in zip(arr.shape, spec.shape))   # -1: a gear dimension
    if arr.dtype != spec.dtype or not (fits or any_shape):
        raise GeError(BAD_INPUT, {"reason": f"input file {path} holds {arr.dtype} "
                                            f"{list(arr.shape)}; input {spec.name} must be "
                                            f"{spec.dtype} {list(spec.shape)}"})
    return np.array(arr)


def write_outputs(directory: str, outputs: list, fmt: str = "NPY",
                  prefix: str = "output") -> list:
    """DIR/<prefix>_<i>.<npy|bin|txt>, each published atomically (ge.fsutil); returns the
    paths."""
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as e:
        raise GeError("E13004", {"file": directory, "reason": f"cannot create the "
                                 f"directory: {e.strerror}"}) from None
    paths = []
    for i, value in enumerate(outputs):
        path = os.path.join(directory, f"{prefix}_{i}.{fmt.lower()}")
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
            raise GeError("E13004", {"file": path, "reason": e.strerror}) from None
        paths.append(path)
    return paths
