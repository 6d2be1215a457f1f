"""One graph, two entries: `atc --framework=1` on its AIR file and
`ge.offline_compile.build_model` with the same user options hand the compiler the same option
map and write the same OM (the `atc_cmdline` model attribute aside)."""
from __future__ import annotations

import numpy as np
import pytest

from _om_compare import assert_same_om_except_cmdline
from test_probes import START, SUCCESS

from ge.compiler import api
from ge.es import GraphBuilder
from ge.es.all import Add, Const, Mul, Relu
from ge.graph import DataType, Graph, Tensor
from ge.graph.serialize import save_air
from ge.offline_compile import build_model, save_model
from ge.om import read_om

SOC = "Ascend310P3"
SWITCH = "ScalarElementwiseFoldingPass:off"     # keeps the Mul, which the pass would fold
# Keys only ATC's map holds: its own bookkeeping, and the parser context its checks default
# (input_format; an AIR graph does not read it).
ATC_ONLY = {"MULTI_THREAD_COMPILE", "ge.optionNameMap", "input_format"}


def scaled_graph() -> Graph:
    builder = GraphBuilder("scaled")
    x = builder.create_input(0, shape=[2, 3])
    two = Const(builder, value=Tensor(np.array([2.0], np.float32), data_type=DataType.DT_FLOAT,
                                      shape=[1]))
    bias = Const(builder, value=Tensor(np.array([0.5, -1.0, 2.0], np.float32),
                                       data_type=DataType.DT_FLOAT, shape=[3]))
    return builder.build_and_reset([Add(Relu(Mul(x, two)), bias)])


@pytest.fixture
def option_maps(monkeypatch) -> list[dict]:
    """The option map of every compile in this test, as the pipeline receives it."""
    maps: list[dict] = []
    build_graph = api.build_graph

    def recording(graph, options, framework=5):
        maps.append(dict(options))
        return build_graph(graph, options, framework)
    monkeypatch.setattr(api, "build_graph", recording)
    return maps


def test_atc_and_offline_compile_write_the_same_om(atc, work, option_maps):
    save_air(scaled_graph(), str(work / "scaled.air"))
    run = atc("--framework=1", "--model=scaled.air", "--output=by_atc", f"--soc_version={SOC}",
              f"--optimization_switch={SWITCH}")
    assert run.lines[:3] == [START, "...", SUCCESS], run.stdout
    model = build_model(scaled_graph(), {"ge.socVersion": SOC, "ge.optimizationSwitch": SWITCH})
    save_model(str(work / "by_api"), model)

    by_atc, by_api = option_maps
    assert by_api["ge.optimizationSwitch"] == f"{SWITCH};forbidden_close_pass:on"
    assert {k: v for k, v in by_atc.items() if k not in ATC_ONLY} == by_api
    assert "Mul" in [n.type for n in read_om(str(work / "by_api.om")).to_graph().nodes]
    assert_same_om_except_cmdline(work / "by_atc.om", work / "by_api.om")
