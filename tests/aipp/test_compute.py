"""What the compiled AIPP computes: for every supported input format and stage, the model's C
kernel equals the numpy reference exactly, both agree with an independent conversion (OpenCV,
textbook BT.709) within the fixed-point error of CANN's 8-bit matrices, and ge.runtime.compare
finds the model equal to the original ONNX model fed with the pre-processed image."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import cv2
import numpy as np
import pytest

from _aipp_configs import LOW, MEAN, NORMALISE, RGB2YUV_JPEG, VAR, YUV2RGB, block
from _aipp_images import (H, W, decode_bt601_full, decode_bt601_narrow, decode_bt709,
                          normalise, nv12_bt601_full, nv12_bt601_narrow, nv12_bt709, photo)

from ge.proto.insert_op import AIPP_FIELDS
from ge.runtime import load
from ge.runtime._aipp import aipp_links, reference_features
from ge.runtime.compare import compare_model


@dataclass(frozen=True)
class Case:
    model: str
    config: str
    inputs: Callable        # () -> raw model inputs
    expected: Callable      # raw inputs -> {aipp op: [1, C, H, W] independent expectation}
    levels: float = 0.0     # tolerance in 8-bit levels (fixed-point CSC), before normalisation
    rtol: float = 0.0       # relative (float16-held var_reci_chn against the float64 one)
    scale: tuple = (1.0, 1.0, 1.0)   # var_reci_chn: one level after normalisation


def _yuv(decode, encode, standard):
    config = block(aipp_mode="static", input_format="YUV420SP_U8", src_image_size_w=W,
                   src_image_size_h=H, csc_switch=True, **YUV2RGB[standard])
    rgb = photo(H, W, seed=3)
    return Case("rgb", config, lambda: [encode(rgb).reshape(1, H * 3 // 2, W, 1)],
                lambda ins: {"img_0_aipp": normalise(decode(ins[0][0, :, :, 0]))}, levels=2)


def _crop_pad_normalise():
    src_h, src_w = 20, 24
    config = block(aipp_mode="static", input_format="YUV420SP_U8", related_input_rank=0,
                   src_image_size_w=src_w, src_image_size_h=src_h, crop=True,
                   load_start_pos_w=4, load_start_pos_h=2, crop_size_w=14, crop_size_h=12,
                   padding=True, left_padding_size=1, right_padding_size=1,
                   top_padding_size=2, bottom_padding_size=2, padding_value=0.5,
                   csc_switch=True, rbuv_swap_switch=False, **YUV2RGB["bt601_narrow"],
                   **NORMALISE)

    def expected(ins):
        rgb = decode_bt601_narrow(ins[0][0, :, :, 0])[2:14, 4:18]
        out = np.full((3, H, W), 0.5)
        out[:, 2:14, 1:15] = normalise(rgb, MEAN, LOW, VAR)
        return {"img_0_aipp": out}
    rgb = photo(src_h, src_w, seed=4)
    return Case("rgb", config, lambda: [nv12_bt601_narrow(rgb).reshape(1, 30, src_w, 1)],
                expected, levels=2, rtol=2e-3, scale=VAR[:3])


def _nv21():
    """rbuv_swap_switch on YUV420SP: the image is NV21 (V before U)."""
    config = block(aipp_mode="static", input_format="YUV420SP_U8", csc_switch=True,
                   rbuv_swap_switch=True, **YUV2RGB["bt601_narrow"])
    nv12 = nv12_bt601_narrow(photo(H, W, seed=5))
    nv21 = nv12.copy()
    nv21[H:, 0::2], nv21[H:, 1::2] = nv12[H:, 1::2], nv12[H:, 0::2]
    return Case("rgb", config, lambda: [nv21.reshape(1, H * 3 // 2, W, 1)],
                lambda ins: {"img_0_aipp": normalise(decode_bt601_narrow(nv12))}, levels=2)


def _rgb_swapped():
    """A BGR package with rbuv_swap_switch: the model sees RGB, normalised."""
    config = block(aipp_mode="static", input_format="RGB888_U8", rbuv_swap_switch=True,
                   src_image_size_w=0, src_image_size_h=0, **NORMALISE)
    rgb = photo(H, W, seed=6)
    return Case("rgb", config, lambda: [rgb[None, :, :, ::-1].copy()],
                lambda ins: {"img_0_aipp": normalise(rgb.astype(float), MEAN, LOW, VAR)},
                rtol=2e-3)


def _rgb_to_yuv():
    config = block(aipp_mode="static", input_format="RGB888_U8", csc_switch=True,
                   **RGB2YUV_JPEG)
    rgb = photo(H, W, seed=7)
    ycrcb = cv2.cvtColor(rgb, cv2.COLOR_RGB2YCrCb).astype(float)
    return Case("rgb", config, lambda: [rgb[None]],
                lambda ins: {"img_0_aipp": normalise(ycrcb[..., [0, 2, 1]])}, levels=2)


def _xrgb(ax_swap: bool, rbuv_swap: bool, order):
    """XRGB8888_U8 packages (every reserved field given its neutral value on the way)."""
    config = block(aipp_mode="static", input_format="XRGB8888_U8", ax_swap_switch=ax_swap,
                   rbuv_swap_switch=rbuv_swap, related_input_name="img", input_edge_idx=0,
                   single_line_mode=False, cpadding_value=0.0, resize=False, resize_output_w=0,
                   resize_output_h=0, raw_rgbir_to_f16_n=0, crop=False, padding=False)
    rgb = photo(H, W, seed=8)
    alpha = np.random.default_rng(9).integers(0, 256, (H, W, 1), dtype=np.uint8)
    pixels = np.concatenate([rgb, alpha], -1)[..., order]
    return Case("rgb", config, lambda: [pixels[None].copy()],
                lambda ins: {"img_0_aipp": normalise(rgb.astype(float))})


def _yuv400():
    config = block(aipp_mode="static", input_format="YUV400_U8", mean_chn_0=100,
                   min_chn_0=0.5, var_reci_chn_0=0.02)
    gray = cv2.cvtColor(photo(H, W, seed=10), cv2.COLOR_RGB2GRAY)
    return Case("gray", config, lambda: [gray[None, :, :, None]],
                lambda ins: {"img_0_aipp": normalise(gray[..., None].astype(float), (100,),
                                                     (0.5,), (0.02,))}, rtol=2e-3)


def _f16_bits(value: float) -> int:
    return int(np.array([value], np.float16).view(np.uint16)[0])


def dynamic_buffer(src_w: int, src_h: int, crop, pads, rows) -> np.ndarray:
    """CANN's kAippDynamicPara for one batch, written from its C layout (dynamic_aipp.h):
    a 64-byte head, then the 96-byte batch part."""
    buf = np.zeros(160, np.uint8)
    buf[0:4] = (1, 1, 0, 0)                              # YUV420SP_U8, csc on, no swaps
    buf[4] = 1                                           # batchNum
    buf[8:16] = np.array([src_w, src_h], "<i4").view(np.uint8)
    buf[16:34] = np.array([v for row in rows for v in row], "<i2").view(np.uint8)
    buf[43:46] = (16, 128, 128)                          # cscInputBiasR0..R2
    batch = 64
    buf[batch + 0], buf[batch + 2] = 1, 1                # cropSwitch, paddingSwitch
    buf[batch + 8:batch + 24] = np.array(crop, "<i4").view(np.uint8)
    buf[batch + 40:batch + 56] = np.array(pads, "<i4").view(np.uint8)
    buf[batch + 56:batch + 64] = np.array(MEAN, "<i2").view(np.uint8)
    buf[batch + 64:batch + 72] = np.array([_f16_bits(v) for v in LOW], "<u2").view(np.uint8)
    buf[batch + 72:batch + 80] = np.array([_f16_bits(v) for v in VAR], "<u2").view(np.uint8)
    return buf


def _dynamic():
    config = block(aipp_mode="dynamic", related_input_rank=0, max_src_image_size=1000,
                   support_rotation=False)
    src = 20
    rgb = photo(src, src, seed=11)
    image = np.zeros(1000, np.uint8)
    image[:600] = nv12_bt601_narrow(rgb).reshape(-1)
    params = dynamic_buffer(src, src, (2, 4, 14, 12), (2, 2, 1, 1),
                            ((298, 0, 409), (298, -100, -208), (298, 516, 0)))

    def expected(ins):
        decoded = decode_bt601_narrow(ins[0][:600].reshape(30, src))[4:16, 2:16]
        out = np.zeros((3, H, W))                        # the dynamic buffer has no pad value
        out[:, 2:14, 1:15] = normalise(decoded, MEAN, LOW, VAR)
        return {"img_0_aipp": out}
    return Case("rgb", config, lambda: [image, params], expected, levels=2, rtol=2e-3,
                scale=VAR[:3])


def _two_inputs():
    config = (block(aipp_mode="static", related_input_rank=0, input_format="RGB888_U8",
                    **NORMALISE)
              + block(aipp_mode="static", related_input_rank=1, input_format="YUV400_U8"))
    rgb, gray = photo(H, W, seed=12), photo(H, W, seed=13)[..., 1]
    return Case("two", config, lambda: [rgb[None], gray[None, :, :, None]],
                lambda ins: {"rgb_0_aipp": normalise(rgb.astype(float), MEAN, LOW, VAR),
                             "gray_0_aipp": normalise(gray[..., None].astype(float))},
                rtol=2e-3)


CASES = {
    "yuv420sp_bt601_narrow": _yuv(decode_bt601_narrow, nv12_bt601_narrow, "bt601_narrow"),
    "yuv420sp_bt601_full": _yuv(decode_bt601_full, nv12_bt601_full, "bt601_full"),
    "yuv420sp_bt709_narrow": _yuv(lambda p: decode_bt709(p, True),
                                  lambda rgb: nv12_bt709(rgb, True), "bt709_narrow"),
    "yuv420sp_bt709_full": _yuv(lambda p: decode_bt709(p, False),
                                lambda rgb: nv12_bt709(rgb, False), "bt709_full"),
    "yvu420sp_nv21": _nv21(),
    "crop_padding_normalise": _crop_pad_normalise(),
    "rgb888_bgr_package": _rgb_swapped(),
    "rgb888_to_yuv444": _rgb_to_yuv(),
    "xrgb8888_ax_swap": _xrgb(True, False, [3, 0, 1, 2]),
    "bgrx8888_rbuv_swap": _xrgb(False, True, [2, 1, 0, 3]),
    "yuv400": _yuv400(),
    "dynamic_yuv420sp": _dynamic(),
    "two_inputs": _two_inputs(),
}


@pytest.mark.parametrize("name", CASES)
def test_aipp_kernel_reference_and_independent_conversion_agree(name, aipp_om, aipp_models):
    case = CASES[name]
    om = aipp_om(case.model, case.config)
    model = load(str(om))
    inputs = case.inputs()
    _, seen = model.run(inputs, capture=True)
    expected = case.expected(inputs)
    links = aipp_links(model)
    assert sorted(link.step.name for link in links) == sorted(expected)
    for link in links:
        assert model.engines[link.step.name] == "AiCore"          # the generated C kernel
        ours = seen[link.step.name][0]
        np.testing.assert_array_equal(ours, reference_features(link, inputs))
        want = expected[link.step.name][None]
        scale = np.array(case.scale[:want.shape[1]])[None, :, None, None]
        tolerance = case.levels * scale + case.rtol * np.abs(want) + 1e-6
        assert (np.abs(ours - want) <= tolerance).all(), \
            f"max error {np.abs(ours - want).max()} ({name}, {link.step.name})"
    result = compare_model(str(aipp_models[case.model]), model, inputs)
    assert result.ok, [(d.name, d.reference, d.max_abs) for d in result.outputs + result.aipp]


def test_the_configurations_use_every_field():
    used = set()
    for case in CASES.values():
        used |= {line.split(":")[0].strip() for line in case.config.splitlines() if ":" in line}
    assert {name for name, *_ in AIPP_FIELDS} <= used


@pytest.mark.parametrize("field, value, stage", [
    ("mean_chn_1", 120, "normalisation (mean_chn / min_chn)"),
    ("var_reci_chn_0", 0.02, "normalisation (var_reci_chn)"),
    ("matrix_r0c2", 359, "crop / channel swap / colour-space conversion"),
    ("load_start_pos_w", 6, "crop / channel swap / colour-space conversion"),
    ("padding_value", -1.0, "padding"),
])
def test_a_wrong_parameter_is_reported_with_its_stage(field, value, stage, aipp_om):
    """The compiled kernel against a reference computed from a configuration with one field
    changed (what a wrong matrix or mean in the kernel would look like): the comparison fails
    and names the AIPP stage of that field."""
    import json
    from ge import ops
    from ge.runtime._aipp import aipp_attrs, mismatch_stage
    from ge.runtime.compare import diff
    case = CASES["crop_padding_normalise"]
    model = load(str(aipp_om(case.model, case.config)))
    inputs = case.inputs()
    _, seen = model.run(inputs, capture=True)
    (link,) = aipp_links(model)
    attrs = aipp_attrs(link.step)
    config = json.loads(attrs["aipp_config_path"])
    config[field] = value
    attrs["aipp_config_path"] = json.dumps(config)
    wrong = ops.get("Aipp").kernel([inputs[0]], attrs)[0]
    ours = seen[link.step.name][0]
    d = diff(link.step.name, "reference", ours, wrong, 1e-4, 1e-5)
    assert not d.ok
    assert mismatch_stage(link, ours, wrong, d.first_bad) == stage
