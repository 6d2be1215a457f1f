"""run() deletes NetOutput: Graph.verify after the pass fails it (E13028), no OM."""
from ge.passes import FusionBasePass, PassStage, register_fusion_pass


@register_fusion_pass(name="E2eDropsOutputPass", stage=PassStage.BEFORE_INFER_SHAPE)
class E2eDropsOutputPass(FusionBasePass):
    def run(self, graph, context):
        for node in list(graph.get_all_nodes()):
            if node.type == "NetOutput":
                graph.remove_node(node)
