"""run() raises GeneratorExit: still E13028 naming the pass, this file and the line."""
from ge.passes import FusionBasePass, PassStage, register_fusion_pass


@register_fusion_pass(name="E2eGeneratorExitPass", stage=PassStage.BEFORE_INFER_SHAPE)
class E2eGeneratorExitPass(FusionBasePass):
    def run(self, graph, context):
        raise GeneratorExit("e2e generator exit")  # line 8
