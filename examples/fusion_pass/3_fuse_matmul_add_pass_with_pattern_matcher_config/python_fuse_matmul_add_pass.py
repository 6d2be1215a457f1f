"""MatMul + constant -> GEMM, matching constant values and IR attributes exactly.

Our re-creation of CANN sample pattern_base_pass/3 (spec/python-passes.md §7.3): the matcher
config enables const-value and IR-attribute matching, so only `MatMul(x, y)` with both
transposes false plus the constant [[0.1, 0.1], [0.1, 0.1]] (float32) is fused.
"""
from ge.passes import (PassStage, PatternFusionPass, PatternMatcherConfigBuilder, pattern,
                       register_fusion_pass)

try:
    from ge.es.math import GEMM, MatMul
except ImportError:
    from ge.es.all import GEMM, MatMul
try:
    from ge.es.nn import BatchMatMulV2
except ImportError:
    from ge.es.all import BatchMatMulV2

BIAS = [[0.1, 0.1], [0.1, 0.1]]


@register_fusion_pass(name="PythonMatmulAddFusionPass", stage=PassStage.BEFORE_INFER_SHAPE)
class PythonMatmulAddFusionPass(PatternFusionPass):

    def __init__(self):
        config = (PatternMatcherConfigBuilder().enable_const_value_match()
                  .enable_ir_attr_match().build())
        super().__init__(config)

    @pattern
    def matmul_add(self, inputs):
        print("Define pattern for MatmulAddFusionPass in matcher config sample")
        x, y = inputs[:2]
        return MatMul(x, y, None, transpose_x1=False, transpose_x2=False) + BIAS

    @pattern
    def batch_matmul_add(self, inputs):
        print("Define pattern for MatmulAddFusionPass in matcher config sample")
        x, y = inputs[:2]
        return BatchMatMulV2(x, y) + BIAS

    def replacement(self, inputs):
        print("Define replacement for MatmulAddFusionPass in matcher config sample")
        x, y = inputs[:2]
        return GEMM(x, y, BIAS, 1.0, 1.0)
