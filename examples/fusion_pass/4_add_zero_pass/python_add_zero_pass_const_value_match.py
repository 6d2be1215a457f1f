"""Remove `x + 0.0` using const-value matching: only a float32 scalar 0.0 constant matches.

Our re-creation of CANN sample pattern_base_pass/4, const-value variant (spec §7.5).
"""
from ge.passes import (PassStage, PatternFusionPass, PatternMatcherConfigBuilder, pattern,
                       register_fusion_pass)


@register_fusion_pass(name="PythonAddZeroConstValueMatchPass",
                      stage=PassStage.BEFORE_INFER_SHAPE)
class PythonAddZeroConstValueMatchPass(PatternFusionPass):

    def __init__(self):
        super().__init__(PatternMatcherConfigBuilder().enable_const_value_match().build())

    @pattern
    def add_zero(self, inputs):
        return inputs[0] + 0.0

    def meet_requirements(self, match_result):
        captured = match_result.get_captured_tensor(0)
        print(f"[PythonAddZeroConstValueMatchPass] "
              f"matched={match_result.get_pattern_graph_name()} "
              f"captured={captured.node.name}:{captured.index}")
        return True

    def replacement(self, inputs):
        return inputs[0]
