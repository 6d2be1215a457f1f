"""The Caffe command line: --input_shape on input names, --out_nodes as layer:index and as top
names, --input_format, --op_name_map (flag and --raw_ge_options), --mode=1 with --framework=0
(the prototxt as JSON), --mode=3 (pre-check), and the same OM from atc and pyatc.""" 
from __future__ import annotations

import json
import subprocess

import pytest

from _om_compare import same_om_but_model_def
from _samples import SAMPLE_SOC
from bench.models import caffe_nets
from bench.models.caffe_nets import CaffeNet
from ge.om import read_om
from ge.runtime import load

MAP = "DetectionOutput:SSDDetectionOutput\n"


def _net() -> CaffeNet:
    n = CaffeNet("cli", seed=2)
    x = n.input("data", (1, 3, 8, 8), style="input_dim")
    x = n.relu(n.conv(x, 3, 4, 3, name="conv1"))
    n.layer("Slice", "slice", [x], ["left", "right"], slice_param={"axis": 1})
    n.layer("Sigmoid", "sig", ["left"])
    n.layer("TanH", "tanh", ["right"])
    return n


def _compile(atc_main, work, *args):
    prototxt, weight = _net().save(work)
    run = atc_main("--framework=0", f"--model={prototxt}", f"--weight={weight}",
                   "--output=m", f"--soc_version={SAMPLE_SOC}", "--precision_mode=must_keep_origin_dtype", *args, cwd=work)
    assert run.rc == 0, run.text
    return load(str(work / "m.om"))


def test_default_outputs_are_the_unread_tops(atc_main, tmp_path):
    model = _compile(atc_main, tmp_path)
    assert [o.shape for o in model.outputs] == [(1, 2, 6, 6), (1, 2, 6, 6)]


@pytest.mark.parametrize("out_nodes", ["slice:1;conv1:0", "right;conv1"])
def test_out_nodes_as_layer_index_and_as_top_names(out_nodes, atc_main, tmp_path):
    model = _compile(atc_main, tmp_path, f"--out_nodes={out_nodes}")
    assert [o.shape for o in model.outputs] == [(1, 2, 6, 6), (1, 4, 6, 6)]


def test_input_shape_on_input_names(atc_main, tmp_path):
    model = _compile(atc_main, tmp_path, "--input_shape=data:2,3,12,12")
    assert model.inputs[0].shape == (2, 3, 12, 12)
    assert model.outputs[0].shape == (2, 2, 10, 10)


def test_unknown_input_shape_name(atc_main, tmp_path):
    prototxt, weight = _net().save(tmp_path)
    run = atc_main("--framework=0", f"--model={prototxt}", f"--weight={weight}",
                   "--output=m", f"--soc_version={SAMPLE_SOC}", "--input_shape=image:1,3,8,8",
                   cwd=tmp_path)
    assert run.rc == 255 and "E10016" in run.text and "image" in run.text


@pytest.mark.parametrize("fmt", ["NCHW", "ND"])
def test_input_format(fmt, atc_main, tmp_path):
    _compile(atc_main, tmp_path, f"--input_format={fmt}")
    run = atc_main("--mode=1", f"--om={tmp_path / 'm.om'}", f"--json={tmp_path / 'm.json'}",
                   cwd=tmp_path)
    assert run.rc == 0, run.text
    ops = json.loads((tmp_path / "m.json").read_text())["graph"][0]["op"]
    data = next(op for op in ops if op["type"] == "Data")
    assert data["output_desc"][0]["layout"] == fmt


def test_input_format_refused_value(atc_main, tmp_path):
    prototxt, weight = _net().save(tmp_path)
    run = atc_main("--framework=0", f"--model={prototxt}", f"--weight={weight}",
                   "--output=m", f"--soc_version={SAMPLE_SOC}", "--input_format=NHWC",
                   cwd=tmp_path)
    assert run.rc == 255 and "NCHW or ND in Caffe model" in run.text


def test_mode1_prototxt_to_json(atc_main, tmp_path):
    prototxt, _ = _net().save(tmp_path)
    run = atc_main("--mode=1", "--framework=0", f"--om={prototxt}",
                   f"--json={tmp_path / 'net.json'}", cwd=tmp_path)
    assert run.rc == 0, run.text
    net = json.loads((tmp_path / "net.json").read_text())
    assert net["name"] == "cli" and net["input_dim"] == [1, 3, 8, 8]
    assert [layer["type"] for layer in net["layer"]] == ["Convolution", "ReLU", "Slice",
                                                          "Sigmoid", "TanH"]
    assert net["layer"][0]["convolution_param"]["num_output"] == 4


