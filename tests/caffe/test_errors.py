"""Bad Caffe input ends with CANN's code naming the culprit, exit status 255, no traceback and
nothing written: a caffemodel that does not belong to the prototxt (missing layer, missing
blob, wrong blob shape), a truncated caffemodel, text that is not a prototxt, unsupported layer
types (all reported at once), broken inputs and outputs."""
from __future__ import annotations

import pytest

from _samples import SAMPLE_SOC
from bench.models.caffe_nets import CaffeNet
from ge.proto.caffe import NetParameter


def _net() -> CaffeNet:
    n = CaffeNet("bad", seed=1)
    x = n.input("data", (1, 3, 8, 8))
    x = n.relu(n.conv(x, 3, 4, 3, name="conv1"))
    n.fc(x, 4 * 6 * 6, 5, name="fc1")
    return n


def _weights(n: CaffeNet, edit) -> bytes:
    w = n.weights()
    edit(w)
    return w.SerializeToString()


def _drop_layer(w: NetParameter) -> None:
    del w.layer[1]                                   # conv1's weights


def _drop_bias(w: NetParameter) -> None:
    del w.layer[1].blobs[1]


def _wrong_shape(w: NetParameter) -> None:
    blob = w.layer[3].blobs[0]                       # fc1: [5, 144] -> [5, 100]
    del blob.shape.dim[:]
    blob.shape.dim.extend([5, 100])
    del blob.data[500:]


