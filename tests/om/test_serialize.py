"""Graph <-> ModelDef (AIR files, text dumps): ge/graph/serialize.py."""
from __future__ import annotations

import os

import onnx
import pytest
from google.protobuf import text_format

from ge.errors import GeError
from ge.graph import DataType, DumpFormat, Graph
from ge.graph import serialize as ser
from ge.proto import ge_ir as pb

from ._graphs import conv_net, describe_all, every_attr_node, if_net


def _air_round_trip(graph, tmp_path):
    path = str(tmp_path / "g.air")
    graph.save_to_air(path)
    return Graph.load_from_air(path)


def test_air_round_trip_keeps_nodes_edges_attrs_descs(tmp_path):
    g = conv_net()
    assert describe_all(_air_round_trip(g, tmp_path)) == describe_all(g)


def test_air_round_trip_keeps_every_attr_kind(tmp_path):
    g = Graph("attrs")
    every_attr_node(g)
    back = _air_round_trip(g, tmp_path)
    assert describe_all(back) == describe_all(g)
    node = back.node("all_attrs")
    assert node.get_attr("dt") is DataType.DT_FLOAT16
    assert node.get_attr("s") == "text é"
    assert node.get_attr("g").name == "attr_graph"


def test_air_round_trip_keeps_subgraphs_and_parents(tmp_path):
    g = if_net()
    back = _air_round_trip(g, tmp_path)
    assert describe_all(back) == describe_all(g)
    then_g = back.get_subgraph("then_g")
    assert then_g.parent_node is back.node("if")
    assert back.get_subgraph("then_inner").parent_node is then_g.node("body")
    assert [n.name for n in back.get_all_nodes()][:4] == ["cond", "x", "if", "arg"]


def test_model_def_flattens_subgraphs_and_links_them_by_instance_name():
    model = ser.graph_to_model_def(if_net())
    assert [gd.name for gd in model.graph] == ["root", "then_g", "then_inner", "else_g"]
    if_op = next(op for op in model.graph[0].op if op.name == "if")
    assert list(if_op.subgraph_name) == ["then_g", "else_g"]
    assert list(model.graph[0].input) == ["cond:0", "x:0"]
    assert list(model.graph[0].output) == ["if:0"]


def test_op_def_inputs_control_edges_and_sources():
    model = ser.graph_to_model_def(conv_net())
    ops = {op.name: op for op in model.graph[0].op}
    assert list(ops["conv"].input) == ["x:0", "conv.weight:0", "conv.bias:0", ""]
    assert list(ops["relu"].input) == ["conv:0", "x:-1"]
    assert list(ops["output"].src_name) == ["mul", "relu"]
    assert list(ops["output"].src_index) == [0, 0]
    assert list(ops["conv"].is_input_const) == [False, True, True, False]
    assert list(ops["conv"].attr["_input_name_key"].list.s) == [b"x", b"filter", b"bias",
                                                                b"offset_w"]
    assert [op.id for op in model.graph[0].op] == list(range(len(model.graph[0].op)))


def test_two_dtype_numberings():
    """TensorDescriptor.dtype: proto numbering; dt attrs: in-memory numbering (§8.1)."""
    g = Graph("attrs")
    every_attr_node(g)
    op = ser.graph_to_model_def(g).graph[0].op[0]
    assert op.output_desc[0].dtype == 2               # proto DT_FLOAT16
    assert op.attr["dt"].dt == 1                       # ge::DT_FLOAT16
    assert list(op.attr["ldt"].list.dt) == [2, 12]     # ge::DT_INT8, ge::DT_BOOL
    assert op.attr["td"].td.dtype == 2
    assert ser.to_proto_dtype(DataType.DT_UNDEFINED) == 0
    assert ser.from_proto_dtype(0) == DataType.DT_UNDEFINED
    for dt in DataType:
        if dt not in (DataType.DT_MAX,):
            assert ser.from_proto_dtype(ser.to_proto_dtype(dt)) == dt


