"""run() calls sys.exit(3): the pass failed (E13028 naming it), the run does not just stop."""
import sys

from ge.passes import FusionBasePass, PassStage, register_fusion_pass


@register_fusion_pass(name="E2eExitingPass", stage=PassStage.BEFORE_INFER_SHAPE)
class E2eExitingPass(FusionBasePass):
    def run(self, graph, context):
        sys.exit(3)  # line 10
