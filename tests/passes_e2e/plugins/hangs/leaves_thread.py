"""run() starts a non-daemon thread that never ends: the compile still succeeds and the
process exits once the flow has returned."""
import threading
import time

from ge.passes import FusionBasePass, PassStage, register_fusion_pass


@register_fusion_pass(name="E2eThreadPass", stage=PassStage.BEFORE_INFER_SHAPE)
class E2eThreadPass(FusionBasePass):
    def run(self, graph, context):
        threading.Thread(target=time.sleep, args=(3600,), daemon=False).start()
