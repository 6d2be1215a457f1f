"""run() returns a failure status (non-zero int) after setting the context error message."""
from ge.passes import FusionBasePass, PassStage, register_fusion_pass


@register_fusion_pass(name="E2eStatusPass", stage=PassStage.AFTER_INFER_SHAPE)
class E2eStatusPass(FusionBasePass):
    def run(self, graph, context):
        context.set_error_message("e2e status pass found nothing it likes")
        return 7
