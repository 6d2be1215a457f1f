"""Input and output files of the runtime command lines (msame style).

`.npy` files are read without pickles and checked against the model input before any copy;
any other extension is raw bytes (`.bin`) whose size must be exactly the input's size, the
shape and dtype then coming from the model.  float16/bfloat16 (docs/runtime.md, "float16 and
bfloat16"): a .npy of float32 values is rounded to the input's type; a bfloat16 input is
uint16 bit patterns (or ml_dtypes' '|V2' items), a bfloat16 output is written as float32
values (.npy, .txt) or its bit patterns (.bin).  Sizes are compared with the file size before
anything is allocated.
"""
from __future__ import annotations

import io
import os

import numpy as np

from ge.errors import GeError
from ge.fsutil import publish
from ge.graph.lowprec import bf16_to_f32, is_low_precision, narrow

from ._aipp import DYNAMIC_AIPP_MODE
from ._errors import BAD_INPUT, FILE_OPEN
from ._plan import TensorSpec

__all__ = ["read_input", "read_inputs", "write_outputs", "load_npy", "OUTPUT_FORMATS",
           "low_precision_input", "output_values"]

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


def low_precision_input(value: np.ndarray, spec: TensorSpec) -> np.ndarray:
    """A float16/bfloat16 input given as float32 values is rounded to the type (nearest even);
    a bfloat16 input given as raw 2-byte items (ml_dtypes' .npy: '|V2') is its bit patterns.
    Anything else is returned unchanged (and checked by the caller)."""
    if not is_low_precision(spec.data_type) or value.dtype == spec.dtype:
        return value
    if value.dtype == np.float32:
        return narrow(value, spec.data_type)
    if spec.data_type == "DT_BF16" and value.dtype.kind == "V" and value.dtype.itemsize == 2:
        return value.view(np.uint16)
    return value


def output_values(value: np.ndarray, spec: TensorSpec, fmt: str) -> np.ndarray:
    """What an output file holds: a bfloat16 output as float32 values (exact) in .npy and .txt
    files, as its bit patterns in .bin files (the device's bytes)."""
    if spec is not None and spec.data_type == "DT_BF16" and fmt != "BIN":
        return bf16_to_f32(value)
    return value


def shape_fits(shape, spec_shape) -> bool:
    """`shape` is a shape of the input `spec_shape` describes (a -1 dim, a gear dim, takes
    any size)."""
    return len(shape) == len(spec_shape) and all(
        d == s or s == -1 for d, s in zip(shape, spec_shape))


def _read_npy(path: str, spec: TensorSpec, any_shape: bool = False) -> np.ndarray:
    arr = load_npy(path, "r", "input file ")
    if not isinstance(arr, np.ndarray):
        raise GeError(BAD_INPUT, {"reason": f"input file {path} holds no array"})
    arr = low_precision_input(np.asarray(arr), spec)
    if arr.dtype != spec.dtype or not (shape_fits(arr.shape, spec.shape) or any_shape):
        raise GeError(BAD_INPUT, {"reason": f"input file {path} holds {arr.dtype} "
                                            f"{list(arr.shape)}; input {spec.name} must be "
                                            f"{spec.dtype} {list(spec.shape)}"})
    return np.array(arr)


def write_outputs(directory: str, outputs: list, fmt: str = "NPY",
                  prefix: str = "output", specs: list = ()) -> list:
    """DIR/<prefix>_<i>.<npy|bin|txt>, each published atomically (ge.fsutil); returns the
    paths.  `specs` (the model's outputs) say which outputs are bfloat16 (output_values)."""
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as e:
        raise GeError("E13004", {"file": directory, "reason": f"cannot create the "
                                 f"directory: {e.strerror}"}) from None
    paths = []
    for i, value in enumerate(outputs):
        value = output_values(value, specs[i] if i < len(specs) else None, fmt)
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
