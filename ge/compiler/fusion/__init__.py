"""Built-in fusion passes: named, reported in fusion_result.json and switchable like user
passes (ge.optimizationSwitch / --fusion_switch_file).  They run at the built-in fusion stage,
between AfterInferShape and AfterBuiltinFusionPass (spec/python-passes.md §6.1)."""
from __future__ import annotations

from ge.passes import FusionBasePass, PassStage
from ge.passes.registry import PASS_KIND_FUSION_BASE, PassDescriptor
from ge.passes.runner import _run_pass, register_known_pass_names
from ge.passes.switches import PassSwitches

from . import rules


def _builtin(name: str, rewrite):
    """A FusionBasePass class running `rewrite(graph) -> count` and counting its effects."""

    def run(self, graph, context):
        count = rewrite(graph)
        stats = getattr(context, "_ge_stats", None)
        if stats is not None:
            stats["match"] += count
            stats["effect"] += count
        return None

    cls = type(name, (FusionBasePass,), {"run": run, "__module__": __name__,
                                         "__doc__": rewrite.__doc__})
    return PassDescriptor(f"{__name__}:{name}:{name}", name, __name__, name,
                          PassStage.AFTER_INFER_SHAPE, PASS_KIND_FUSION_BASE, cls, [], True)


# One row per built-in pass: its name (what switches and the report use) and its rewrite.
BUILTIN_PASSES = tuple(_builtin(name, fn) for name, fn in (
    ("ConvBatchNormFusionPass", rules.fold_conv_batchnorm),
    ("MatMulBiasAddFusionPass", rules.fuse_matmul_add),
    ("ScalarElementwiseFoldingPass", rules.fold_scalar_elementwise),
    # after the scalar folding (they match its Muls / Adds) and the bias fusion, in this order
    ("GeluErfFusionPass", rules.fuse_gelu_erf),
    ("ConvAddFusionPass", rules.fuse_conv_add),     # before the Relu after the Add is taken
    ("ConvActivationFusionPass", rules.fuse_conv_activation),
    ("MatMulActivationFusionPass", rules.fuse_matmul_activation),
    ("LayerNormBroadcastFoldingPass", rules.fold_layer_norm_broadcast),
))
register_known_pass_names(d.pass_name for d in BUILTIN_PASSES)


def run_builtin(graph, options: dict, report) -> None:
    switches = PassSwitches.from_options(options)
    for desc in BUILTIN_PASSES:             # table order: a rule may match what one before made
        if switches.enabled(desc.pass_name, True, False):
            _run_pass(desc, graph, desc.stage, options, report)
        elif report is not None:
            report.switched_off(graph.name, desc.pass_name, desc.stage.value)
