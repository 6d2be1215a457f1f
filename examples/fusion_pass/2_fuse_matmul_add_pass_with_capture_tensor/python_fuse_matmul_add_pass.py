"""MatMul/BatchMatMulV2 + Add -> GEMM, with hand-built patterns and captured tensors.

Our re-creation of CANN sample pattern_base_pass/2 (spec/python-passes.md §7.2): patterns()
returns two Patterns whose captures are the matmul output (0) and the Add output (1);
meet_requirements only accepts float32 Add inputs; the replacement reads the transpose flags
of the matched matmul.
"""
from ge.es import GraphBuilder
from ge.graph import DataType
from ge.passes import (PassStage, PatternFusionPass, create_pattern, create_replacement,
                       register_fusion_pass)

try:
    from ge.es.math import GEMM, MatMul, Add
except ImportError:
    from ge.es.all import GEMM, MatMul, Add
try:
    from ge.es.nn import BatchMatMulV2
except ImportError:
    from ge.es.all import BatchMatMulV2


def _flag(node, name):
    try:
        return bool(node.get_attr(name))
    except RuntimeError:
        return False


@register_fusion_pass(name="PythonFuseMatMulAndAddCaptureTensorPass",
                      stage=PassStage.BEFORE_INFER_SHAPE)
class PythonFuseMatMulAndAddCaptureTensorPass(PatternFusionPass):

    def patterns(self):
        print("Define pattern for FuseMatMulAndAddPass in capture tensor sample")
        result = []
        for k, matmul_op in enumerate((MatMul, BatchMatMulV2)):
            builder = GraphBuilder(f"pattern{k}")
            a, b, c = builder.create_inputs(3)
            matmul = matmul_op(a, b)
            add = Add(matmul, c)
            pat = create_pattern(builder.build_and_reset([add]))
            pat.capture_tensor(matmul).capture_tensor(add)
            result.append(pat)
        return result

    def meet_requirements(self, match_result):
        print("Define MeetRequirements for FuseMatMulAndAddPass in capture tensor sample")
        add = match_result.get_captured_tensor(1).node
        dt0 = add.get_input_desc(0).get_data_type()
        dt1 = add.get_input_desc(1).get_data_type()
        if dt0 != DataType.DT_FLOAT or dt1 != DataType.DT_FLOAT:
            print(f"Only support Add inputs are DT_FLOAT, got input0={dt0.name}, "
                  f"input1={dt1.name}")
            return False
        return True

    def replacement(self, match_result):
        print("Define replacement for FuseMatMulAndAddPass in capture tensor sample")
        matmul = match_result.get_captured_tensor(0).node
        builder = GraphBuilder("replacement")
        a, b, c = builder.create_inputs(3)
        alpha = builder.create_scalar_float(1.0)
        beta = builder.create_scalar_float(1.0)
        gemm = GEMM(a, b, c, alpha, beta, transpose_a=_flag(matmul, "transpose_x1"),
                    transpose_b=_flag(matmul, "transpose_x2"))
        return create_replacement(builder.build_and_reset([gemm]))
