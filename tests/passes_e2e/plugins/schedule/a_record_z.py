"""Scheduling probe, scanned first: registers the name that sorts *last* at BeforeInferShape."""
import uuid

from ge.passes import FusionBasePass, PassStage, register_fusion_pass


@register_fusion_pass(name="E2eRecordZ", stage=PassStage.BEFORE_INFER_SHAPE)
class E2eRecordZ(FusionBasePass):
    def run(self, graph, context):
        # an instance's own tag, not id(): a freed instance's id may be reused by the next
        tag = self.__dict__.setdefault("_e2e_tag", uuid.uuid4().hex)
        print(f"[e2e-record] BeforeInferShape E2eRecordZ {graph.name} {tag}")
        return True
