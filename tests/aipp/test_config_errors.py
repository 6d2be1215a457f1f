"""A bad AIPP configuration: the code CANN gives (E13005 for a file that does not parse,
E10052 for a broken rule, E10034 for an FP16 input), naming the field and the value; exit
status 255 and no model written."""
from __future__ import annotations

import pytest

from _aipp_configs import block
from _aipp_images import aipp_args

RGB = dict(aipp_mode="static", input_format="RGB888_U8")
YUV = dict(aipp_mode="static", input_format="YUV420SP_U8")

# id: (model, configuration, extra flags, code, fragments of the message)
CASES = {
    "not_text_format": ("rgb", b"\x08\x01\x12\x00\xff", (), "E13005", ["aipp.cfg"]),
    "unknown_field": ("rgb", block(**RGB, colour=1), (), "E13005", ['"colour"']),
    "unknown_enum_value": ("rgb", block(aipp_mode="static", input_format="NV12"), (),
                           "E13005", ["NV12"]),
    "negative_rank": ("rgb", block(**RGB, related_input_rank=-1), (), "E13005",
                      ["out of range: -1"]),
    "no_mode": ("rgb", block(input_format="RGB888_U8"), (), "E10052", ["aipp_mode"]),
    "no_input_format": ("rgb", block(aipp_mode="static"), (), "E10052",
                        ["Input format of AIPP conf must be set"]),
    "unconvertible_format": ("rgb", block(aipp_mode="static", input_format="ARGB8888_U8"), (),
                             "E10052", ["input_format ARGB8888_U8 is not supported"]),
    "odd_yuv420sp_size": ("rgb", block(**YUV, src_image_size_w=15, src_image_size_h=16), (),
                          "E10052", ["src_image_size_w 15 must be even"]),
    "odd_yuv420sp_crop": ("rgb", block(**YUV, src_image_size_w=20, src_image_size_h=20,
                                       crop=True, load_start_pos_w=3, crop_size_w=16,
                                       crop_size_h=16), (),
                          "E10052", ["load_start_pos_w 3 must be even"]),
    "crop_outside_source": ("rgb", block(**RGB, src_image_size_w=16, src_image_size_h=16,
                                         crop=True, load_start_pos_w=8, crop_size_w=14,
                                         crop_size_h=16), (),
                            "E10052", ["load_start_pos_w 8 + crop_size_w 14",
                                       "src_image_size_w 16"]),
    "model_crop_outside_source": ("rgb", block(**RGB, src_image_size_w=20, src_image_size_h=20,
                                               crop=True, load_start_pos_w=8), (), "E10052",
                                  ["crop window 16x16", "load_start_pos_w 8", "source 20x20"]),
    "csc_on_yuv400": ("gray", block(aipp_mode="static", input_format="YUV400_U8",
                                    csc_switch=True), (),
                      "E10052", ["csc_switch true", "YUV400_U8"]),
    "ax_swap_on_rgb888": ("rgb", block(**RGB, ax_swap_switch=True), (), "E10052",
                          ["ax_swap_switch true", "RGB888_U8"]),
    "repeated_matrix": ("rgb", block(**RGB, csc_switch=True, matrix_r0c0=[66, 67]), (),
                        "E10052", ["matrix_r0c0 cannot be configured repeatedly", "[66, 67]"]),
    "same_input_twice": ("rgb", block(**RGB) + block(**RGB), (), "E10052",
                         ["Cannot insert aipp to the same position", "related_input_rank 0"]),
    "static_and_dynamic": ("two", block(**RGB) + block(aipp_mode="dynamic",
                                                       related_input_rank=1,
                                                       max_src_image_size=512), (),
                           "E10052", ["static", "dynamic", "cannot be mixed"]),
    "resize_reserved": ("rgb", block(**RGB, resize=True, resize_output_w=16), (), "E10052",
                        ["resize true is not supported on Ascend310P3"]),
    "padding_too_wide_for_soc": ("wide", block(**RGB, src_image_size_w=1088,
                                               src_image_size_h=2, padding=True,
                                               left_padding_size=1, right_padding_size=1), (),
                                 "E10052", ["W must be <= 1080", "W 1090"]),
    "padding_out_of_range": ("rgb", block(**RGB, padding=True, left_padding_size=33), (),
                             "E10052", ["left_padding_size 33 is out of range [0, 32]"]),
    "mean_out_of_range": ("rgb", block(**RGB, mean_chn_0=256), (), "E10052",
                          ["mean_chn_0 256 is out of range [0, 255]"]),
    "matrix_out_of_range": ("rgb", block(**RGB, csc_switch=True, matrix_r1c2=40000), (),
                            "E10052", ["matrix_r1c2 40000 is out of range"]),
    "dynamic_without_size": ("rgb", block(aipp_mode="dynamic"), (), "E10052",
                             ["max_src_image_size must be set"]),
    "missing_input_rank": ("rgb", block(**RGB, related_input_rank=3), (), "E10052",
                           ["related_input_rank 3"]),
    "missing_input_name": ("rgb", block(**RGB, related_input_name="nope"), (), "E10052",
                           ["related_input_name nope"]),
    "output_size_mismatch": ("rgb", block(**RGB, src_image_size_w=20, src_image_size_h=20),
                             (), "E10052", ["src_image_size 20x20", "16x16", "img"]),
    "channels_mismatch": ("rgb", block(aipp_mode="static", input_format="YUV400_U8"), (),
                          "E10052", ["YUV400_U8", "C = 3"]),
    "fp16_input": ("rgb", block(**RGB), ("--input_fp16_nodes=img",), "E10034", ["img"]),
    "dynamic_nd_input": ("rgb", block(aipp_mode="dynamic", max_src_image_size=1000),
                         ("--input_format=ND",), "E13014", ["Value ND of parameter format",
                                                            "Op img"]),
}


@pytest.mark.parametrize("name", CASES)
def test_bad_configuration_is_refused_naming_the_field(name, aipp_models, atc_main, tmp_path):
    model, config, extra, code, fragments = CASES[name]
    path = tmp_path / "aipp.cfg"
    path.write_bytes(config if isinstance(config, bytes) else config.encode())
    run = atc_main(*aipp_args(aipp_models[model], path, "m"), *extra, cwd=tmp_path)
    assert run.rc == 255, run.text
    assert f"({code})" in run.text, run.text
    for fragment in fragments:
        assert fragment in run.text, (fragment, run.text)
    assert "Traceback" not in run.text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["aipp.cfg"]