def test_mode3_precheck(atc_main, tmp_path):
    prototxt, weight = _net().save(tmp_path)
    with open(prototxt, "a") as f:
        f.write('layer { name: "odd" type: "Odd" bottom: "left" top: "odd" }\n')
    report = tmp_path / "check.json"
    run = atc_main("--mode=3", "--framework=0", f"--model={prototxt}", f"--weight={weight}",
                   f"--soc_version={SAMPLE_SOC}", f"--check_report={report}", cwd=tmp_path)
    assert run.rc == 255 and "EP0003" in run.text
    result = json.loads(report.read_text())
    assert result["name"] == "cli" and result["fail"] == 1
    assert [(op["name"], op["result"]) for op in result["op"]][-2:] == \
        [("tanh", "success"), ("odd", "failed")]


def _ssd(work):
    work.mkdir()
    (work / "map.txt").write_text(MAP)
    return caffe_nets.ssd_head(width_div=8, image=32, keep_top_k=10).save(work)


def test_op_name_map_flag_and_raw_option_give_the_same_om(atc_main, tmp_path):
    """Both with every op on AiCpu (no kernel compile: the op set is what is compared)."""
    graph = {"ge.exec.exclude_engines": "AiCore|AiVec"}
    raws = {"flag": {"graph": graph},
            "raw": {"global": {"op_name_map": "map.txt"}, "graph": graph}}
    oms = []
    for name, extra in (("flag", ("--op_name_map=map.txt",)), ("raw", ())):
        work = tmp_path / name
        prototxt, weight = _ssd(work)
        (work / "r.json").write_text(json.dumps({"compile options": raws[name]}))
        run = atc_main("--framework=0", f"--model={prototxt}", f"--weight={weight}",
                       "--output=m", f"--soc_version={SAMPLE_SOC}", "--raw_ge_options=r.json",
                       *extra, cwd=work)
        assert run.rc == 0, run.text
        oms.append(work / "m.om")
    same_om_but_model_def(*oms)
    types = {op.type for g in read_om(str(oms[0])).model_def.graph for op in g.op}
    assert "SSDDetectionOutput" in types


def test_atc_writes_the_om_pyatc_writes(entry_argv, entry_env, atc_main, tmp_path):
    """The installed `atc` (a process) and the ATC main flow pyatc runs (in process)."""
    prototxt, weight = _net().save(tmp_path / "in")
    args = ["--framework=0", f"--model={prototxt}", f"--weight={weight}", "--output=m",
            f"--soc_version={SAMPLE_SOC}"]
    (tmp_path / "proc").mkdir()
    (tmp_path / "here").mkdir()
    done = subprocess.run(entry_argv("atc") + args, cwd=tmp_path / "proc", env=entry_env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert atc_main(*args, cwd=tmp_path / "here").rc == 0
    same_om_but_model_def(tmp_path / "proc" / "m.om", tmp_path / "here" / "m.om")


def test_data_layer_takes_its_shape_from_input_shape(atc_main, tmp_path):
    """A `Data` (database reader) layer has no shape: --input_shape gives it (E11005 without);
    the TRAIN-phase reader beside it is skipped."""
    n = CaffeNet("reader", seed=4)
    n.layer("Data", "train_data", [], ["data"], include={"phase": 0},
            data_param={"source": "train_lmdb", "batch_size": 8})
    n.layer("Data", "data", [], ["data"], include={"phase": 1},
            data_param={"source": "test_lmdb", "batch_size": 1})
    n.layer("Sigmoid", "sig", ["data"])
    prototxt, weight = n.save(tmp_path)
    args = ("--framework=0", f"--model={prototxt}", f"--weight={weight}", "--output=m",
            f"--soc_version={SAMPLE_SOC}")
    run = atc_main(*args, cwd=tmp_path)
    assert run.rc == 255 and "E11005" in run.text and "for input data" in run.text
    run = atc_main(*args, "--input_shape=data:1,3,5,5", cwd=tmp_path)
    assert run.rc == 0, run.text
    model = load(str(tmp_path / "m.om"))
    assert [i.shape for i in model.inputs] == [(1, 3, 5, 5)]


def test_python_api_builds_the_graph_atc_builds(atc_main, tmp_path):
    """parse_caffe + ge.offline_compile.build_model (options as GE keys) gives the ops and
    output shapes of `atc --framework=0` with the same options as flags."""
    from ge.offline_compile import build_model, save_model
    from ge.parser.caffe import parse_caffe
    atc_model = _compile(atc_main, tmp_path, "--out_nodes=right;conv1")
    prototxt, weight = tmp_path / "cli.prototxt", tmp_path / "cli.caffemodel"
    graph = parse_caffe(prototxt, weight, {"ge.outputNodeName": "right;conv1"}, "m")
    save_model(str(tmp_path / "api.om"),
               build_model(graph, {"ge.socVersion": SAMPLE_SOC,
                                   "ge.exec.precision_mode": "must_keep_origin_dtype"}))
    api_model = load(str(tmp_path / "api.om"))
    assert [o.shape for o in api_model.outputs] == [o.shape for o in atc_model.outputs]

    def ops(path):
        return [(op.name, op.type) for g in read_om(str(path)).model_def.graph for op in g.op]
    assert ops(tmp_path / "api.om") == ops(tmp_path / "m.om")
