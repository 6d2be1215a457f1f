"""TensorHolder: one output of a node being built, with operators (spec §5.3)."""
from __future__ import annotations

from ge.graph import DataType, Format

__all__ = ["TensorHolder"]


class TensorHolder:
    """Output `index` of a node created by a GraphBuilder.  Built only by the builder."""

    __slots__ = ("_builder", "_node", "_index")

    def __init__(self, *_a, **_k):
        raise RuntimeError("TensorHolder cannot be constructed directly; use a GraphBuilder")

    @classmethod
    def _make(cls, builder, node, index: int = 0) -> "TensorHolder":
        t = object.__new__(cls)
        t._builder, t._node, t._index = builder, node, index
        return t

    name = property(lambda self: self._node.name)

    def __repr__(self):
        return f"TensorHolder({self._node.name}:{self._index})"

    def get_owner_builder(self):
        return self._builder

    def _get_node_snapshot(self):
        """The producer node (a live view; valid while its graph lives)."""
        return self._node

    def _desc_update(self, fn) -> "TensorHolder":
        self._builder._check_open()
        desc = self._node.get_output_desc(self._index)
        fn(desc)
        self._node.update_output_desc(self._index, desc)
        return self

    def set_data_type(self, data_type: DataType) -> "TensorHolder":
        if not isinstance(data_type, DataType):
            raise TypeError("set_data_type expects a DataType")
        return self._desc_update(lambda d: d.set_data_type(data_type))

    def set_format(self, fmt: Format) -> "TensorHolder":
        if not isinstance(fmt, Format):
            raise TypeError("set_format expects a Format")
        return self._desc_update(lambda d: (d.set_format(fmt), d.set_origin_format(fmt)))

    def set_shape(self, shape) -> "TensorHolder":
        if not isinstance(shape, (list, tuple)) or not all(
                isinstance(d, int) and not isinstance(d, bool) for d in shape):
            raise TypeError("set_shape expects a list of int")
        return self._desc_update(lambda d: (d.set_shape(shape), d.set_origin_shape(shape)))

    # -- arithmetic: Add/Sub/Mul/Div nodes, self first (reflected add/mul swap operands) -----
    def _binary(self, op_type: str, lhs, rhs) -> "TensorHolder":
        from .tensor_like import convert_to_tensor_holder
        from ._ops import build_op
        self._builder._check_open()
        a = convert_to_tensor_holder(lhs, self._builder)
        b = convert_to_tensor_holder(rhs, self._builder)
        return build_op(op_type, [a, b])

    def add(self, other):
        return self._binary("Add", self, other)

    def sub(self, other):
        return self._binary("Sub", self, other)

    def mul(self, other):
        return self._binary("Mul", self, other)

    def div(self, other):
        return self._binary("Div", self, other)

    __add__, __sub__, __mul__, __truediv__ = add, sub, mul, div

    def __radd__(self, other):
        return self._binary("Add", self, other)

    def __rmul__(self, other):
        return self._binary("Mul", self, other)

    def __rsub__(self, other):
        return self._binary("Sub", other, self)

    def __rtruediv__(self, other):
        return self._binary("Div", other, self)
