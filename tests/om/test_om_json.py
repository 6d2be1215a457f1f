"""Mode 1 (OM -> JSON), mode 5 (pbtxt -> JSON) and the model-info block (mode 6)."""
from __future__ import annotations

import json

import pytest

from ge.errors import GeError
from ge.graph import DumpFormat, Graph
from ge.om import OmContent, om_info, om_to_json, pbtxt_to_json, write_om
from ge.om.inspector import DROPPED_FIELDS

from ._graphs import conv_net, every_attr_node, if_net


def _graph():
    g = conv_net()
    every_attr_node(g)
    return g


@pytest.fixture(scope="module")
def om_path(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("json") / "net.om")
    write_om(path, OmContent(graph=_graph(), soc_version="Ascend310", framework_type="5",
                             atc_cmdline="atc --mode=0 --model=m.onnx", atc_version="8.0",
                             memory_size=1000, kernels=[("k", b"12345")],
                             target=("linux", "aarch64")))
    return path


@pytest.fixture(scope="module")
def doc(om_path):
    return json.loads(om_to_json(om_path))


def _attrs(entries):
    return {e["key"]: e["value"] for e in entries}


def _walk(obj):
    if isinstance(obj, dict):
        for key, value in obj.items():
            yield key, value
            yield from _walk(value)
    elif isinstance(obj, list):
        for item in obj:
            yield from _walk(item)


def test_json_lists_every_node_in_order(doc):
    graph = _graph()
    (g,) = doc["graph"]
    assert g["name"] == "net"
    assert [(op["name"], op["type"]) for op in g["op"]] == [(n.name, n.type) for n in graph.nodes]


def test_json_carries_every_attr_and_descriptor(doc):
    graph = _graph()
    ops = {op["name"]: op for op in doc["graph"][0]["op"]}
    for node in graph.nodes:
        op = ops[node.name]
        keys = set(_attrs(op.get("attr", [])))
        assert {k for k, _, _ in node.attr_items() if k != "none"} <= keys
        assert len(op.get("input_desc", [])) == node.num_inputs
        assert len(op.get("output_desc", [])) == node.num_outputs
    conv = ops["conv"]
    assert conv["input"] == ["x:0", "conv.weight:0", "conv.bias:0", ""]
    desc = conv["input_desc"][0]
    assert desc["dtype"] == "DT_FLOAT" and desc["layout"] == "NCHW"
    assert desc["shape"]["dim"] == [1, 3, 8, 8]
    assert _attrs(desc["attr"])["origin_format"] == {"s": "NCHW"}
    assert _attrs(conv["attr"])["strides"] == {"list": {"i": [1, 1, 1, 1],
                                                         "val_type": "VT_LIST_INT"}}
    a = _attrs(ops["all_attrs"]["attr"])
    assert a["s"] == {"s": "text é"} and a["dt"] == {"dt": 1} and a["b"] == {"b": True}
    assert a["lli"] == {"list_list_int": {"list_list_i": [{"list_i": [1, 2]}, {"list_i": [3]}]}}


def test_json_has_no_weight_bytes_nor_dropped_fields(doc):
    keys = {key for key, _ in _walk(doc)}
    assert not keys & DROPPED_FIELDS
    const = next(op for op in doc["graph"][0]["op"] if op["name"] == "conv.weight")
    tensor = _attrs(const["attr"])["value"]["t"]
    assert set(tensor) == {"desc"}


def test_json_model_attrs(doc):
    attrs = _attrs(doc["attr"])
    assert attrs["soc_version"] == {"s": "Ascend310"}
    assert attrs["_pyatc_target"] == {"s": "host-linux-aarch64"}
    assert doc["version"] == 2 and doc["custom_version"] == "1.11.z.0"


def test_json_of_subgraph_model_lists_all_graphs(tmp_path):
    path = str(tmp_path / "if.om")
    write_om(path, OmContent(graph=if_net(), target=("linux", "x86_64")))
    names = [g["name"] for g in json.loads(om_to_json(path))["graph"]]
    assert names == ["root", "then_g", "then_inner", "else_g"]


def test_json_is_deterministic(om_path):
    assert om_to_json(om_path) == om_to_json(om_path)


def test_pbtxt_to_json_matches_om_json_for_the_graph(tmp_path, doc):
    path = tmp_path / "ge_proto_00000_net.txt"
    path.write_text(_graph().dump_to_stream(DumpFormat.kTxt))
    text_doc = json.loads(pbtxt_to_json(str(path)))
    strip = lambda d: [(op["name"], op["type"], op.get("input", [])) for op in d["graph"][0]["op"]]
    assert strip(text_doc) == strip(doc)
    assert not {key for key, _ in _walk(text_doc)} & DROPPED_FIELDS


def test_pbtxt_to_json_rejects_other_text(tmp_path):
    path = tmp_path / "x.txt"
    path.write_text("this is { not a model")
    with pytest.raises(GeError) as err:
        pbtxt_to_json(str(path))
    assert err.value.code == "E10041"


def test_om_to_json_rejects_non_om(tmp_path):
    path = tmp_path / "x.om"
    path.write_bytes(b"\0" * 300)
    with pytest.raises(GeError) as err:
        om_to_json(str(path))
    assert err.value.code == "E10041"


def test_model_info_facts(om_path):
    info = om_info(om_path)
    assert info["memory_size"] == 1000 and info["stream_num"] == 1
    assert (info["atc_cmdline"], info["atc_version"], info["soc_version"],
            info["framework_type"]) == ("atc --mode=0 --model=m.onnx", "8.0", "Ascend310", "Onnx")
    assert info["tbe_kernels_size"] == 18 and info["modeldef_size"] > 0
    assert len(info["om_info_list"]) == 5
    assert info["om_info_list"][0] == info["weight_data_size"]


def test_model_without_graph_is_refused(tmp_path):
    g = Graph("empty")
    path = str(tmp_path / "e.om")
    write_om(path, OmContent(graph=g, target=("linux", "x86_64")))
    doc = json.loads(om_to_json(path))
    assert doc["graph"] == [{"name": "empty"}]
