"""Scheduling probe, scanned second: E2eRecordA (sorts before E2eRecordZ, registered after it)
and one recording pass per stage.  Each prints `[e2e-record] <stage> <pass> <graph> <instance>`
for every graph it runs on."""
import uuid

from ge.passes import FusionBasePass, PassStage, register_fusion_pass


def _recorder(name, stage):
    def run(self, graph, context):
        # an instance's own tag, not id(): a freed instance's id may be reused by the next
        tag = self.__dict__.setdefault("_e2e_tag", uuid.uuid4().hex)
        print(f"[e2e-record] {stage.value} {name} {graph.name} {tag}")
        return True
    cls = type(name, (FusionBasePass,), {"run": run})
    return register_fusion_pass(name=name, stage=stage)(cls)


E2eRecordA = _recorder("E2eRecordA", PassStage.BEFORE_INFER_SHAPE)
STAGE_PASSES = [_recorder(f"E2eRecord{stage.value}", stage) for stage in PassStage]
