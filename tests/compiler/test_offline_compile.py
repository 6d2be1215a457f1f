"""ge.offline_compile: the Python build API over the same pipeline, GE option keys."""
import numpy as np
import pytest

from ge.errors import GeError
from ge.es import GraphBuilder
from ge.es.all import Add, Const, MatMul, Relu
from ge.graph import DataType, Graph, Tensor
from ge.offline_compile import build_model, save_model
from ge.om import read_om
from ge.ops.interpreter import run_graph

OPTIONS = {"ge.socVersion": "Ascend310P3", "ge.exec.exclude_engines": "AiCore|AiVec",
           "ge.exec.precision_mode": "must_keep_origin_dtype"}


def es_graph() -> Graph:
    builder = GraphBuilder("offline")
    x = builder.create_input(0, shape=[2, 3])
    w = Const(builder, value=Tensor(np.arange(12, dtype=np.float32).reshape(3, 4) / 10,
                                    data_type=DataType.DT_FLOAT, shape=[3, 4]))
    b = Const(builder, value=Tensor([0.5, -1.0, 0.0, 2.0], data_type=DataType.DT_FLOAT,
                                    shape=[4]))
    return builder.build_and_reset([Relu(Add(MatMul(x, w, None), b))])


def expected(x):
    w = np.arange(12, dtype=np.float32).reshape(3, 4) / 10
    return np.maximum(x @ w + np.array([0.5, -1.0, 0.0, 2.0], np.float32), 0)


def test_repeated_builds_in_one_process(tmp_path):
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    for i in range(3):                       # every build starts from fresh state
        model = build_model(es_graph(), OPTIONS)
        path = tmp_path / f"m{i}"
        save_model(str(path), model)
        graph = read_om(str(path) + ".om").to_graph()
        np.testing.assert_allclose(run_graph(graph, [x])[0], expected(x), rtol=1e-5)
    first = (tmp_path / "m0.om").read_bytes()
    assert all((tmp_path / f"m{i}.om").read_bytes() == first for i in (1, 2))


def test_options_are_ge_keys_and_reach_the_pipeline():
    model = build_model(es_graph(), dict(OPTIONS, **{"ge.optimizationSwitch":
                                                     "MatMulBiasAddFusionPass:off"}))
    assert "Add" in [n.type for n in model.graph.nodes]
    fused = build_model(es_graph(), OPTIONS)
    assert "Add" not in [n.type for n in fused.graph.nodes]


def test_exclude_every_engine_of_an_op_is_ez3003():
    with pytest.raises(GeError) as err:
        build_model(es_graph(), dict(OPTIONS, **{"ge.exec.exclude_engines": "AiCore|AiVec|AiCpu"}))
    assert err.value.code == "EZ3003"


def test_bad_arguments():
    with pytest.raises(TypeError):
        build_model("not a graph", OPTIONS)
    with pytest.raises(TypeError):
        build_model(es_graph(), {"ge.socVersion": 3})
    with pytest.raises(GeError) as err:
        build_model(es_graph(), {})
    assert err.value.code == "E10054"


def test_debug_compile_keeps_kernel_sources_in_debug_dir(tmp_path):
    options = {"ge.socVersion": "Ascend310P3", "ge.opDebugLevel": "1", "ge.exec.precision_mode": "must_keep_origin_dtype",
               "ge.debugDir": str(tmp_path), "ge.op_compiler_cache_dir": str(tmp_path / "c")}
    model = build_model(es_graph(), options)
    names = {ref.name for ref in model.context.kernels.node_kernels.values()}
    meta = tmp_path / "kernel_meta"
    # the graph's MatMul links the support object: its source is kept beside (docs/kernel-abi.md)
    assert names and {p.name for p in meta.iterdir()} == \
        {f"{n}{ext}" for n in names for ext in (".c", ".so")} | {"ge_support.c"}
    assert "ge_kernel" in (meta / f"{sorted(names)[0]}.c").read_text()
    assert not (tmp_path / "c").exists() or not any((tmp_path / "c").rglob("te_*"))


def test_another_host_target_is_refused():
    with pytest.raises(GeError) as err:
        build_model(es_graph(), dict(OPTIONS, **{"ge.host_env_os": "minios"}))
    assert err.value.code == "EP0002"
    import platform
    same = {"x86_64": "x86_64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())
    build_model(es_graph(), dict(OPTIONS, **{"ge.host_env_cpu": same}))
