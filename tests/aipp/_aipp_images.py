"""Images, YUV encodings and models for the AIPP tests.

The encodings and the expected colours come from routines independent of ours: OpenCV's colour
conversions (BT.601 narrow: BGR2YUV_I420 / YUV2RGB_NV12; BT.601 full: YCrCb) and the textbook
floating-point BT.709 equations (Kr = 0.2126, Kb = 0.0722).
"""
from __future__ import annotations

import cv2
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from _samples import SAMPLE_SOC

H = W = 16            # the models' input size


def photo(h: int, w: int, seed: int = 0) -> np.ndarray:
    """A photo-like RGB uint8 image: smooth gradients, blobs of colour, an edge and noise."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    img = np.stack([255 * xx / max(w - 1, 1), 255 * yy / max(h - 1, 1),
                    128 + 100 * np.sin((xx + yy) / 3.0)], -1)
    for _ in range(3):
        cy, cx, r = rng.uniform(0, h), rng.uniform(0, w), rng.uniform(2, h / 2)
        colour = rng.uniform(0, 255, 3)
        mask = ((yy - cy) ** 2 + (xx - cx) ** 2) < r * r
        img[mask] = 0.5 * img[mask] + 0.5 * colour
    img[:, w // 2:] *= 0.8
    img += rng.normal(0, 4, img.shape)
    return np.clip(img, 0, 255).round().astype(np.uint8)


def nv12_from_planes(y: np.ndarray, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """[H*1.5, W] NV12 bytes from Y [H, W] and U, V [H/2, W/2]."""
    h, w = y.shape
    uv = np.stack([u, v], -1).reshape(h // 2, w)
    return np.concatenate([y, uv], 0).astype(np.uint8)


def nv12_bt601_narrow(rgb: np.ndarray) -> np.ndarray:
    """OpenCV's BT.601 narrow-range encoding (I420) rearranged as NV12."""
    h, w, _ = rgb.shape
    i420 = cv2.cvtColor(rgb, cv2.COLOR_RGB2YUV_I420)
    u = i420[h:h + h // 4].reshape(h // 2, w // 2)
    v = i420[h + h // 4:].reshape(h // 2, w // 2)
    return nv12_from_planes(i420[:h], u, v)


def decode_bt601_narrow(nv12: np.ndarray) -> np.ndarray:
    return cv2.cvtColor(nv12, cv2.COLOR_YUV2RGB_NV12).astype(np.float64)


def _subsample(plane: np.ndarray) -> np.ndarray:
    h, w = plane.shape
    return plane.reshape(h // 2, 2, w // 2, 2).mean(axis=(1, 3)).round().astype(np.uint8)


def _upsample(plane: np.ndarray) -> np.ndarray:
    return plane.repeat(2, 0).repeat(2, 1)


def nv12_bt601_full(rgb: np.ndarray) -> np.ndarray:
    """OpenCV's full-range (JPEG) YCrCb, chroma averaged over 2x2 blocks, as NV12."""
    ycrcb = cv2.cvtColor(rgb, cv2.COLOR_RGB2YCrCb)
    return nv12_from_planes(ycrcb[..., 0], _subsample(ycrcb[..., 2]), _subsample(ycrcb[..., 1]))


def decode_bt601_full(nv12: np.ndarray) -> np.ndarray:
    h = nv12.shape[0] * 2 // 3
    y, uv = nv12[:h], nv12[h:]
    ycrcb = np.stack([y, _upsample(uv[:, 1::2]), _upsample(uv[:, 0::2])], -1)
    return cv2.cvtColor(np.ascontiguousarray(ycrcb), cv2.COLOR_YCrCb2RGB).astype(np.float64)


_KR, _KB = 0.2126, 0.0722


def nv12_bt709(rgb: np.ndarray, narrow: bool) -> np.ndarray:
    """Textbook BT.709 encoding (floating point) as NV12."""
    r, g, b = [rgb[..., i].astype(np.float64) / 255 for i in range(3)]
    y = _KR * r + (1 - _KR - _KB) * g + _KB * b
    u, v = (b - y) / (2 * (1 - _KB)), (r - y) / (2 * (1 - _KR))
    ys, cs, y0 = (219, 224, 16) if narrow else (255, 255, 0)
    planes = [np.clip(np.round(p), 0, 255).astype(np.uint8)
              for p in (y * ys + y0, u * cs + 128, v * cs + 128)]
    return nv12_from_planes(planes[0], _subsample(planes[1]), _subsample(planes[2]))


def decode_bt709(nv12: np.ndarray, narrow: bool) -> np.ndarray:
    h = nv12.shape[0] * 2 // 3
    ys, cs, y0 = (219, 224, 16) if narrow else (255, 255, 0)
    y = (nv12[:h].astype(np.float64) - y0) / ys
    u = (_upsample(nv12[h:, 0::2]).astype(np.float64) - 128) / cs
    v = (_upsample(nv12[h:, 1::2]).astype(np.float64) - 128) / cs
    r = y + 2 * (1 - _KR) * v
    b = y + 2 * (1 - _KB) * u
    g = (y - _KR * r - _KB * b) / (1 - _KR - _KB)
    return np.clip(np.stack([r, g, b], -1) * 255, 0, 255)


def conv_model(name: str, channels: int = 3, h: int = H, w: int = W) -> onnx.ModelProto:
    """img [1, C, h, w] -> Conv 3x3 (4 filters) -> y."""
    rng = np.random.default_rng(1)
    weight = numpy_helper.from_array(
        rng.standard_normal((4, channels, 3, 3)).astype(np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("Conv", ["img", "w"], ["y"], pads=[1, 1, 1, 1])], name,
        [helper.make_tensor_value_info("img", TensorProto.FLOAT, [1, channels, h, w])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, h, w])], [weight])
    return _model(graph)


def two_input_model() -> onnx.ModelProto:
    """rgb [1, 3, 16, 16] and gray [1, 1, 16, 16], each through a Conv, added."""
    rng = np.random.default_rng(2)
    inits = [numpy_helper.from_array(rng.standard_normal(s).astype(np.float32), n)
             for n, s in (("wa", (4, 3, 3, 3)), ("wb", (4, 1, 3, 3)))]
    nodes = [helper.make_node("Conv", ["rgb", "wa"], ["a"], pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["gray", "wb"], ["b"], pads=[1, 1, 1, 1]),
             helper.make_node("Add", ["a", "b"], ["y"])]
    graph = helper.make_graph(
        nodes, "two_inputs",
        [helper.make_tensor_value_info("rgb", TensorProto.FLOAT, [1, 3, H, W]),
         helper.make_tensor_value_info("gray", TensorProto.FLOAT, [1, 1, H, W])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, H, W])], inits)
    return _model(graph)


def _model(graph) -> onnx.ModelProto:
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


def normalise(rgb: np.ndarray, mean=(0, 0, 0), low=(0, 0, 0), var=(1, 1, 1)) -> np.ndarray:
    """[h, w, C] pixels -> [C, h, w] (pixel - mean - min) * var_reci, float64."""
    c = rgb.shape[-1]
    out = (rgb - np.array(mean[:c]) - np.array(low[:c])) * np.array(var[:c])
    return out.transpose(2, 0, 1)


MODELS = {"rgb": lambda: conv_model("rgb", 3), "gray": lambda: conv_model("gray", 1),
          "two": two_input_model, "wide": lambda: conv_model("wide", 3, 2, 1090)}


def aipp_args(model, config, output: str) -> list:
    """The command line compiling `model` with the AIPP configuration file `config`."""
    return ["--framework=5", f"--model={model}", f"--output={output}",
            f"--soc_version={SAMPLE_SOC}", f"--insert_op_conf={config}",
            "--precision_mode=must_keep_origin_dtype"]
