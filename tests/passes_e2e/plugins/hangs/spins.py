"""run() loops forever and swallows every Exception: the time limit still ends it."""
from ge.passes import FusionBasePass, PassStage, register_fusion_pass


@register_fusion_pass(name="E2eSpinningPass", stage=PassStage.BEFORE_INFER_SHAPE)
class E2eSpinningPass(FusionBasePass):
    def run(self, graph, context):
        while True:
            try:
                sum(range(1000))
            except Exception:
                pass
