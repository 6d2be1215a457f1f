"""Every check of the gear options, with CANN's code (ge.compiler.gear_options; CANN's
option_utils CheckDynamicInputParamValid and multi_batch_options CheckDynamicParams).

Most rows fail in ATC's CheckFlags, before the model is read; the AIPP rows fail when the
first gear inserts its AIPP op.  One row goes through ge.offline_compile, which runs the same
checks on GE option keys."""
from __future__ import annotations

from pathlib import Path

import pytest

from _gear_models import gear_model
from _samples import SAMPLE_SOC

RESNET_SHAPE = "--input_shape=input:-1,3,32,32"
IMAGE_SHAPE = "--input_shape=input:1,3,-1,-1"
BERT_SHAPE = "--input_shape=input_ids:-1,-1;attention_mask:-1,-1"

# (id, extra arguments, expected code, text the message must hold)
ROWS = [
    ("two_gear_flags", [RESNET_SHAPE, "--dynamic_batch_size=1,2", "--dynamic_dims=1;2"],
     "E10009", "mutually exclusive"),
    ("gears_and_range", [RESNET_SHAPE, "--dynamic_batch_size=1,2",
                         "--input_shape_range=input:[1~2,3,32,32]"], "E10009", ""),
    ("no_input_shape", ["--dynamic_batch_size=1,2"], "E10004", "input_shape"),
    ("range_in_shape", ["--input_shape=input:1~4,3,32,32", "--dynamic_batch_size=1,2"],
     "E10040", ""),
    ("batch_scalar_input", ["--input_shape=input:-1,3,32,32;scale:", "--dynamic_batch_size=1,2"],
     "E10012", ""),
    ("batch_not_only_n", ["--input_shape=input:-1,3,-1,32", "--dynamic_batch_size=1,2"],
     "E10018", "only batch size N"),
    ("batch_no_minus_one", ["--input_shape=input:1,3,32,32", "--dynamic_batch_size=1,2"],
     "E10031", ""),
    ("batch_bad_chars", [RESNET_SHAPE, "--dynamic_batch_size=1;2"], "E10003",
     'only contain digits and ","'),
    ("batch_one_gear", [RESNET_SHAPE, "--dynamic_batch_size=4"], "E10035", "has 1 profiles"),
    ("batch_too_many", [RESNET_SHAPE, "--dynamic_batch_size=" + ",".join(
        str(i) for i in range(1, 102))], "E10036", "has 101 profiles"),
    ("batch_zero", [RESNET_SHAPE, "--dynamic_batch_size=0,2"], "E10038", "Dimension size 0"),
    ("batch_repeated", [RESNET_SHAPE, "--dynamic_batch_size=1,2,1"], "E10039", "duplicate"),
    ("image_not_hw", ["--input_shape=input:-1,3,-1,32", "--dynamic_image_size=32,32;64,64"],
     "E10019", "height and width"),
    ("image_rank_3", ["--input_shape=input:3,-1,-1", "--dynamic_image_size=32,32;64,64"],
     "E10019", ""),
    ("image_format_nd", [IMAGE_SHAPE, "--input_format=ND", "--dynamic_image_size=32,32;64,64"],
     "E10003", "only supports NCHW or NHWC"),
    ("image_three_values", [IMAGE_SHAPE, "--dynamic_image_size=32,32,1;64,64,1"], "E10020", ""),
    ("image_bad_chars", [IMAGE_SHAPE, "--dynamic_image_size=32x32;64x64"], "E10003",
     "It can only contain digits"),
    ("dims_no_minus_one", ["--input_shape=input:1,3,32,32", "--dynamic_dims=1;2"], "E10001",
     "At least one dim should be -1"),
    ("dims_empty", [RESNET_SHAPE, "--dynamic_dims=;"], "E10058", "--dynamic_dims"),
    ("dims_count", [BERT_SHAPE, "--dynamic_dims=1,8;2,16"], "E10003",
     "consistent with the number of -1"),
    ("dims_not_digit", [RESNET_SHAPE, "--dynamic_dims=1;a"], "E10001",
     "must be a positive integer"),
    ("dims_with_aipp", [RESNET_SHAPE, "--dynamic_dims=1;2", "--insert_op_conf=aipp.cfg"],
     "E10001", "does not support AIPP"),
]


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("gear_options")
    gear_model("resnet50", directory / "resnet50.onnx")
    gear_model("mobilenetv2", directory / "mobilenetv2.onnx")
    (directory / "aipp.cfg").write_text("aipp_op {\n  aipp_mode: static\n"
                                        "  input_format: RGB888_U8\n"
                                        "  src_image_size_w: 32\n  src_image_size_h: 32\n"
                                        "  crop: true\n  crop_size_w: 16\n  crop_size_h: 16\n}\n")
    (directory / "aipp_size.cfg").write_text("aipp_op {\n  aipp_mode: static\n"
                                             "  input_format: RGB888_U8\n"
                                             "  src_image_size_w: 32\n  src_image_size_h: 32\n}\n")
    return directory


def _atc(atc_main, work: Path, model: str, *extra: str):
    return atc_main("--framework=5", f"--model={work / model}", "--output=out",
                    f"--soc_version={SAMPLE_SOC}", *extra, cwd=work)


@pytest.mark.parametrize("extra,code,text", [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_gear_option_refused_with_canns_code(atc_main, work, extra, code, text):
    run = _atc(atc_main, work, "resnet50.onnx", *extra)
    assert run.rc == 255, run.text
    assert code in run.text, run.text
    assert text in run.text
    assert "Traceback" not in run.text
    assert not (work / "out.om").exists()


@pytest.mark.parametrize("config,reason", [
    ("aipp.cfg", "crop and padding cannot be set to 'true'"),
    ("aipp_size.cfg", "src_image_size_w and src_image_size_h must be set to '0'"),
])
def test_static_aipp_with_image_gears_is_refused(atc_main, work, config, reason):
    run = _atc(atc_main, work, "mobilenetv2.onnx", IMAGE_SHAPE,
               "--dynamic_image_size=32,32;48,48", f"--insert_op_conf={work / config}")
    assert run.rc == 255 and "E10052" in run.text and reason in run.text, run.text
    assert not (work / "out.om").exists()


def test_offline_compile_runs_the_same_checks():
    import ge.offline_compile as oc
    from ge.errors import GeError
    from ge.graph import Graph
    with pytest.raises(GeError) as err:
        oc.build_model(Graph("g"), {"ge.socVersion": SAMPLE_SOC, "ge.inputShape": "x:-1,3",
                                    "ge.dynamicBatchSize": "1,1"})
    assert err.value.code == "E10039"