CASES = {   # name: (prototxt edit or None, weight bytes maker, code, text the message names)
    "missing_layer": (None, lambda n: _weights(n, _drop_layer), "E11029", "conv1"),
    "missing_blob": (None, lambda n: _weights(n, _drop_bias), "E11033", "conv1.blobs[1]"),
    "wrong_blob_shape": (None, lambda n: _weights(n, _wrong_shape), "E11033", "fc1.blobs[0]"),
    "truncated": (None, lambda n: n.weights().SerializeToString()[:-7], "E19005",
                  "bad.caffemodel"),
    "weight_not_binary": (None, lambda n: b"layer { name: 'x' }\n" * 3, "E19005",
                          "bad.caffemodel"),
    "weight_without_layers": (None, lambda n: NetParameter(name="x").SerializeToString(),
                              "E11024", "Invalid Caffe weight file"),
    "not_prototxt": (lambda text: "{{ this is not a net ]]\n", None, "E19005",
                     "bad.prototxt"),
    "prototxt_without_layers": (lambda text: 'name: "only a name"\n', None, "E11022",
                                "Invalid prototxt file"),
    "unsupported_layers": (lambda text: text + 'layer { name: "py" type: "Python" '
                           'bottom: "fc1" top: "py" }\nlayer { name: "odd" type: "Odd" '
                           'bottom: "py" top: "odd" }\n', None, "E11009", "odd (Odd)"),
    "detection_output": (lambda text: text + 'layer { name: "det" type: "DetectionOutput" '
                         'bottom: "fc1" top: "det" }\n', None, "E11008", "DetectionOutput"),
    "unknown_bottom": (lambda text: text + 'layer { name: "r2" type: "ReLU" bottom: "nope" '
                       'top: "r2" }\n', None, "E11012", "Unknown bottom blob nope at layer r2"),
    "bad_name": (lambda text: text + 'layer { name: "r&2" type: "ReLU" bottom: "fc1" '
                 'top: "r2" }\n', None, "E11018", "r&2"),
    "input_dim_count": (lambda text: 'input: "a" input_dim: 1 input_dim: 3\n' + text, None,
                        "E11003", "is 2, which is not 4x the input count 1"),
    "input_dim_and_shape": (lambda text: 'input: "a" input_dim: 1 input_dim: 3 input_dim: 8 '
                            'input_dim: 8 input_shape { dim: 1 }\n' + text, None, "E11001",
                            "mutually exclusive"),
    "input_without_shape": (lambda text: 'input: "a"\n' + text, None, "E11005",
                            "for input a"),
    "input_shape_count": (lambda text: 'input: "a" input: "b" input_shape { dim: 1 }\n' + text,
                          None, "E11004", "input shapes is 1, which does not match the number "
                          "of inputs 2"),
    "input_zero_dim": (lambda text: text.replace("dim: 8", "dim: 0", 1), None, "E11027",
                       "Op data with optype Data"),
    "input_two_tops": (lambda text: text.replace('top: "data"', 'top: "data" top: "d2"', 1),
                       None, "E11035", "data node data is not 1 but 2"),
    "inputs_share_a_top": (lambda text: text + 'layer { name: "data2" type: "Input" '
                           'top: "data" input_param { shape { dim: 1 } } }\n', None, "E11036",
                           "duplicate top blobs data"),
    "parameter_refused": (lambda text: text + 'layer { name: "am" type: "ArgMax" bottom: '
                          '"fc1" top: "am" argmax_param { top_k: 2 } }\n', None, "E11010",
                          "Failed to convert Op am (optype ArgMax)"),
    "layer_without_top": (lambda text: text + 'layer { name: "r2" type: "ReLU" '
                          'bottom: "fc1" }\n', None, "E11037", "Op r2 has zero outputs"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_caffe_input(case, atc_main, tmp_path):
    edit_text, weight_bytes, code, named = CASES[case]
    n = _net()
    prototxt, weight = n.save(tmp_path)
    if edit_text:
        with open(prototxt) as f:
            text = f.read()
        with open(prototxt, "w") as f:
            f.write(edit_text(text))
    if weight_bytes:
        with open(weight, "wb") as f:
            f.write(weight_bytes(n))
    run = atc_main("--framework=0", f"--model={prototxt}", f"--weight={weight}",
                   "--output=out", f"--soc_version={SAMPLE_SOC}", cwd=tmp_path)
    assert run.rc == 255, run.text
    assert code in run.text and named in run.text, run.text
    assert "Traceback" not in run.text
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("out")]


def test_every_unsupported_layer_is_named_at_once(atc_main, tmp_path):
    prototxt, weight = _net().save(tmp_path)
    with open(prototxt, "a") as f:
        f.write('layer { name: "py" type: "Python" bottom: "fc1" top: "py" }\n'
                'layer { name: "odd" type: "Odd" bottom: "py" top: "odd" }\n')
    run = atc_main("--framework=0", f"--model={prototxt}", f"--weight={weight}",
                   "--output=out", f"--soc_version={SAMPLE_SOC}", cwd=tmp_path)
    assert run.rc == 255
    assert "Op py with Op type Python" in run.text and "py (Python), odd (Odd)" in run.text


@pytest.mark.parametrize("out_nodes, code, named", [
    ("nope:0", "E11017", "nope"),
    ("fc1:1", "E11016", "Op output index 1 is not less than 1"),
    ("no_such_top", "E11017", "no_such_top"),
])
def test_bad_out_nodes(out_nodes, code, named, atc_main, tmp_path):
    prototxt, weight = _net().save(tmp_path)
    run = atc_main("--framework=0", f"--model={prototxt}", f"--weight={weight}",
                   "--output=out", f"--soc_version={SAMPLE_SOC}", f"--out_nodes={out_nodes}",
                   cwd=tmp_path)
    assert run.rc == 255 and code in run.text and named in run.text, run.text


def test_weight_is_required(atc_main, tmp_path):
    prototxt, _ = _net().save(tmp_path)
    run = atc_main("--framework=0", f"--model={prototxt}", "--output=out",
                   f"--soc_version={SAMPLE_SOC}", cwd=tmp_path)
    assert run.rc == 255 and "E10008" in run.text


def test_malformed_op_name_map(atc_main, tmp_path):
    prototxt, weight = _net().save(tmp_path)
    (tmp_path / "map.txt").write_text("DetectionOutput SSDDetectionOutput\n")
    run = atc_main("--framework=0", f"--model={prototxt}", f"--weight={weight}",
                   "--output=out", f"--soc_version={SAMPLE_SOC}", "--op_name_map=map.txt",
                   cwd=tmp_path)
    assert run.rc == 255 and "E10001" in run.text and "CaffeType:NewType" in run.text
