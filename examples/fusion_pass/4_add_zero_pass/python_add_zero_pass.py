"""Remove `x + 0`: the Add's consumers read x directly.

Our re-creation of CANN sample pattern_base_pass/4 (spec/python-passes.md §7.4).  The pattern
constant is an int64 scalar, which the default matcher accepts for any constant; whether the
matched constant really is zero is decided in meet_requirements.
"""
from ge.graph import DataType
from ge.passes import PassStage, PatternFusionPass, pattern, register_fusion_pass


def _first(data):
    while isinstance(data, list):
        if not data:
            return None
        data = data[0]
    return data


def _is_zero(tensor):
    value = _first(tensor.data)
    if value is None:
        return False
    dtype = tensor.data_type
    if dtype == DataType.DT_FLOAT:
        return abs(float(value)) < 1e-6
    if dtype == DataType.DT_DOUBLE:
        return abs(float(value)) < 1e-15
    if dtype == DataType.DT_INT32:
        return int(value) == 0
    return False


@register_fusion_pass(name="PythonAddZeroPass", stage=PassStage.BEFORE_INFER_SHAPE)
class PythonAddZeroPass(PatternFusionPass):

    @pattern
    def add_zero(self, inputs):
        return inputs[0] + 0

    def meet_requirements(self, match_result):
        captured = match_result.get_captured_tensor(0)
        for node in match_result.get_matched_nodes():
            if node.type != "Const":
                continue
            tensor = node.get_attr("value")
            zero = _is_zero(tensor)
            print(f"[PythonAddZeroPass] matched={match_result.get_pattern_graph_name()} "
                  f"captured={captured.node.name}:{captured.index} "
                  f"const_dtype={tensor.data_type.name} zero={zero}")
            return zero
        return True

    def replacement(self, inputs):
        return inputs[0]
