"""OM container: writer, reader, weights layout, determinism (ge/om)."""
from __future__ import annotations

import hashlib
import os
import struct

import numpy as np
import pytest

from ge.errors import GeError
from ge.graph import Graph
from ge.graph import serialize as ser
from ge.om import (OmContent, PartitionType, build_om, parse_om, read_om, write_om)
from ge.proto import ge_ir as pb
from ge.om.weights import extract_weights

from ._graphs import conv_net, describe_all, if_net

KERNELS = [("conv_kernel", b"\x7fELF-conv"), ("relu_kernel", b"\x7fELF-relu-bin")]


def _content(graph=None, **kw):
    kw.setdefault("soc_version", "Ascend310P3")
    kw.setdefault("atc_cmdline", "atc --model=m.onnx --framework=5")
    kw.setdefault("framework_type", "5")
    kw.setdefault("target", ("linux", "x86_64"))
    return OmContent(graph=graph if graph is not None else conv_net(), **kw)


@pytest.fixture
def om_path(tmp_path):
    path = str(tmp_path / "net.om")
    write_om(path, _content(kernels=KERNELS, memory_size=4096))
    return path


def test_header_fields(om_path):
    data = open(om_path, "rb").read()
    assert data[:4] == b"IMOD"
    magic, headsize, version = struct.unpack_from("<III", data, 0)
    assert (headsize, version) == (256, 0x20000000)
    assert data[12:76] == hashlib.sha256(data[256:]).hexdigest().encode()   # checksum
    assert data[80:84] == bytes(4)                              # encrypt, check, modeltype 0
    assert data[84:116].rstrip(b"\0") == b"net"
    assert struct.unpack_from("<II", data, 152) == (2, 1)        # om_ir_version, model_num
    assert data[160:180].rstrip(b"\0") == b"1.11.z.0"
    assert data[180] == 1
    assert struct.unpack_from("<Q", data, 184)[0] == len(data) - 256
    assert data[192] == 1                                       # host kernels inside
    assert data[194:256] == bytes(62)


def test_partition_order_and_contiguity(om_path):
    om = read_om(om_path)
    types = [p.type for p in om.partitions]
    assert types == [PartitionType.MODEL_INOUT_INFO, PartitionType.MODEL_DEF,
                     PartitionType.WEIGHTS_DATA, PartitionType.TBE_KERNELS,
                     PartitionType.TASK_INFO]
    table_end = 256 + 8 + 24 * len(types)
    assert om.partitions[0].offset == table_end
    for a, b in zip(om.partitions, om.partitions[1:]):
        assert a.offset + a.size == b.offset


def test_no_weights_no_kernels_gives_three_partitions(tmp_path):
    g = Graph("tiny")
    d = g.add_node("Data", "x", attrs={"index": 0}, output_names=["y"])
    g.add_node("NetOutput", "out", inputs=[(d, 0)], output_names=[])
    om = parse_om(build_om(_content(g)))
    assert [p.type for p in om.partitions] == [8, 0, 2]
    assert om.header.need_check_os_cpu_info == 0
    assert om.model_attr("weight_size") == 0


def test_om_round_trip_restores_the_graph(om_path):
    assert describe_all(read_om(om_path).to_graph()) == describe_all(conv_net())


def test_om_round_trip_with_subgraphs(tmp_path):
    om = parse_om(build_om(_content(if_net())))
    assert [gd.name for gd in om.model_def.graph] == ["root", "then_g", "then_inner", "else_g"]
    assert describe_all(om.to_graph()) == describe_all(if_net())


def test_weights_are_aligned_deduplicated_and_out_of_the_model_def(om_path):
    om = read_om(om_path)
    consts = {op.name: op for op in om.model_def.graph[0].op if op.type == "Const"}
    offsets = {name: op.attr["value"].t.desc.data_offset for name, op in consts.items()}
    assert all(op.attr["value"].t.data == b"" for op in consts.values())
    assert all(off >= 512 and off % 512 == 0 for off in offsets.values())
    assert offsets["ones_a"] == offsets["ones_b"]                  # identical bytes shared
    assert len(set(offsets.values())) == 3
    assert om.weights[:512] == bytes(512)
    assert len(om.weights) % 512 == 0
    w = consts["conv.weight"].attr["value"].t.desc
    stored = np.frombuffer(om.weights[w.data_offset:w.data_offset + w.weight_size], "<f4")
    expected = conv_net().node("conv.weight").get_attr("value").numpy().reshape(-1)
    assert np.array_equal(stored, expected)
    assert consts["conv.weight"].output_desc[0].data_offset == w.data_offset


