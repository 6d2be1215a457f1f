"""The reader and the graph of one op without compiling: the OM file name ATC gives an op
(spec/atc-cli.md §6.13), inputs placed by slot name, absent optional inputs, constants."""
from __future__ import annotations

import pytest

from ge.graph import DataType, Format
from ge.parser.singleop import SingleOp, TensorSpec, file_name, op_graph, read_op_list

from ._oplists import tensor, write


def _op(name: str, index: int = 7, dims=(2, 3)) -> SingleOp:
    t = TensorSpec(DataType.DT_INT32, Format.FORMAT_ND, tuple(dims), Format.FORMAT_ND,
                   tuple(dims))
    return SingleOp(entry=9, index=index, op_type="Add", name=name, inputs=(t, t), outputs=(t,),
                    attrs=())


@pytest.mark.parametrize("name,expected", [
    ("my_add-1.v2", "my_add-1.v2.om"),                   # a valid file name is used as is
    ("", "7_Add_3_2_2_3_3_2_2_3_3_2_2_3.om"),            # serial, type, dtype/format/dims
    ("has space", "7_Add_3_2_2_3_3_2_2_3_3_2_2_3.om"),   # not a file name: generated
    ("..", "7_Add_3_2_2_3_3_2_2_3_3_2_2_3.om"),
    ("a/b", "7_Add_3_2_2_3_3_2_2_3_3_2_2_3.om"),
    ("x" * 200, "x" * 128 + ".om"),                      # cut to 128 characters first
])
def test_file_name(name, expected):
    assert file_name(_op(name)) == expected


def test_generated_name_is_cut_to_128_characters():
    name = file_name(_op("", dims=(1024,) * 20))
    assert len(name) == 128 + len(".om") and name.startswith("7_Add_3_2_1024_1024")


def test_inputs_by_slot_name_absent_optional_inputs_and_constants(tmp_path):
    absent = {"format": "RESERVED", "shape": [], "type": "UNDEFINED"}
    path = write(tmp_path / "ops.json", [
        {"op": "MatMulV2", "name": "mm",
         "input_desc": [tensor([2, 3], name="x2"), tensor([4, 2], name="x1"),
                        tensor([3], name="bias", is_const=True, const_value=[1, 2, 3])],
         "output_desc": [tensor([4, 3])]},
        {"op": "MatMulV2", "input_desc": [tensor([4, 2]), tensor([2, 3]), absent],
         "output_desc": [tensor([4, 3])]}])
    named, positional = read_op_list(path)
    graph = op_graph(named, "g")
    node = graph.node("mm")
    assert [e[0].name if e else None for e in node.inputs()] == \
        ["mm_in_1", "mm_in_0", "mm_in_2"]
    assert [graph.node(f"mm_in_{k}").type for k in range(3)] == ["Data", "Data", "Const"]
    assert [graph.node(f"mm_in_{k}").attr("index") for k in range(2)] == [0, 1]
    assert graph.node("mm_in_2").attr("value").numpy().tolist() == [1.0, 2.0, 3.0]
    assert positional.inputs[2].absent
    node = op_graph(positional, "h").node("MatMulV2")
    assert [e[0].name if e else None for e in node.inputs()] == \
        ["MatMulV2_in_0", "MatMulV2_in_1", None]
