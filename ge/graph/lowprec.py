"""float16 and bfloat16 on the host: how their values are held in numpy and how an op computes
on them (docs/kernel-abi.md, "Low precision").

- DT_FLOAT16 is numpy's float16.  DT_BF16 has no numpy dtype: a bfloat16 array is its uint16
  bit patterns (the upper half of the float32 with the same value), the same bytes as on the
  device.
- An op on low-precision tensors computes in float32: each float16/bfloat16 input is widened to
  float32 (exact), the op runs its float32 code, and each float16/bfloat16 output is rounded from
  float32 to nearest, ties to even (overflow to infinity, subnormals kept, NaN stays a quiet NaN
  with its sign).  Compiled kernels (ge/compiler/opcompile/lowprec.py) and reference kernels
  (`call_lowprec`) follow this one rule, so they agree bit for bit wherever their float32 code
  does.

Pure numpy; nothing here imports ml_dtypes.
"""
from __future__ import annotations

import numpy as np

from .types import DataType

__all__ = ["LOW_PRECISION", "is_low_precision", "bf16_to_f32", "f32_to_bf16", "widen", "narrow",
           "call_lowprec", "storage_dtype"]

LOW_PRECISION = frozenset({DataType.DT_FLOAT16, DataType.DT_BF16})
_LOW_NAMES = frozenset(dt.name for dt in LOW_PRECISION)
_LOW_VALUES = frozenset(int(dt) for dt in LOW_PRECISION)


def is_low_precision(dt) -> bool:
    """dt: a DataType, its int value or its name (None: no)."""
    if isinstance(dt, str):
        return dt in _LOW_NAMES
    return dt is not None and int(dt) in _LOW_VALUES


def _dt(dt) -> DataType:
    return DataType[dt] if isinstance(dt, str) else DataType(dt)


def storage_dtype(dt) -> np.dtype:
    """The numpy dtype that holds a tensor of `dt` (bfloat16: uint16 bit patterns)."""
    dt = _dt(dt)
    return np.dtype(np.uint16) if dt == DataType.DT_BF16 else np.dtype(np.float16)


def bf16_to_f32(bits) -> np.ndarray:
    """bfloat16 bit patterns (uint16) -> float32 values (exact)."""
    bits = np.asarray(bits, dtype=np.uint16)
    return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32)


def f32_to_bf16(values) -> np.ndarray:
    """float32 values -> bfloat16 bit patterns, round to nearest even; NaN -> quiet NaN."""
    x = np.asarray(values, dtype=np.float32)
    u = np.ascontiguousarray(x).view(np.uint32).reshape(x.shape)
    rounded = (u + np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)
    quiet = (u >> np.uint32(16)) | np.uint32(0x0040)
    return np.where(np.isnan(x), quiet, rounded).astype(np.uint16)


def widen(array, dt) -> np.ndarray:
    """A tensor of low-precision type `dt` as float32 values.  A bfloat16 tensor is its uint16
    bits; a float array given for either type is first rounded to the type."""
    a = np.asarray(array)
    if _dt(dt) == DataType.DT_BF16:
        if a.dtype != np.uint16:
            a = f32_to_bf16(a.astype(np.float32))
        return bf16_to_f32(a)
    return a.astype(np.float16).astype(np.float32)


def narrow(array, dt) -> np.ndarray:
    """Values -> the storage of low-precision type `dt`, rounding float32 to nearest even (a
    wider float is first rounded to float32, as a float32 kernel stores it).  Arrays already in
    the storage dtype are kept."""
    a = np.asarray(array)
    store = storage_dtype(dt)
    if a.dtype == store:
        return a
    with np.errstate(over="ignore", invalid="ignore"):    # overflow is infinity, as intended
        if _dt(dt) == DataType.DT_BF16:
            return f32_to_bf16(a.astype(np.float32))
        return a.astype(np.float32).astype(np.float16)


def call_lowprec(kernel, inputs: list, attrs: dict, in_types, out_types) -> list:
    """Run a float32 reference kernel on low-precision tensors: inputs whose type (in_types, per
    slot: DataType, name or None) is float16/bfloat16 are widened to float32, outputs whose type
    is float16/bfloat16 are rounded to it.  Without a low-precision slot the kernel runs as is."""
    in_low = [is_low_precision(t) for t in in_types]
    out_low = [is_low_precision(t) for t in out_types]
    if not any(in_low) and not any(out_low):
        return list(kernel(inputs, attrs))
    ins = [widen(x, t) if low and x is not None else x
           for x, t, low in zip(inputs, in_types, in_low)]
    ins += list(inputs[len(ins):])
    outs = list(kernel(ins, attrs))
    return [narrow(o, out_types[k]) if k < len(out_low) and out_low[k] else o
            for k, o in enumerate(outs)]