def test_descriptor_carries_ge_standard_attrs():
    op = ser.graph_to_model_def(conv_net()).graph[0].op[0]
    desc = op.output_desc[0]
    assert desc.layout == "NCHW" and list(desc.shape.dim) == [1, 3, 8, 8]
    assert desc.attr["origin_format"].s == b"NCHW"
    assert desc.attr["format_for_int"].i == 0 and desc.attr["origin_format_for_int"].i == 0
    assert desc.attr["origin_shape_initialized"].b
    assert list(desc.attr["origin_shape"].list.i) == [1, 3, 8, 8]
    assert desc.attr["origin_data_type"].s == b"DT_FLOAT"


def test_list_attrs_always_carry_val_type():
    g = Graph("attrs")
    every_attr_node(g)
    op = ser.graph_to_model_def(g).graph[0].op[0]
    names = pb.LIST_VALUE_TYPES
    assert names[op.attr["li"].list.val_type] == "VT_LIST_INT"
    assert names[op.attr["ls"].list.val_type] == "VT_LIST_STRING"
    assert names[op.attr["ldt"].list.val_type] == "VT_LIST_DATA_TYPE"


def test_save_air_is_deterministic_and_leaves_no_temp_file(tmp_path):
    a, b = tmp_path / "a.air", tmp_path / "b.air"
    conv_net().save_to_air(str(a))
    conv_net().save_to_air(str(b))
    assert a.read_bytes() == b.read_bytes()
    assert sorted(os.listdir(tmp_path)) == ["a.air", "b.air"]


def test_text_dump_is_protobuf_text_of_the_model_def():
    g = if_net()
    text = g.dump_to_stream(DumpFormat.kTxt)
    model = text_format.Parse(text, pb.ModelDef())
    assert describe_all(ser.model_def_to_graph(model)) == describe_all(g)


def test_onnx_dump_carries_ir_op_types_and_subgraphs():
    text = if_net().dump_to_stream(DumpFormat.kOnnx)
    model = text_format.Parse(text, onnx.ModelProto())
    assert [n.op_type for n in model.graph.node] == ["Data", "Data", "If", "NetOutput"]
    if_node = model.graph.node[2]
    branches = {a.name: a.g for a in if_node.attribute if a.type == onnx.AttributeProto.GRAPH}
    assert set(branches) == {"then_branch", "else_branch"}
    assert [n.op_type for n in branches["else_branch"].node] == ["Data", "Abs", "NetOutput"]
    assert list(model.graph.node[2].input) == ["cond:0", "x:0"]


def test_onnx_dump_converts_attr_kinds():
    g = Graph("attrs")
    every_attr_node(g)
    model = text_format.Parse(g.dump_to_stream(DumpFormat.kOnnx), onnx.ModelProto())
    attrs = {a.name: a for a in model.graph.node[0].attribute}
    assert attrs["li"].ints == [1, -2, 3]
    assert attrs["t"].type == onnx.AttributeProto.TENSOR
    assert attrs["output_desc:0"].s.startswith(b"DT_FLOAT16 [2, 2] NCHW")


@pytest.mark.parametrize("content", [b"\xff\xff\xff", b"not a model at all \x00\x01"])
def test_load_air_rejects_garbage_with_e10041(tmp_path, content):
    path = tmp_path / "bad.air"
    path.write_bytes(content)
    with pytest.raises(GeError) as err:
        Graph.load_from_air(str(path))
    assert err.value.code == "E10041"
    assert err.value.params["file"] == str(path)


def test_load_air_rejects_dangling_input(tmp_path):
    model = ser.graph_to_model_def(conv_net())
    conv = next(op for op in model.graph[0].op if op.name == "conv")
    conv.input[0] = "nowhere:0"
    path = tmp_path / "dangling.air"
    path.write_bytes(model.SerializeToString())
    with pytest.raises(GeError) as err:
        Graph.load_from_air(str(path))
    assert err.value.code == "E10041" and "nowhere" in err.value.params["reason"]
