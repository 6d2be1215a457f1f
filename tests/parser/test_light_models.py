"""All nine onnx "light" models parse into the expected IR (op types and counts)."""
from __future__ import annotations

import collections
import os

import onnx
import pytest

from ge.graph import DataType, Format
from ge.parser.onnx import parse_onnx

# Expected IR op counts; derivable by hand from the ONNX op counts: ConstantOfShape → Const+Fill,
# Gemm (with C) → MatMulV2+Add, Sum → AccumulateNV2, Transpose → Const+Transpose, Concat →
# ConcatD, every initializer → Const.
EXPECTED = {
    "light_bvlc_alexnet": {"Data": 1, "Const": 33, "Fill": 16, "Conv2D": 5, "Relu": 7, "LRN": 2,
                           "MaxPoolV3": 3, "Reshape": 1, "MatMulV2": 3, "Add": 3, "Dropout": 2,
                           "SoftmaxV2": 1, "NetOutput": 1},
    "light_densenet121": {"Data": 1, "Const": 1684, "Fill": 836, "Conv2D": 121,
                          "BatchNorm": 121, "Unsqueeze": 242, "Mul": 121, "Add": 121,
                          "Relu": 121, "MaxPoolV3": 1, "ConcatD": 58, "AvgPoolV2": 3,
                          "GlobalAveragePool": 1, "NetOutput": 1},
    "light_inception_v1": {"Data": 1, "Const": 211, "Fill": 93, "Conv2D": 57, "Relu": 57,
                           "MaxPoolV3": 13, "LRN": 2, "ConcatD": 9, "AvgPoolV2": 1,
                           "Dropout": 1, "Reshape": 2, "MatMulV2": 1, "Add": 1, "SoftmaxV2": 1,
                           "NetOutput": 1},
    "light_inception_v2": {"Data": 1, "Const": 893, "Fill": 407, "Conv2D": 69, "BatchNorm": 69,
                           "Unsqueeze": 138, "Mul": 69, "Add": 70, "Relu": 69, "MaxPoolV3": 5,
                           "AvgPoolV2": 8, "ConcatD": 10, "Reshape": 1, "MatMulV2": 1,
                           "SoftmaxV2": 1, "NetOutput": 1},
    "light_resnet50": {"Data": 1, "Const": 508, "Fill": 239, "Conv2D": 53, "BatchNorm": 53,
                       "Relu": 49, "MaxPoolV3": 1, "AccumulateNV2": 16, "AvgPoolV2": 1,
                       "Reshape": 1, "MatMulV2": 1, "Add": 1, "SoftmaxV2": 1, "NetOutput": 1},
    "light_shufflenet": {"Data": 1, "Const": 540, "Fill": 243, "Conv2D": 49, "BatchNorm": 49,
                         "Relu": 33, "MaxPoolV3": 1, "Reshape": 33, "Transpose": 16,
                         "AvgPoolV2": 4, "ConcatD": 3, "AccumulateNV2": 13, "MatMulV2": 1,
                         "Add": 1, "SoftmaxV2": 1, "NetOutput": 1},
    "light_squeezenet": {"Data": 1, "Const": 91, "Fill": 39, "Conv2D": 26, "Relu": 26,
                         "MaxPoolV3": 3, "ConcatD": 8, "Dropout": 1, "GlobalAveragePool": 1,
                         "SoftmaxV2": 1, "NetOutput": 1},
    "light_vgg19": {"Data": 1, "Const": 75, "Fill": 36, "Conv2D": 16, "Relu": 18,
                    "MaxPoolV3": 5, "Reshape": 1, "MatMulV2": 3, "Add": 3, "Dropout": 2,
                    "SoftmaxV2": 1, "NetOutput": 1},
    "light_zfnet512": {"Data": 1, "Const": 34, "Fill": 16, "Conv2D": 5, "Relu": 7, "LRN": 2,
                       "MaxPoolV3": 3, "Reshape": 1, "MatMulV2": 3, "Add": 3, "SoftmaxV2": 1,
                       "NetOutput": 1},
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_light_model_op_types(light_dir, name):
    graph = parse_onnx(os.path.join(light_dir, name + ".onnx"))
    assert dict(collections.Counter(n.type for n in graph.nodes)) == EXPECTED[name]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_light_model_structure(light_dir, name):
    path = os.path.join(light_dir, name + ".onnx")
    graph = parse_onnx(path)
    proto = onnx.load(path, load_external_data=False)
    graph.topo_order()  # acyclic
    onnx_names = {n.name for n in proto.graph.node} | {i.name for i in proto.graph.input} | \
        {t.name for t in proto.graph.initializer}
    onnx_types = {n.op_type for n in proto.graph.node}
    for node in graph.nodes:
        if node.type == "NetOutput":
            continue
        for origin in node.origin:  # an ONNX name, or the `<op_type>_<k>` of an unnamed node
            prefix, _, k = origin.rpartition("_")
            assert origin in onnx_names or (prefix in onnx_types and k.isdigit()), node
        assert node.origin, node
    # the one Data node carries the model's input desc, NCHW by default
    (data,) = graph.data_nodes()
    vi = next(i for i in proto.graph.input if i.name == data.name)
    dims = [d.dim_value for d in vi.type.tensor_type.shape.dim]
    desc = data.get_output_desc(0)
    assert list(desc.shape) == dims and desc.data_type == DataType.DT_FLOAT
    assert desc.format == Format.FORMAT_NCHW
    out = graph.output_node()
    assert out.name == "Node_Output"
    assert [out.in_desc(i).name for i in range(out.num_inputs)] == \
        [o.name for o in proto.graph.output]
    # every connected input of every node points at a node of this graph
    for node in graph.nodes:
        for edge in node.inputs():
            if edge is not None:
                assert graph.node(edge[0].name) is edge[0]
