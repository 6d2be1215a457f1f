"""run() raises a bare BaseException: still E13028 naming the pass, this file and the line."""
from ge.passes import FusionBasePass, PassStage, register_fusion_pass


@register_fusion_pass(name="E2eBaseExceptionPass", stage=PassStage.BEFORE_INFER_SHAPE)
class E2eBaseExceptionPass(FusionBasePass):
    def run(self, graph, context):
        raise BaseException("e2e base exception")  # line 8
