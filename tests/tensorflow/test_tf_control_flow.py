"""tf.cond and tf.while_loop built both ways: TF2 functions frozen into StatelessIf /
StatelessWhile with a function library, and tf.compat.v1 graphs with TF1 control flow
(Switch / Merge / Enter / Exit / NextIteration).  Constant predicates and trip counts fold at
compile time; a data-dependent cond becomes the IR's If (both branches run here); a loop
whose trip count depends on the inputs is refused with EP0503 naming the node."""
from __future__ import annotations

import numpy as np
import pytest

from ge.om import read_om
from ge.proto.tensorflow import GraphDef
from ge.runtime.compare_tf import compare_tf_model

# name -> (TF ops the frozen graph must hold, IR op types the OM must (not) hold)
CASES = {
    "cond_v2": ({"StatelessIf"}, {"If"}),
    "cond_v1_dynamic": ({"Switch", "Merge"}, {"If"}),
    "cond_v1": ({"Switch", "Merge"}, set()),
    "while_v2": ({"StatelessWhile"}, set()),
    "while_v1": ({"Enter", "Exit", "NextIteration", "LoopCond"}, set()),
}
INPUTS = {"positive": np.full((2, 3), 0.75, np.float32),
          "negative": np.linspace(-2.0, 0.5, 6, dtype=np.float32).reshape(2, 3)}


def _ops(path) -> set:
    graph = GraphDef()
    graph.ParseFromString(path.read_bytes())
    return {n.op for n in graph.node}


def _om_types(path) -> set:
    model_def = read_om(str(path)).model_def_with_weights()
    return {op.type for g in model_def.graph for op in g.op}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("sign", sorted(INPUTS))
def test_control_flow_matches_tensorflow(name, sign, frozen, tf_compiled):
    tf_ops, ir_ops = CASES[name]
    assert tf_ops <= _ops(frozen(name))
    om = tf_compiled(name)
    types = _om_types(om)
    assert ir_ops <= types
    assert not {"Switch", "Merge", "Enter", "Exit", "NextIteration"} & types
    if not ir_ops:           # folded or unrolled: no subgraph op left
        assert "If" not in types
    result = compare_tf_model(frozen(name), om, [INPUTS[sign]])
    assert all(d.ok for d in result.outputs), [(d.reference, d.max_abs) for d in result.outputs]


def test_data_dependent_loop_is_refused(frozen, atc_main, tmp_path):
    run = atc_main("--framework=3", f"--model={frozen('while_v2_dynamic')}", "--output=out",
                   "--soc_version=Ascend310", "--precision_mode=must_keep_origin_dtype", cwd=tmp_path)
    assert run.rc == 255
    assert "EP0503" in run.text and "Control flow node while (StatelessWhile)" in run.text
    assert not list(tmp_path.glob("out*"))
