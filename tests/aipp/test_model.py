"""What an AIPP model looks like from outside: the Data input takes the raw image (uint8, NHWC,
H x 1.5 rows for YUV420SP), an Aipp op follows it, dynamic AIPP adds the
ascend_dynamic_aipp_data input, and the configuration is recorded as GE records it; seen in the
--mode=1 JSON, in Netron, by --mode=6 and --display_model_info.  The flag, --raw_ge_options
and ge.offline_compile give the same OM, and so do the atc and pyatc entries."""
from __future__ import annotations

import json
import subprocess

from _aipp_configs import NORMALISE, YUV2RGB, block
from _aipp_images import aipp_args
from _netron import needs_netron, netron_view
from _om_compare import assert_same_om_except_cmdline
from _samples import SAMPLE_SOC

from ge.graph.serialize import save_air
from ge.offline_compile import build_model, save_model
from ge.parser.onnx import parse_onnx

STATIC = block(aipp_mode="static", input_format="YUV420SP_U8", src_image_size_w=24,
               src_image_size_h=20, crop=True, load_start_pos_w=4, load_start_pos_h=2,
               crop_size_w=16, crop_size_h=16, csc_switch=True, **YUV2RGB["bt709_narrow"],
               **NORMALISE)
DYNAMIC = block(aipp_mode="dynamic", max_src_image_size=1000)


def _mode1(atc_main, om, work) -> dict:
    run = atc_main("--mode=1", f"--om={om}", "--json=m.json", cwd=work)
    assert run.rc == 0, run.text
    return json.loads((work / "m.json").read_text())


def _ops(model_json: dict) -> dict:
    return {op["name"]: op for op in model_json["graph"][0]["op"]}


def _attrs(entries: list) -> dict:
    """A protobuf map in the mode-1 JSON is a list of {key, value}."""
    return {kv["key"]: kv["value"] for kv in entries}


def test_static_aipp_model_in_mode1_json(aipp_om, atc_main, tmp_path):
    ops = _ops(_mode1(atc_main, aipp_om("rgb", STATIC), tmp_path))
    data, aipp = ops["img"], ops["img_0_aipp"]
    assert aipp["type"] == "Aipp" and aipp["input"] == ["img:0"]
    image = data["output_desc"][0]
    assert (image["dtype"], image["layout"], image["shape"]["dim"]) == (
        "DT_UINT8", "NHWC", [1, 30, 24, 1])
    assert aipp["output_desc"][0]["shape"]["dim"] == [1, 3, 16, 16]
    aipp_attrs, data_attrs = _attrs(aipp["attr"]), _attrs(data["attr"])
    config = json.loads(aipp_attrs["aipp_config_path"]["s"])
    assert config["input_format"] == "YUV420SP_U8" and config["matrix_r0c2"] == 459
    assert config["mean_chn_0"] == 124 and config["var_reci_chn_1"] == 0.0175
    fields = _attrs(aipp_attrs["aipp"]["func"]["attr"])
    assert fields["crop_size_w"]["i"] == 16 and fields["csc_switch"]["b"] is True
    assert data_attrs["_data_related_aipp_mode"]["s"] == "static_aipp"
    assert _attrs(data_attrs["aipp"]["func"]["attr"])["input_format"]["i"] == 1
    assert data_attrs["_aipp_inputs"]["list"]["s"] == ["NCHW:DT_FLOAT:img:3072:4:1,3,16,16"]
    assert [n for n in ops if ops[n]["type"] == "Conv2D"][0]
    consumers = [op for op in ops.values() if "img_0_aipp:0" in op.get("input", [])]
    assert consumers and all(op["type"] != "Aipp" for op in consumers)


