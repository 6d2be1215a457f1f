"""run() returns a type the outcome table does not know (a string)."""
from ge.passes import FusionBasePass, PassStage, register_fusion_pass


@register_fusion_pass(name="E2eWrongTypePass", stage=PassStage.BEFORE_INFER_SHAPE)
class E2eWrongTypePass(FusionBasePass):
    def run(self, graph, context):
        return "done"
