"""A user MatMul + Add fusion placed after built-in fusion (AfterBuiltinFusionPass).

Built-in MatMulBiasAddFusionPass runs before this stage and folds a constant bias vector
into the matmul, so this pass only finds its pattern when the built-in pass is switched off.
"""
from ge.es.all import GEMM, BatchMatMulV2
from ge.passes import PassStage, PatternFusionPass, pattern, register_fusion_pass


@register_fusion_pass(name="E2eLateMatMulAddPass", stage=PassStage.AFTER_BUILTIN_FUSION_PASS)
class E2eLateMatMulAddPass(PatternFusionPass):

    @pattern
    def batch_matmul_add(self, inputs):
        a, b, c = inputs[:3]
        return BatchMatMulV2(a, b) + c

    def replacement(self, inputs):
        a, b, c = inputs[:3]
        return GEMM(a, b, c, 1.0, 1.0)
