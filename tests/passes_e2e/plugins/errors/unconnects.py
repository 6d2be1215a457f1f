"""run() cuts the data input of the MatMul: a required input left unconnected is caught by
Graph.verify after the pass (E13028 naming the pass), never an OM that fails at run time."""
from ge.passes import FusionBasePass, PassStage, register_fusion_pass


@register_fusion_pass(name="E2eUnconnectsPass", stage=PassStage.BEFORE_INFER_SHAPE)
class E2eUnconnectsPass(FusionBasePass):
    def run(self, graph, context):
        for node in graph.get_all_nodes():
            if "MatMul" in node.type:        # the parser gives BatchMatMulV2
                src = node.input(0)
                graph.remove_edge(src[0], src[1], node, 0)
                return
