"""ConcatV2 -> Relu becomes Relu on every ConcatV2 input -> ConcatV2.

Our re-creation of CANN sample graph_base_pass/2 (spec/python-passes.md §7.8): a
FusionBasePass that describes the subgraph with SubgraphBoundary and replaces it with
SubgraphRewriter.replace(..., context=context).
"""
from ge.es import GraphBuilder
from ge.passes import (FusionBasePass, PassStage, SubgraphBoundary, SubgraphInput,
                       SubgraphOutput, SubgraphRewriter, register_fusion_pass)

from ge.es.math import ConcatV2
from ge.es.nn import Relu


def _replacement(num_inputs):
    builder = GraphBuilder("move_relu_before_concat")
    tensors = [builder.create_input(i) for i in range(num_inputs)]
    relus = [Relu(t) for t in tensors[:-1]]
    concat = ConcatV2(relus, tensors[-1], N=len(relus))
    return builder.build_and_reset([concat])


@register_fusion_pass(name="PythonMoveReluBeforeConcatPass",
                      stage=PassStage.BEFORE_INFER_SHAPE)
class PythonMoveReluBeforeConcatPass(FusionBasePass):

    def run(self, graph, context):
        print("PythonMoveReluBeforeConcatPass")
        for node in graph.get_direct_nodes():
            if node.type != "ConcatV2" or node.get_outputs_size() != 1:
                continue
            consumers = node.get_out_data_nodes_and_port_indexes(0)
            if len(consumers) != 1 or consumers[0][0].type != "Relu":
                continue
            relu = consumers[0][0]
            boundary = SubgraphBoundary()
            for i in range(node.get_inputs_size()):
                sub_input = SubgraphInput()
                sub_input.add_input(node, i)
                boundary.add_input(i, sub_input)
            boundary.add_output(0, SubgraphOutput(relu, 0))
            SubgraphRewriter.replace(boundary, _replacement(node.get_inputs_size()),
                                     context=context)
            print("Replacement of PythonMoveReluBeforeConcatPass succeeded")
        return True
