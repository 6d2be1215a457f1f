"""The classic Caffe networks (CI widths) compile with pyatc --framework=0, open in Netron with
our mode-1 nodes, and match OpenCV's DNN module through ge.runtime.compare --caffe; the SSD head
compiles with --op_name_map DetectionOutput:SSDDetectionOutput (CANN's way), and a legacy V1
(`layers`) network is upgraded with a WP0600 warning."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from _netron import needs_netron, netron_view
from _samples import SAMPLE_SOC
from bench.models import caffe_nets
from ge.parser.caffe import parse_caffe
from ge.runtime.compare_caffe import compare_caffe


NETS = {
    "alexnet": lambda: caffe_nets.alexnet(width_div=16, image=67),
    "vgg16": lambda: caffe_nets.vgg16(width_div=16, image=32),
    "googlenet": lambda: caffe_nets.googlenet(width_div=16, image=32),
    "squeezenet": lambda: caffe_nets.squeezenet(width_div=16, image=35),
    "resnet": lambda: caffe_nets.resnet50(width_div=16, image=32, blocks=(1, 1, 1, 1)),
    # 64: OpenCV computes a padded depthwise convolution of a 1x1 map wrongly (numpy agrees with us)
    "mobilenet": lambda: caffe_nets.mobilenet(width_div=16, image=64),
    "v1": lambda: caffe_nets.alexnet(width_div=16, image=67),
}


MAP = "DetectionOutput:SSDDetectionOutput\n"


@pytest.fixture(scope="module")
def ssd(caffe_compile):
    return caffe_compile("ssd_head", lambda: caffe_nets.ssd_head(width_div=8, image=32,
                                                                 keep_top_k=10),
                         "--op_name_map=map.txt", files={"map.txt": MAP}, kernels=False)


def _model(caffe_compile, name):
    return caffe_compile(name, NETS[name], v1=name == "v1", kernels=name == "alexnet")


@pytest.mark.parametrize("name", sorted(NETS))
def test_network_matches_opencv(name, caffe_compile):
    model = _model(caffe_compile, name)
    result = compare_caffe(str(model.prototxt), str(model.weight), str(model.om), dump=True)
    assert result.ok, result.outputs
    assert result.first_divergence is None, result.first_divergence
    assert len(result.nodes) > 5


def test_v1_network_is_the_same_graph(caffe_compile, atc_main, tmp_path):
    legacy, current = _model(caffe_compile, "v1"), _model(caffe_compile, "alexnet")
    assert "layers {" in legacy.prototxt.read_text()

    def nodes(model):
        graph = parse_caffe(model.prototxt, model.weight)
        return [(n.name, n.type) for n in graph.get_all_nodes()]
    assert nodes(legacy) == nodes(current)
    run = atc_main("--mode=3", "--framework=0", f"--model={legacy.prototxt}", "--soc_version="
                   + SAMPLE_SOC,
                   f"--weight={legacy.weight}", cwd=tmp_path)
    assert run.rc == 0 and "WP0600" in run.text, run.text


def test_ssd_head_matches_opencv(ssd):
    result = compare_caffe(str(ssd.prototxt), str(ssd.weight), str(ssd.om), dump=True,
                           op_name_map=str(ssd.prototxt.parent / "map.txt"))
    assert result.ok and result.first_divergence is None, result.outputs
    assert result.outputs[0].shape == (1, 1, 10, 7)


def test_compare_command_line(caffe_compile):
    model = _model(caffe_compile, "googlenet")
    run = subprocess.run([sys.executable, "-m", "ge.runtime.compare", "--caffe",
                          str(model.prototxt), "--weight", str(model.weight), "--om",
                          str(model.om), "--dump"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "result: PASS" in run.stdout and "no divergence" in run.stdout


@needs_netron
@pytest.mark.parametrize("name", sorted(NETS) + ["ssd_head"])
def test_netron_opens_the_om(name, caffe_compile, atc_main, ssd, tmp_path):
    model = ssd if name == "ssd_head" else _model(caffe_compile, name)
    run = atc_main("--mode=1", f"--om={model.om}", f"--json={tmp_path / 'm.json'}",
                   cwd=tmp_path)
    assert run.rc == 0, run.text
    ours = json.loads((tmp_path / "m.json").read_text())
    seen = netron_view(str(model.om))
    assert seen["format"] == "DaVinci OM"
    ops = [(op["name"], op["type"]) for op in ours["graph"][0]["op"] if op["type"] != "Const"]
    assert [(n["name"], n["type"]) for n in seen["graphs"][0]["nodes"]] == ops
    assert any(t == "Conv2D" for _, t in ops)


def test_batchnorm_and_scale_fold_into_the_convolution(caffe_compile):
    """Caffe's Conv - BatchNorm - Scale: both fold into the convolution, as ONNX's Conv - BN."""
    from ge.om import read_om
    model = _model(caffe_compile, "resnet")
    types = [op.type for g in read_om(str(model.om)).model_def.graph for op in g.op]
    assert "Conv2D" in types and "BatchNorm" not in types and "Mul" not in types


def test_compare_without_opencv_is_a_coded_error(caffe_compile):
    """No OpenCV in the interpreter (cv2 made unimportable): EP0601 naming it, status 255."""
    model = _model(caffe_compile, "googlenet")
    code = ("import sys; sys.modules['cv2'] = None\n"
            "from ge.runtime._cli import guarded\n"
            "from ge.runtime.compare import main\n"
            "sys.exit(guarded(main, sys.argv[1:]))\n")
    run = subprocess.run([sys.executable, "-c", code, "--caffe", str(model.prototxt),
                          "--weight", str(model.weight), "--om", str(model.om)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 255
    assert "EP0601" in run.stdout + run.stderr and "opencv-python-headless" in \
        run.stdout + run.stderr
    assert "Traceback" not in run.stderr
