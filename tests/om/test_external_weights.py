"""Issue #17 parts 1-2: lazy weights and --external_weight (docs/om.md "Lazy weights",
"External weights").

A two-MatMul ONNX model whose large initializers are 512 KB and 128 KB, saved once with its
weights inside the .onnx file and once with external data: the parser hands the compiler views
of the mapped files, the OM writer copies those bytes file to file, and --external_weight=1/2
(flag, --raw_ge_options, ge.offline_compile) moves them to weight files that the runtime maps
and checks.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from ge.errors import GeError
from ge.graph.filebacked import file_range_of
from ge.om import read_om

from _netron import NETRON, NODE, netron_view

REPO = Path(__file__).resolve().parents[2]
SOC = "--soc_version=Ascend310P3"
F32 = "--precision_mode=must_keep_origin_dtype"


def _mlp(rows: int = 256, hidden: int = 512, out: int = 64):
    rng = np.random.default_rng(7)
    weights = {"W": rng.standard_normal((rows, hidden)).astype(np.float32),
               "B": rng.standard_normal(hidden).astype(np.float32),
               "W2": rng.standard_normal((hidden, out)).astype(np.float32)}
    nodes = [helper.make_node("MatMul", ["x", "W"], ["h"]),
             helper.make_node("Add", ["h", "B"], ["h2"]),
             helper.make_node("Relu", ["h2"], ["h3"]),
             helper.make_node("MatMul", ["h3", "W2"], ["y"])]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, rows])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, out])],
        [numpy_helper.from_array(v, k) for k, v in weights.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), weights


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("lazy")
    model, weights = _mlp()
    inline, external = root / "inline", root / "external"
    inline.mkdir()
    external.mkdir()
    onnx.save(model, str(inline / "m.onnx"))
    onnx.save_model(model, str(external / "m.onnx"), save_as_external_data=True,
                    all_tensors_to_one_file=True, location="m.bin", size_threshold=1024)
    return {"inline": inline / "m.onnx", "external": external / "m.onnx", "weights": weights,
            "root": root}


@pytest.fixture(scope="module")
def x():
    return np.random.default_rng(3).standard_normal((4, 256)).astype(np.float32)


def _compile(atc_main, model, out_dir: Path, *extra):
    out_dir.mkdir(parents=True, exist_ok=True)
    run = atc_main(f"--model={model}", "--framework=5", "--output=net", SOC, F32, *extra,
                   cwd=out_dir)
    assert run.rc == 0, run.text
    return out_dir / "net.om"


def _env():
    return dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(REPO)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))


def _run(om, x):
    import ge.runtime
    return ge.runtime.load(str(om)).run([x])[0]


@pytest.fixture(scope="module")
def oms(models, atc_main):
    root = models["root"]
    out = {"inline": _compile(atc_main, models["inline"], root / "o_inline"),
           "external": _compile(atc_main, models["external"], root / "o_external")}
    for mode in ("1", "2"):
        out[f"flag{mode}"] = _compile(atc_main, models["external"], root / f"flag{mode}",
                                      f"--external_weight={mode}")
        raw = root / f"raw{mode}.json"
        raw.write_text(json.dumps({"compile options": {"global": {"ge.externalWeight": mode}}}))
        out[f"raw{mode}"] = _compile(atc_main, models["inline"], root / f"raw{mode}",
                                     f"--raw_ge_options={raw}")
    return out


@pytest.mark.parametrize("which", ["inline", "external"])
def test_initializers_are_views_of_the_model_files(models, which):
    """The parser reads no weight: big initializers are views of the mapped .onnx (raw_data
    located by a scan of the wire format) or of the external-data file."""
    from ge.parser.onnx import parse_onnx
    graph = parse_onnx(str(models[which]), {"input_shape": "x:4,256"})
    consts = {n.name.split("_Initializer_")[0]: n.get_attr("value").numpy()
              for n in graph.get_all_nodes() if n.type == "Const"}
    expected_file = "m.onnx" if which == "inline" else "m.bin"
    for name in ("W", "W2"):
        where = file_range_of(consts[name])
        assert where is not None and os.path.basename(where.path) == expected_file
        assert where.length == models["weights"][name].nbytes
        np.testing.assert_array_equal(consts[name], models["weights"][name])
    np.testing.assert_array_equal(consts["B"], models["weights"]["B"])


def test_inline_and_external_data_give_the_same_om(models, oms, x):
    a, b = read_om(str(oms["inline"])), read_om(str(oms["external"]))
    assert a.weights == b.weights and len(a.weights) > 655360
    for om in (a, b):
        del om.model_def.attr["atc_cmdline"]
    assert a.model_def == b.model_def
    import onnxruntime as ort
    want = ort.InferenceSession(str(models["external"])).run(None, {"x": x})[0]
    np.testing.assert_allclose(_run(oms["inline"], x), want, rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(_run(oms["external"], x), _run(oms["inline"], x))


def _file_constants(om_path):
    om = read_om(str(om_path))
    from ge.graph import serialize as ser
    return om, {op.name: {k: ser.attr_from_proto(op.attr[k])[1] for k in
                          ("location", "offset", "length", "shape", "_value_sha256")}
                for g in om.model_def.graph for op in g.op if op.type == "FileConstant"}


@pytest.mark.parametrize("mode", ["1", "2"])
def test_external_weight_modes(models, oms, x, mode):
    om, fcs = _file_constants(oms[f"flag{mode}"])
    assert not om.weights and len(fcs) == 3          # W, B, W2: no WEIGHTS_DATA left
    assert not any(op.type == "Const" for g in om.model_def.graph for op in g.op
                   if "value" in op.attr and op.attr["value"].t.desc.weight_size)
    weight_dir = oms[f"flag{mode}"].parent / "weight"
    names = sorted(os.listdir(weight_dir))
    if mode == "1":
        assert names == sorted(f"weight_{fc['_value_sha256']}" for fc in fcs.values())
        assert all(fc["offset"] == 0 for fc in fcs.values())
    else:
        assert names == ["net_weight_combined"]
        assert all(fc["offset"] % 512 == 0 for fc in fcs.values())
    w = next(fc for name, fc in fcs.items() if name.startswith("W_"))
    data = (weight_dir / w["location"]).read_bytes()[w["offset"]:w["offset"] + w["length"]]
    assert data == models["weights"]["W"].tobytes() and w["shape"] == [256, 512]
    # the same OM and weight files whichever way the option came
    raw = _file_constants(oms[f"raw{mode}"])[1]
    assert raw == fcs
    for name in names:
        assert (weight_dir / name).read_bytes() == \
            (oms[f"raw{mode}"].parent / "weight" / name).read_bytes()
    np.testing.assert_array_equal(_run(oms[f"flag{mode}"], x), _run(oms["inline"], x))


def test_offline_compile_writes_the_same_weight_files(models, oms, tmp_path):
    import ge.offline_compile as oc
    from ge.parser.onnx import parse_onnx
    graph = parse_onnx(str(models["external"]), {"input_shape": "x:4,256"})
    model = oc.build_model(graph, {"ge.socVersion": "Ascend310P3", "ge.externalWeight": "2",
                                   "ge.exec.precision_mode": "must_keep_origin_dtype"})
    oc.save_model(str(tmp_path / "net"), model)
    ours = _file_constants(tmp_path / "net.om")[1]
    assert sorted(ours.values(), key=str) == sorted(_file_constants(oms["flag2"])[1].values(),
                                                    key=str)
    assert (tmp_path / "weight" / "net_weight_combined").read_bytes() == \
        (oms["flag2"].parent / "weight" / "net_weight_combined").read_bytes()
    with pytest.raises(GeError) as bad:
        oc.save_model(str(tmp_path / "bad"), oc.build_model(
            parse_onnx(str(models["external"])), {"ge.socVersion": "Ascend310P3",
                                                  "ge.externalWeight": "5"}))
    assert bad.value.code == "E10001" and not (tmp_path / "bad.om").exists()


def test_mode6_mode1_and_netron_show_file_constants(oms, atc_main, tmp_path):
    om = oms["flag2"]
    run = atc_main("--mode=6", f"--om={om}", cwd=tmp_path)
    assert run.rc == 0, run.text
    assert "external info: file[weight/net_weight_combined], file_constant_num[3]" in run.text
    run = atc_main("--mode=1", f"--om={om}", "--json=net.json", cwd=tmp_path)
    assert run.rc == 0, run.text
    ops = json.loads((tmp_path / "net.json").read_text())["graph"][0]["op"]
    assert sum(op["type"] == "FileConstant" for op in ops) == 3
    if NODE and NETRON:
        (seen,) = netron_view(om)["graphs"]
        assert sum(n["type"] == "FileConstant" for n in seen["nodes"]) == 3


@pytest.mark.parametrize("damage", ["changed", "truncated", "missing"])
def test_a_damaged_weight_file_is_refused(oms, tmp_path, damage):
    import shutil
    shutil.copytree(oms["flag2"].parent, tmp_path / "m")
    weight = tmp_path / "m" / "weight" / "net_weight_combined"
    if damage == "changed":
        data = bytearray(weight.read_bytes())
        data[1000] ^= 1
        weight.write_bytes(bytes(data))
    elif damage == "truncated":
        os.truncate(weight, 4096)
    else:
        weight.unlink()
    with pytest.raises(GeError) as bad:
        _run(tmp_path / "m" / "net.om", np.zeros((4, 256), np.float32))
    assert bad.value.code == "EP0310"
    assert "net_weight_combined" in str(bad.value)
    run = subprocess.run([sys.executable, "-m", "ge.runtime", "--model",
                          str(tmp_path / "m" / "net.om")], capture_output=True, text=True,
                         cwd=tmp_path, env=_env(), timeout=300)
    assert run.returncode == 255 and "EP0310" in run.stdout + run.stderr
    assert "Traceback" not in run.stdout + run.stderr


_PEAK = ("import resource, subprocess, sys\n"
         "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
         "print(done.stdout, done.stderr, file=sys.stderr)\n"
         "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
         "sys.exit(done.returncode)\n")


def test_peak_memory_does_not_grow_with_the_weights(tmp_path):
    """A compile of 128 MB of external weights peaks within 48 MB of the same graph with
    32 KB of them: the weights are copied file to file, never held."""
    peaks = {}
    for label, cols in (("small", 2), ("large", 8192)):
        model, _ = _mlp(rows=4096, hidden=cols, out=2)
        d = tmp_path / label
        d.mkdir()
        onnx.save_model(model, str(d / "m.onnx"), save_as_external_data=True,
                        all_tensors_to_one_file=True, location="m.bin", size_threshold=0)
        # measured by a small parent: a child forked from pytest itself would start with
        # pytest's own high-water mark (ru_maxrss survives exec)
        run = subprocess.run([sys.executable, "-c", _PEAK, sys.executable, "-m", "ge.atc",
                              f"--model={d / 'm.onnx'}", "--framework=5",
                              f"--output={d / 'net'}", SOC, F32],
                             cwd=d, env=_env(), capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, run.stdout + run.stderr
        peaks[label] = int(run.stdout.split()[-1]) << 10
    assert os.path.getsize(tmp_path / "large" / "net.om") > 128 << 20
    assert peaks["large"] - peaks["small"] < 48 << 20, peaks


def test_tensorflow_const_bytes_stay_in_the_pb(tmp_path, atc_main, x):
    """A frozen GraphDef (built with our schema): the Const's tensor_content is a view of the
    mapped .pb, and the compiled OM computes x @ W."""
    from ge.parser.tensorflow import parse_tensorflow
    from ge.proto.tensorflow import GraphDef
    w = np.random.default_rng(5).standard_normal((256, 512)).astype(np.float32)
    graph = GraphDef()
    inp = graph.node.add(name="x", op="Placeholder")
    inp.attr["dtype"].type = 1
    for size in (4, 256):
        inp.attr["shape"].shape.dim.add(size=size)
    const = graph.node.add(name="W", op="Const")
    const.attr["dtype"].type = 1
    tensor = const.attr["value"].tensor
    tensor.dtype = 1
    for size in w.shape:
        tensor.tensor_shape.dim.add(size=size)
    tensor.tensor_content = w.tobytes()
    graph.node.add(name="y", op="MatMul", input=["x", "W"]).attr["T"].type = 1
    (tmp_path / "m.pb").write_bytes(graph.SerializeToString())
    (node,) = [n for n in parse_tensorflow(str(tmp_path / "m.pb")).get_all_nodes()
               if n.type == "Const"]
    where = file_range_of(node.get_attr("value").numpy())
    assert where is not None and where.path.endswith("m.pb") and where.length == w.nbytes
    run = atc_main("--model=m.pb", "--framework=3", "--output=net", SOC, F32, cwd=tmp_path)
    assert run.rc == 0, run.text
    np.testing.assert_allclose(_run(tmp_path / "net.om", x), x @ w, rtol=1e-5, atol=1e-4)


def test_caffe_blob_bytes_stay_in_the_caffemodel(tmp_path, atc_main):
    """An InnerProduct of 64 x 1024 floats: its weight blob is a view of the mapped
    .caffemodel (packed `data` left in the file), and the OM computes the layer."""
    from bench.models.caffe_nets import CaffeNet
    from ge.parser.caffe import parse_caffe
    net = CaffeNet("ip", seed=3)
    x_name = net.input("data", (1, 1024))
    net.layer("InnerProduct", "fc", [x_name], blobs=[(64, 1024), (64,)],
              inner_product_param={"num_output": 64})
    prototxt, weight = net.save(tmp_path)
    consts = [n.get_attr("value").numpy() for n in
              parse_caffe(prototxt, weight, {"input_shape": "data:1,1024"}).get_all_nodes()
              if n.type == "Const"]
    where = [file_range_of(c) for c in consts if c.size == 64 * 1024]
    assert len(where) == 1 and where[0] is not None and where[0].path.endswith(".caffemodel")
    run = atc_main("--framework=0", f"--model={prototxt}", f"--weight={weight}",
                   "--output=net", SOC, F32, cwd=tmp_path)
    assert run.rc == 0, run.text
    data = np.random.default_rng(2).standard_normal((1, 1024)).astype(np.float32)
    w, b = net.blobs["fc"]
    np.testing.assert_allclose(_run(tmp_path / "net.om", data), data @ w.T + b, rtol=1e-5,
                               atol=1e-4)


def test_a_symlinked_model_in_another_directory_compiles(models, oms, atc_main, tmp_path):
    """A model reached through a symlink (models kept in one shared place): its in-file weights
    are read from the real file, and the OM is the one of the model itself; a model whose own
    external data points outside its directory is still refused (E13026)."""
    link_dir = tmp_path / "links"
    link_dir.mkdir()
    (link_dir / "m.onnx").symlink_to(models["inline"])
    om = _compile(atc_main, link_dir / "m.onnx", tmp_path / "out")
    assert read_om(str(om)).weights == read_om(str(oms["inline"])).weights
    escaping = onnx.load(str(models["external"]), load_external_data=False)
    for t in escaping.graph.initializer:
        for e in t.external_data:
            if e.key == "location":
                e.value = "../" + e.value
    (tmp_path / "escape").mkdir()
    onnx.save(escaping, str(tmp_path / "escape" / "m.onnx"))
    run = atc_main(f"--model={tmp_path / 'escape' / 'm.onnx'}", "--framework=5",
                   "--output=net", SOC, F32, cwd=tmp_path)
    assert run.rc == 255 and "E13026" in run.text and "outside the model directory" in run.text


def test_identical_weights_share_one_file_and_block(tmp_path, atc_main):
    """72 MiB of weights (hashed on all cores), two of them identical: --external_weight=1
    writes one file per distinct content, named by its sha256, and =2 one block per content;
    both OMs compute x @ A + x @ B and x @ C."""
    import hashlib
    import ge.runtime
    rng = np.random.default_rng(11)
    a = rng.standard_normal((2048, 4096)).astype(np.float32)          # 32 MiB, twice
    c = rng.standard_normal((2048, 1024)).astype(np.float32)          # 8 MiB
    nodes = [helper.make_node("MatMul", ["x", "A"], ["ha"]),
             helper.make_node("MatMul", ["x", "B"], ["hb"]),
             helper.make_node("Add", ["ha", "hb"], ["y"]),
             helper.make_node("MatMul", ["x", "C"], ["z"])]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2048])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4096]),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, [2, 1024])],
        [numpy_helper.from_array(v, k) for k, v in (("A", a), ("B", a.copy()), ("C", c))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save_model(model, str(tmp_path / "m.onnx"), save_as_external_data=True,
                    all_tensors_to_one_file=True, location="m.bin", size_threshold=1024)
    x = rng.standard_normal((2, 2048)).astype(np.float32)
    sha = {hashlib.sha256(v.tobytes()).hexdigest(): v.nbytes for v in (a, c)}
    for mode in ("1", "2"):
        om = _compile(atc_main, tmp_path / "m.onnx", tmp_path / mode, f"--external_weight={mode}")
        fcs = _file_constants(om)[1]
        assert len(fcs) == 3 and {fc["_value_sha256"] for fc in fcs.values()} == set(sha)
        files = {p.name: p.stat().st_size for p in (tmp_path / mode / "weight").iterdir()}
        if mode == "1":
            assert files == {f"weight_{h}": n for h, n in sha.items()}
        else:   # one block each, 512-aligned: A's, then C's
            assert files == {"net_weight_combined": (32 << 20) + (8 << 20)}
            assert {fc["offset"] for fc in fcs.values()} == {0, 32 << 20}
        y, z = ge.runtime.load(str(om)).run([x])
        np.testing.assert_allclose(y, 2 * (x @ a), rtol=1e-4, atol=1e-3)
        np.testing.assert_allclose(z, x @ c, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("mode", ["1", "2"])
def test_an_unwritable_weight_directory_is_e13004_and_no_om(models, atc_main, tmp_path, mode):
    """A regular file where the weight directory goes: E13004 names it, exit 255, no OM and no
    temporary left beside it."""
    (tmp_path / "weight").write_text("not a directory")
    run = atc_main(f"--model={models['external']}", "--framework=5", "--output=net", SOC, F32,
                   f"--external_weight={mode}", cwd=tmp_path)
    assert run.rc == 255 and "E13004" in run.text, run.text
    assert str(tmp_path / "weight") in run.text and "Traceback" not in run.text
    assert not any(p.suffix == ".om" or ".tmp-" in p.name for p in tmp_path.iterdir()), \
        sorted(p.name for p in tmp_path.iterdir())