def test_dynamic_aipp_adds_the_parameter_input(aipp_om, atc_main, tmp_path):
    ops = _ops(_mode1(atc_main, aipp_om("rgb", DYNAMIC), tmp_path))
    params = ops["ascend_dynamic_aipp_data"]
    assert params["type"] == "AippData"
    assert params["output_desc"][0]["shape"]["dim"] == [160]       # kAippDynamicPara, N=1
    assert ops["img"]["output_desc"][0]["shape"]["dim"] == [1000]
    assert ops["img_0_aipp"]["input"] == ["img:0", "ascend_dynamic_aipp_data:0"]
    data_attrs = _attrs(ops["img"]["attr"])
    assert data_attrs["_data_aipp_data_name_map"]["s"] == "ascend_dynamic_aipp_data"
    assert data_attrs["_data_related_aipp_mode"]["s"] == "dynamic_aipp"


def test_mode6_and_display_model_info_show_the_configuration(aipp_models, atc_main, tmp_path):
    (tmp_path / "aipp.cfg").write_text(STATIC)
    run = atc_main(*aipp_args(aipp_models["rgb"], tmp_path / "aipp.cfg", "m"),
                   "--display_model_info=1", cwd=tmp_path)
    assert run.rc == 0, run.text
    shown = [line for line in run.stdout.splitlines() if line.startswith("aipp     info:")]
    assert len(shown) == 1 and shown[0].startswith("aipp     info: input[img], config[{")
    assert '"input_format":"YUV420SP_U8"' in shown[0] and '"load_start_pos_h":2' in shown[0]
    mode6 = atc_main("--mode=6", f"--om={tmp_path / 'm.om'}", cwd=tmp_path)
    assert mode6.rc == 0 and shown[0] in mode6.stdout.splitlines()


@needs_netron
def test_netron_sees_the_aipp_op(aipp_om):
    (graph,) = netron_view(aipp_om("rgb", STATIC))["graphs"]
    nodes = {n["name"]: n for n in graph["nodes"]}
    assert nodes["img_0_aipp"]["type"] == "Aipp"
    assert nodes["img_0_aipp"]["inputs"][0] == ["img:0"]


def test_flag_raw_options_and_offline_compile_give_one_om(aipp_models, atc_main, tmp_path):
    config = tmp_path / "aipp.cfg"
    config.write_text(STATIC)
    save_air(parse_onnx(str(aipp_models["rgb"])), str(tmp_path / "rgb.air"))
    common = ("--framework=1", "--model=rgb.air", f"--soc_version={SAMPLE_SOC}", "--precision_mode=must_keep_origin_dtype")
    assert atc_main(*common, "--output=by_flag", f"--insert_op_conf={config}",
                    cwd=tmp_path).rc == 0
    (tmp_path / "raw.json").write_text(json.dumps(
        {"compile options": {"global": {"ge.insertOpFile": str(config)}}}))
    run = atc_main(*common, "--output=by_raw", "--raw_ge_options=raw.json", cwd=tmp_path)
    assert run.rc == 0, run.text
    model = build_model(parse_onnx(str(aipp_models["rgb"])),
                        {"ge.socVersion": SAMPLE_SOC, "ge.insertOpFile": str(config), "ge.exec.precision_mode": "must_keep_origin_dtype"})
    save_model(str(tmp_path / "by_api"), model)
    assert_same_om_except_cmdline(tmp_path / "by_flag.om", tmp_path / "by_raw.om")
    assert_same_om_except_cmdline(tmp_path / "by_flag.om", tmp_path / "by_api.om")


def test_atc_and_pyatc_write_the_same_om(aipp_models, entry_argv, entry_env, tmp_path):
    (tmp_path / "aipp.cfg").write_text(STATIC)
    for entry in ("atc", "pyatc"):
        (tmp_path / entry).mkdir()
        args = aipp_args(aipp_models["rgb"], tmp_path / "aipp.cfg", "m")
        run = subprocess.run(entry_argv(entry) + args, cwd=tmp_path / entry, env=entry_env,
                             capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stdout + run.stderr
    assert_same_om_except_cmdline(tmp_path / "atc" / "m.om", tmp_path / "pyatc" / "m.om")