def test_weights_tail_padding():
    model = ser.graph_to_model_def(conv_net())
    blob = extract_weights(model)
    ends = [op.attr["value"].t.desc.data_offset + op.attr["value"].t.desc.weight_size
            for gd in model.graph for op in gd.op if op.type == "Const"]
    assert len(blob) == (max(ends) + 32 + 511) // 512 * 512


def test_model_attrs(om_path):
    om = read_om(om_path)
    attr = om.model_attr
    assert attr("soc_version") == "Ascend310P3"
    assert attr("framework_type") == "Onnx"
    assert attr("atc_cmdline") == "atc --model=m.onnx --framework=5"
    assert attr("memory_size") == 4096
    assert attr("weight_size") == len(om.weights)
    assert attr("stream_num") == 1
    assert attr("host_env_os") == "linux" and attr("host_env_cpu") == "x86_64"
    assert attr("_pyatc_target") == "host-linux-x86_64"
    assert attr("om_info_list") == [len(om.weights),
                                    om.partition_size(PartitionType.TBE_KERNELS), 0,
                                    om.partition_size(PartitionType.TASK_INFO), 0]


def test_extra_model_attrs_override(tmp_path):
    om = parse_om(build_om(_content(model_attrs={"stream_num": 3, "custom": ["a", "b"]})))
    assert om.model_attr("stream_num") == 3
    assert om.model_attr("custom") == ["a", "b"]


def test_kernels_and_tasks_round_trip():
    task = pb.ModelTaskDef()
    t = task.task.add(type=0, stream_id=0)
    t.kernel.kernel_name = "conv_kernel"
    t.kernel.context.kernel_type = 8
    t.kernel.context.op_index = 3
    task.attr["note"] = "x"
    om = parse_om(build_om(_content(kernels=KERNELS, cust_aicpu_kernels=[("cpu", b"so")],
                                    task_def=task, memory_size=64)))
    assert om.kernels == KERNELS
    assert om.cust_aicpu_kernels == [("cpu", b"so")]
    assert om.task_def.task[0].kernel.kernel_name == "conv_kernel"
    assert om.task_def.task[0].kernel.context.op_index == 3
    assert (om.task_def.memory_size, om.task_def.stream_num) == (64, 1)
    assert om.task_def.weight_size == len(om.weights)


def test_inout_info_describes_inputs_and_outputs(om_path):
    inout = read_om(om_path).inout
    (x,) = inout["inputs"]
    assert (x.name, x.dims, x.dtype, x.format, x.size) == ("x", (1, 3, 8, 8), 0, 0, 4 * 192)
    assert [o.name for o in inout["outputs"]] == ["output_0_mul_0", "output_1_relu_0"]


def test_write_is_deterministic(tmp_path):
    a, b = str(tmp_path / "a.om"), str(tmp_path / "b.om")
    write_om(a, _content(kernels=KERNELS))
    write_om(b, _content(kernels=KERNELS))
    assert open(a, "rb").read() == open(b, "rb").read()


def test_write_read_write_is_byte_identical(om_path):
    first = read_om(om_path)
    again = build_om(OmContent(model_def=first.model_def, weights=first.weights,
                               task_def=first.task_def, kernels=first.kernels,
                               soc_version="Ascend310P3",
                               atc_cmdline="atc --model=m.onnx --framework=5",
                               framework_type="5", target=("linux", "x86_64"), memory_size=4096))
    assert again == open(om_path, "rb").read()


def test_write_leaves_only_the_final_file(tmp_path):
    write_om(str(tmp_path / "m.om"), _content())
    assert os.listdir(tmp_path) == ["m.om"]


def test_write_to_missing_directory_is_e13004(tmp_path):
    with pytest.raises(GeError) as err:
        write_om(str(tmp_path / "no" / "such" / "m.om"), _content())
    assert err.value.code == "E13004"


def test_content_without_model_is_refused():
    with pytest.raises(GeError) as err:
        build_om(OmContent())
    assert err.value.code == "EP0301"


def test_netron_needs_shape_on_every_descriptor(om_path):
    for gd in read_om(om_path).model_def.graph:
        for op in gd.op:
            for desc in list(op.input_desc) + list(op.output_desc):
                assert desc.HasField("shape") and desc.dtype < 32
