"""run() sleeps far past the pass time limit: the compile fails naming the pass."""
import time

from ge.passes import FusionBasePass, PassStage, register_fusion_pass


@register_fusion_pass(name="E2eSleepingPass", stage=PassStage.BEFORE_INFER_SHAPE)
class E2eSleepingPass(FusionBasePass):
    def run(self, graph, context):
        time.sleep(3600)  # line 10
