"""The single-op list (`atc --singleop=ops.json`): the JSON file ATC and ACL read, each entry
one op to compile into an OM of its own (docs/atc.md "Single-operator compiles").

    ops = read_op_list("ops.json")        # checked SingleOp records; raises CANN's codes
    graph = op_graph(ops[0], "add")       # Data per input -> the op -> NetOutput
    file_name(ops[0])                     # "0_Add_1_2_8_16_1_2_8_16_1_2_8_16.om"

Parses and builds graphs only: compiling and writing are `ge.compiler` and `ge.atc`.
"""
from ._graph import ATTR_IS_SINGLE_OP, ATTR_SINGLE_OP_SCENE, file_name, op_graph
from ._read import AttrSpec, SingleOp, TensorSpec, read_op_list
from ._tables import PLAIN_FORMATS

__all__ = ["read_op_list", "op_graph", "file_name", "SingleOp", "TensorSpec", "AttrSpec",
           "ATTR_SINGLE_OP_SCENE", "ATTR_IS_SINGLE_OP", "PLAIN_FORMATS"]
