"""run() raises: pyatc must fail with E13028 naming the pass, this file and the line."""
from ge.passes import FusionBasePass, PassStage, register_fusion_pass


@register_fusion_pass(name="E2eRaisingPass", stage=PassStage.BEFORE_INFER_SHAPE)
class E2eRaisingPass(FusionBasePass):
    def run(self, graph, context):
        raise ValueError("e2e raising pass gives up")  # line 8
