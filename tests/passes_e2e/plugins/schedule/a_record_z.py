"""Scheduling probe, scanned first: registers the name that sorts *last* at BeforeInferShape."""
from ge.passes import FusionBasePass, PassStage, register_fusion_pass


@register_fusion_pass(name="E2eRecordZ", stage=PassStage.BEFORE_INFER_SHAPE)
class E2eRecordZ(FusionBasePass):
    def run(self, graph, context):
        print(f"[e2e-record] BeforeInferShape E2eRecordZ {graph.name} {id(self)}")
        return True
