"""Fuse MatMul(a, b) + c (or BatchMatMulV2(a, b) + c) into GEMM(a, b, c, 1.0, 1.0).

Our re-creation of CANN sample pattern_base_pass/1 (spec/python-passes.md §7.1): two
expression patterns (@pattern) and an expression replacement.
"""
from ge.passes import PassStage, PatternFusionPass, pattern, register_fusion_pass

try:
    from ge.es.math import GEMM, MatMul
except ImportError:
    from ge.es.all import GEMM, MatMul
try:
    from ge.es.nn import BatchMatMulV2
except ImportError:
    from ge.es.all import BatchMatMulV2


@register_fusion_pass(name="PythonFuseMatMulAndAddPass", stage=PassStage.BEFORE_INFER_SHAPE)
class PythonFuseMatMulAndAddPass(PatternFusionPass):

    @pattern
    def matmul_add(self, inputs):
        print("Define pattern for FuseMatMulAndAddPass")
        a, b, c = inputs[:3]
        return MatMul(a, b) + c

    @pattern
    def batch_matmul_add(self, inputs):
        print("Define pattern for FuseMatMulAndAddPass")
        a, b, c = inputs[:3]
        return BatchMatMulV2(a, b) + c

    def meet_requirements(self, match_result):
        return True

    def replacement(self, inputs):
        print("Define replacement for FuseMatMulAndAddPass")
        a, b, c = inputs[:3]
        return GEMM(a, b, c, 1.0, 1.0)
