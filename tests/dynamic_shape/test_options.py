"""The shape options of an unknown-shape compile on a small model: CANN's codes for every
rule (E10002, E10016, E10048, E10049, E10050, E10014 and E10001 for the hint, E10001 without
any shape option), the deprecation warnings of `--input_shape_range`, the marks `--mode=6`,
`--display_model_info`, `--mode=1` and Netron show, one OM three ways and from both entries."""
from __future__ import annotations

import json
import subprocess

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import ge.runtime
from _netron import needs_netron, netron_view
from _om_compare import assert_same_om_except_cmdline
from _samples import SAMPLE_SOC
from ge.graph.serialize import save_air
from ge.offline_compile import build_model, save_model
from ge.om import read_om
from ge.parser.onnx import parse_onnx

from .conftest import PRECISION

RANGES = "x:1~4,3,8~16,8~16"


def small_model() -> onnx.ModelProto:
    """x[N,3,H,W] -> Conv -> Relu -> Add(x) -> ReduceMean over H,W -> y[N,3]."""
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((3, 3, 3, 3)).astype(np.float32) * 0.3, "w")
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("Add", ["r", "x"], ["s"], name="add"),
             helper.make_node("ReduceMean", ["s"], ["y"], name="mean", axes=[2, 3], keepdims=0)]
    graph = helper.make_graph(
        nodes, "small",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, "H", "W"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])], initializer=[w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    path = tmp_path_factory.mktemp("small_dynamic") / "small.onnx"
    onnx.save(small_model(), str(path))
    return path


def _args(model, *flags: str) -> tuple:
    return ("--framework=5", f"--model={model}", "--output=m", f"--soc_version={SAMPLE_SOC}",
            PRECISION, *flags)


def _refused(run, headline: str, om) -> None:
    assert run.rc == 255 and "Traceback" not in run.text, run.text
    assert headline in run.stdout, run.stdout
    assert not om.exists()


REFUSALS = [
    (("--input_shape_range=x:1~4,3,8,8",),
     "Invalid_Argument(E10048): Value 1~4,3,8,8 for parameter --input_shape_range or "
     "dynamic_inputs_shape_range is invalid. Reason: The value can only contains a pair of "
     "'[]'. The value must be formatted as \"input_name1:[n1~n2,c1,h1,w1]\"."),
    (("--input_shape_range=x:[1~a,3,8,8]",),
     "(E10048): Value a for parameter --input_shape_range or dynamic_inputs_shape_range is "
     "invalid. Reason: The current string cannot be converted to a number. The value must be "
     "formatted as \"16\"."),
    (("--input_shape_range=x:[4~1,3,8,8]",),
     "(E10048): Value [4~1,3,8,8] for parameter --input_shape_range or "
     "dynamic_inputs_shape_range is invalid. Reason: The format of the shape range is invalid. "
     "The value must be formatted as \"[1~20,3,3~6,-1]\"."),
    (("--input_shape=x:1~2~3,3,8,8",), "(E10048): Value x:1~2~3,3,8,8 for parameter"),
    (("--input_shape=x:1~4,3,a,8",),
     "Invalid_Argument_Tensor_Input_Shape(E10002): Value x:1~4,3,a,8 for parameter "
     "--input_shape is invalid."),
    (("--input_shape_range=y:[1~4,3,8,8]",),
     "(E10016): Op name y specified in --input_shape_range is not found in the model."),
    (("--input_shape_range=[1~4,3,8,8],[2]",),
     "(E10016): Op name input index 1 specified in --input_shape_range is not found"),
    (("--input_shape_range=x:[1~4,3,8]",),
     "(E10049): Dimension count 3 configured in --input_shape does not match dimension count "
     "4 of the node."),
    (("--input_shape=x:1~4,3,8~16,8~16", "--input_hint_shape=0:[2,3,32,32]"),
     "(E10001): Value [2, 3, 32, 32] for parameter --input_hint_shape is invalid. Reason: The "
     "hint shape of input x is outside its ranges [1~4,3,8~16,8~16]."),
    (("--input_shape=x:1~4,3,8~16,8~16", "--input_hint_shape=0:2,3"),
     "(E10014): Value 0:2,3 for parameter --ge.inputHintShape is invalid."),
    ((), "(E10001): Value NULL for parameter --input_shape is invalid. Reason: The shapes of "
         "inputs contain -1 in the model."),
]


@pytest.mark.parametrize("flags,headline", REFUSALS, ids=[str(i) for i in range(len(REFUSALS))])
def test_refusals_with_canns_codes(atc_main, model, tmp_path, flags, headline):
    _refused(atc_main(*_args(model, *flags), cwd=tmp_path), headline, tmp_path / "m.om")


def test_a_range_outside_a_fixed_model_dim_is_e10050(atc_main, tmp_path):
    fixed = small_model()
    fixed.graph.input[0].type.tensor_type.shape.dim[1].dim_value = 3
    onnx.save(fixed, str(tmp_path / "fixed.onnx"))
    run = atc_main(*_args(tmp_path / "fixed.onnx", "--input_shape_range=x:[1~4,4~6,8,8]"),
                   cwd=tmp_path)
    _refused(run, "Invalid_Argument_Tensor_Input_Shape_Range(E10050): Current dimension size 3 "
                  "is not in the range of 4-6 specified by --input_shape.", tmp_path / "m.om")


def test_aipp_with_unknown_dims_is_refused(atc_main, model, tmp_path):
    (tmp_path / "aipp.cfg").write_text("aipp_op {\n    aipp_mode: static\n    input_format: "
                                       "RGB888_U8\n    src_image_size_w: 16\n"
                                       "    src_image_size_h: 16\n}\n")
    run = atc_main(*_args(model, f"--input_shape={RANGES}", "--insert_op_conf=aipp.cfg"),
                   cwd=tmp_path)
    _refused(run, "Not_Supported(EP0002): --insert_op_conf (AIPP) with unknown dimensions is "
                  "not supported by this implementation.", tmp_path / "m.om")


def test_input_shape_range_warns_and_overrides_input_shape(atc_main, model, tmp_path):
    run = atc_main(*_args(model, "--input_shape=x:1,3,8,8",
                          "--input_shape_range=x:[1~4,3,8~16,8~16]"), cwd=tmp_path)
    assert run.rc == 0, run.text
    assert ("Option_Deprecated(WP0220): Option input_shape_range is deprecated and will be "
            "removed in future version,please use input_shape instead") in run.stdout
    assert ("Option_Overridden(WP0221): Option input_shape cannot use with option "
            "input_shape_range,it will be override by input_shape_range") in run.stdout
    with ge.runtime.load(str(tmp_path / "m.om")) as m:
        assert m.input_ranges == {"x": [(1, 4), (3, 3), (8, 16), (8, 16)]}


@pytest.fixture(scope="module")
def ranged_om(atc_main, model, tmp_path_factory):
    work = tmp_path_factory.mktemp("ranged")
    run = atc_main(*_args(model, f"--input_shape={RANGES}", "--display_model_info=1"), cwd=work)
    assert run.rc == 0, run.text
    return work / "m.om", run


DYNAMIC_LINE = ("dynamic  info: unknown shape model, input_shape_range[x:[1~4,3,8~16,8~16]], "
                "compiled at[x:4,3,16,16].")


def test_display_model_info_and_mode6_show_the_ranges(ranged_om, atc_main, tmp_path):
    om, run = ranged_om
    assert DYNAMIC_LINE in run.stdout.splitlines()
    shown = atc_main("--mode=6", f"--om={om}", cwd=tmp_path)
    assert shown.rc == 0 and DYNAMIC_LINE in shown.stdout.splitlines(), shown.text


def test_mode1_json_shows_the_unknown_shape_marks(ranged_om, atc_main, tmp_path):
    om, _ = ranged_om
    run = atc_main("--mode=1", f"--om={om}", "--json=m.json", cwd=tmp_path)
    assert run.rc == 0, run.text
    model = json.loads((tmp_path / "m.json").read_text())
    attrs = {a["key"]: a["value"] for a in model["attr"]}
    assert attrs["_pyatc_input_shape_range"] == {"s": "x:[1~4,3,8~16,8~16]"}
    assert attrs["_pyatc_dynamic_source_graph"] == {}        # bytes are never dumped
    root = model["graph"][0]
    assert {a["key"]: a["value"] for a in root["attr"]}["_dynamic_shape_partitioned"] == \
        {"b": True}
    data = next(op for op in root["op"] if op["name"] == "x")
    assert {a["key"]: a["value"] for a in data["attr"]}["_is_unknown_shape"] == {"b": True}
    desc = data["output_desc"][0]
    assert desc["shape"]["dim"] == [4, 3, 16, 16]
    ranges = {a["key"]: a["value"] for a in desc["attr"]}["shape_range"]
    assert [r["list_i"] for r in ranges["list_list_int"]["list_list_i"]] == [
        [1, 4], [3, 3], [8, 16], [8, 16]]


@needs_netron
def test_netron_sees_the_unknown_shape_data(ranged_om):
    om, _ = ranged_om
    (graph,) = netron_view(om)["graphs"]
    data = next(n for n in graph["nodes"] if n["name"] == "x")
    assert "_is_unknown_shape" in data["attributes"]


def test_flag_raw_options_and_offline_compile_give_one_om(ranged_om, atc_main, model,
                                                          tmp_path):
    om, _ = ranged_om
    save_air(parse_onnx(str(model)), str(tmp_path / "m.air"))
    common = ("--framework=1", "--model=m.air", f"--soc_version={SAMPLE_SOC}", PRECISION)
    run = atc_main(*common, "--output=by_flag", f"--input_shape={RANGES}", cwd=tmp_path)
    assert run.rc == 0, run.text
    (tmp_path / "raw.json").write_text(json.dumps(
        {"compile options": {"global": {"input_shape": RANGES}}}))
    run = atc_main(*common, "--output=by_raw", "--raw_ge_options=raw.json", cwd=tmp_path)
    assert run.rc == 0, run.text
    built = build_model(parse_onnx(str(model)), {
        "ge.socVersion": SAMPLE_SOC, "input_shape": RANGES,
        "ge.exec.precision_mode": "must_keep_origin_dtype"})
    save_model(str(tmp_path / "by_api"), built)
    assert_same_om_except_cmdline(tmp_path / "by_flag.om", tmp_path / "by_raw.om")
    assert_same_om_except_cmdline(tmp_path / "by_flag.om", tmp_path / "by_api.om")
    assert read_om(str(tmp_path / "by_api.om")).header.is_unknow_model == 1


def test_atc_and_pyatc_write_the_same_om(model, entry_argv, entry_env, tmp_path):
    for entry in ("atc", "pyatc"):
        (tmp_path / entry).mkdir()
        run = subprocess.run(entry_argv(entry) + list(_args(model, f"--input_shape={RANGES}")),
                             cwd=tmp_path / entry, env=entry_env, capture_output=True,
                             text=True, timeout=300)
        assert run.returncode == 0, run.stdout + run.stderr
    assert_same_om_except_cmdline(tmp_path / "atc" / "m.om", tmp_path / "pyatc" / "m.om")


@pytest.mark.parametrize("flag", ["--input_shape=1~4,3,8~16,8~16",
                                  "--input_shape_range=[1~4,3,8~16,8~16]"])
def test_ranges_by_input_position(atc_main, model, tmp_path, flag):
    run = atc_main(*_args(model, flag), cwd=tmp_path)
    assert run.rc == 0, run.text
    with ge.runtime.load(str(tmp_path / "m.om")) as m:
        assert m.input_ranges == {"x": [(1, 4), (3, 3), (8, 16), (8, 16)]}
        assert m.inputs[0].shape == (4, 3, 16, 16)
