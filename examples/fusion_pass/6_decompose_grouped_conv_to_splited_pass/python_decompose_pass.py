"""Decompose a grouped NCHW Conv2D into Split -> per-group Conv2D -> Concat.

Our re-creation of CANN sample pattern_base_pass/6 (spec/python-passes.md §7.7): a
DecomposePass on Conv2D at AFTER_INFER_SHAPE; the replacement's shapes are inferred from the
original node's producers with infer_shape().
"""
from ge.es import GraphBuilder
from ge.graph import DataType, Format, TensorDesc
from ge.passes import DecomposePass, PassStage, infer_shape, register_decompose_pass

from ge.es.math import Concat, Split
try:
    from ge.es.nn import Conv2D
except ImportError:
    from ge.es.all import Conv2D


def _nchw_desc():
    desc = TensorDesc([], Format.FORMAT_NCHW, DataType.DT_FLOAT)
    desc.set_origin_format(Format.FORMAT_NCHW)
    return desc


@register_decompose_pass(name="PythonDecomposeGroupedConvToSplitedPass",
                         stage=PassStage.AFTER_INFER_SHAPE, op_types=["Conv2D"])
class PythonDecomposeGroupedConvToSplitedPass(DecomposePass):

    def meet_requirements(self, node):
        print("Define MeetRequirements for PythonDecomposeGroupedConvToSplitedPass")
        try:
            groups = node.get_attr("groups")
            data_format = node.get_attr("data_format")
        except RuntimeError:
            print("Get attributes failed")
            return False
        return groups != 1 and data_format == "NCHW"

    def replacement(self, node):
        print("Define Replacement for PythonDecomposeGroupedConvToSplitedPass")
        groups = node.get_attr("groups")
        strides = node.get_attr("strides")
        pads = node.get_attr("pads")
        dilations = node.get_attr("dilations")
        builder = GraphBuilder("grouped_conv_replacement")
        x, weight = builder.create_inputs(2)
        xs = Split(1, x, groups, num_split=groups)
        ws = Split(0, weight, groups, num_split=groups)
        parts = []
        for xi, wi in zip(xs, ws):
            conv = Conv2D(xi, wi, None, None, strides=strides, pads=pads, dilations=dilations,
                          groups=1, data_format="NCHW")
            snapshot = conv._get_node_snapshot()
            snapshot.update_input_desc(0, _nchw_desc())
            snapshot.update_input_desc(1, _nchw_desc())
            snapshot.update_output_desc(0, _nchw_desc())
            parts.append(conv)
        result = Concat(1, parts, N=len(parts))
        graph = builder.build_and_reset([result])
        infer_shape(graph, node)
        return graph
