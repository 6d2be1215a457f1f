"""The IR with the CANN `ge.graph` surface (spec/python-passes.md §4)."""
from .graph import CONST_TYPES, DATA_TYPES, ATTR_ORIGIN, Graph, GraphCycleError, Node
from .tensor import Shape, Tensor, TensorDesc
from .types import DataType, DumpFormat, Format, Placement
from .verify import GraphInvariantError

Operator = Node  # CANN exports Operator; our graphs expose nodes only

__all__ = ["Graph", "Node", "Operator", "Tensor", "TensorDesc", "Shape", "DataType", "Format",
           "Placement", "DumpFormat", "GraphCycleError", "GraphInvariantError", "ATTR_ORIGIN",
           "CONST_TYPES", "DATA_TYPES"]
