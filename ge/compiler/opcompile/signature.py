"""What a kernel is specialised for: op type, input/output shapes, dtypes, formats, attributes and
the constant inputs a generator reads (axes, perm, offsets, ...).

An OpSignature is plain frozen data with one canonical JSON form; the kernel cache key, the
generated C (which embeds it as `ge_kernel_signature`) and the tests all read that form.  It knows
no generator and no cache.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Optional

import numpy as np

from ge.graph.attr_names import ATTR_IMPL_MODE
from ge.graph.types import DataType, format_name

__all__ = ["TensorSig", "OpSignature", "signature_of", "plain_value", "KEYED_PRIVATE_ATTRS"]

# Bookkeeping attributes that do change a binary: the implementation variant the generators
# choose from (docs/precision.md, "Kernel variants").
KEYED_PRIVATE_ATTRS = (ATTR_IMPL_MODE,)


@dataclass(frozen=True)
class TensorSig:
    shape: tuple            # static dims
    dtype: str              # DataType name, e.g. "DT_FLOAT"
    format: str = "ND"      # layout name, e.g. "NCHW"

    @property
    def numel(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    def canonical(self) -> list:
        return [list(self.shape), self.dtype, self.format]


@dataclass(frozen=True)
class OpSignature:
    op_type: str
    inputs: tuple            # tuple[TensorSig | None], one per input slot (None = absent)
    outputs: tuple           # tuple[TensorSig], one per output slot
    attrs: tuple = ()        # sorted ((name, plain value), ...)
    consts: tuple = ()       # sorted ((slot, flat tuple of values), ...) for generator-read inputs

    @staticmethod
    def make(op_type: str, inputs, outputs, attrs: Optional[dict] = None,
             consts: Optional[dict] = None) -> "OpSignature":
        return OpSignature(
            op_type, tuple(inputs), tuple(outputs),
            tuple(sorted((k, plain_value(v)) for k, v in (attrs or {}).items())),
            tuple(sorted((int(s), tuple(plain_value(list(v)))) for s, v in (consts or {}).items())))

    def attr(self, name: str, default=None):
        for k, v in self.attrs:
            if k == name:
                return v
        return default

    def const(self, slot: int) -> Optional[tuple]:
        slot = slot % len(self.inputs) if slot < 0 else slot
        for s, v in self.consts:
            if s == slot:
                return v
        return None

    def canonical(self) -> str:
        """Compact, key-sorted JSON: the identity of the kernel apart from the toolchain."""
        doc = {
            "op_type": self.op_type,
            "inputs": [None if t is None else t.canonical() for t in self.inputs],
            "outputs": [t.canonical() for t in self.outputs],
            "attrs": {k: v for k, v in self.attrs},
            "consts": {str(s): list(v) for s, v in self.consts},
        }
        return json.dumps(doc, sort_keys=True, separators=(",", ":"), allow_nan=True)


def plain_value(value):
    """An attribute value as JSON-able Python (DataType -> int, numpy -> list, tuples -> lists)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, DataType):
        return int(value)
    if isinstance(value, (int, float, str)) or value is None:
        return value
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return [plain_value(v) for v in value]
    if hasattr(value, "numpy"):          # ge.graph.Tensor
        return value.numpy().tolist()
    return repr(value)


from ge.graph import CONST_TYPES as _CONST_TYPES


def _tensor_sig(desc) -> TensorSig:
    return TensorSig(tuple(int(d) for d in desc.shape), DataType(desc.data_type).name,
                     format_name(desc.format))


def const_value(node, slot: int) -> Optional[np.ndarray]:
    """The numpy value feeding input `slot` of `node` when its producer is a constant."""
    edge = node.input(slot)
    if edge is None or edge[0].type not in _CONST_TYPES:
        return None
    value = edge[0].attr("value")
    return None if value is None else np.asarray(value.numpy() if hasattr(value, "numpy")
                                                  else value)


def _normalise_impl_mode(attrs: dict) -> None:
    """Keep the implementation mode only as what the generators tell apart: the high-precision
    bit, or nothing (high performance, CANN's default, whichever way it was asked for)."""
    from .cgen import HIGH_PRECISION
    mode = attrs.pop(ATTR_IMPL_MODE, None)
    if mode is not None and int(mode) & HIGH_PRECISION:
        attrs[ATTR_IMPL_MODE] = HIGH_PRECISION


def signature_of(node, const_slots=()) -> OpSignature:
    """The signature of a shape-inferred node.  Public IR attributes (names starting with '_'
    are bookkeeping and never change a binary, but for KEYED_PRIVATE_ATTRS); registry defaults
    are filled in."""
    from ge.ops import registry
    opdef = registry.get(node.type)
    attrs = {}
    if opdef is not None:
        for spec in opdef.attrs:
            if not spec.required:
                attrs[spec.name] = spec.default
    for name, _kind, value in node.attr_items():
        if not name.startswith("_") or name in KEYED_PRIVATE_ATTRS:
            attrs[name] = value
    attrs = {k: v for k, v in attrs.items() if not hasattr(v, "numpy")}
    _normalise_impl_mode(attrs)
    inputs = []
    for i in range(node.num_inputs):
        inputs.append(None if node.input(i) is None else _tensor_sig(node.in_desc(i)))
    outputs = [_tensor_sig(node.out_desc(i)) for i in range(node.num_outputs)]
    consts = {}
    for slot in const_slots:
        slot = slot % node.num_inputs if slot < 0 else slot
        if slot < node.num_inputs:
            value = const_value(node, slot)
            if value is not None:
                consts[slot] = value.reshape(-1).tolist()
    return OpSignature.make(node.type, inputs, outputs, attrs, consts)
