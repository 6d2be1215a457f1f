"""AIPP on real photographs: a classifier and a detector compiled with AIPP for 1080p YUV420SP
(NV12) frames against the same models without AIPP fed with OpenCV pre-processing.

    python3 bench/bench_aipp.py [--wheel scikit_image-*.whl] [--size full|ci] [--runs 5]

Photographs: the sample images that ship inside the scikit-image wheel (astronaut, chelsea,
coffee, rocket, ...), read straight from the wheel with zipfile + cv2.imdecode (scikit-image
itself is not installed).  Without --wheel the wheel is fetched once with
`pip download scikit-image --no-deps` into ~/.cache/pyatc-bench.

Each photo becomes a 1920x1080 camera frame (cv2.resize), encoded as NV12 with OpenCV's BT.601
narrow-range conversion.  The decoder/DVPP step that every AIPP pipeline has scales the NV12
planes to 398x224 (AIPP's own resize is reserved in CANN, so the scaler is outside the model);
the AIPP stage crops the centre 224x224, converts BT.601 narrow YUV to RGB and normalises with
the ImageNet mean/std.  The baseline is the pipeline AIPP replaces: the same scaled NV12 image
decoded by OpenCV (COLOR_YUV2RGB_NV12), the same crop, (x / 255 - mean) / std in float32, the
model without AIPP.

Models: MobileNetV2 (bench/models, random weights: its top-1 is a sensitive probe of input
differences; with random weights one class can dominate every photo, so the top-1 of the
logits centred over the ten photos is reported too, with its noise floor: the same model on the
OpenCV input plus uniform noise of one 8-bit level, which is the size of AIPP's fixed-point
error) and a colour-blob detector built here (a 1x1 Conv scoring "red" pixels, Sigmoid,
then the blob's centre and spread by moments -> box [x0, y0, x1, y1]); there is no trained
detector offline.  Reports top-1 agreement (target >= 9/10), the largest box difference in
pixels (target <= 1), and latencies: the AIPP model on the raw frame vs OpenCV pre-processing
plus the model without AIPP, measured in this run.
"""
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import glob  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import zipfile  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import cv2  # noqa: E402
import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from bench.bench_runtime import _median_ms as median_ms  # noqa: E402
from bench.models import MODELS  # noqa: E402

PHOTOS = ("astronaut.png", "chelsea.png", "coffee.png", "rocket.jpg", "motorcycle_left.png",
          "motorcycle_right.png", "hubble_deep_field.jpg", "ihc.png", "retina.jpg", "color.png")
FRAME_W, FRAME_H = 1920, 1080
SCALED_W, SIDE = 398, 224
CROP_X = (SCALED_W - SIDE) // 2 // 2 * 2            # even, as YUV420SP requires
MEAN = np.array([0.485, 0.456, 0.406], np.float32)
STD = np.array([0.229, 0.224, 0.225], np.float32)
BT601_NARROW = ((298, 0, 409), (298, -100, -208), (298, 516, 0))


def aipp_config() -> str:
    fields = {"aipp_mode": "static", "input_format": "YUV420SP_U8",
              "src_image_size_w": SCALED_W, "src_image_size_h": SIDE, "crop": "true",
              "load_start_pos_w": CROP_X, "load_start_pos_h": 0, "crop_size_w": SIDE,
              "crop_size_h": SIDE, "csc_switch": "true"}
    fields.update({f"matrix_r{r}c{c}": BT601_NARROW[r][c] for r in range(3) for c in range(3)})
    fields.update({f"input_bias_{i}": b for i, b in enumerate((16, 128, 128))})
    # (pixel - mean_chn - min_chn) * var_reci: the mean in whole levels, the rest in min_chn
    for i in range(3):
        mean = MEAN[i] * 255
        fields[f"mean_chn_{i}"] = int(mean)
        fields[f"min_chn_{i}"] = round(float(mean - int(mean)), 4)
        fields[f"var_reci_chn_{i}"] = round(float(1 / (STD[i] * 255)), 6)
    return "aipp_op {\n" + "".join(f"    {k}: {v}\n" for k, v in fields.items()) + "}\n"


def photos(wheel: str) -> list:
    with zipfile.ZipFile(wheel) as z:
        out = []
        for name in PHOTOS:
            data = np.frombuffer(z.read(f"skimage/data/{name}"), np.uint8)
            bgr = cv2.imdecode(data, cv2.IMREAD_COLOR)
            out.append((name, cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)))
        return out


def fetch_wheel() -> str:
    cache = os.path.expanduser("~/.cache/pyatc-bench")
    found = glob.glob(os.path.join(cache, "scikit_image-*.whl"))
    if not found:
        subprocess.run([sys.executable, "-m", "pip", "download", "scikit-image", "--no-deps",
                        "-d", cache, "-q"], check=True)
        found = glob.glob(os.path.join(cache, "scikit_image-*.whl"))
    return sorted(found)[-1]


def nv12_frame(rgb: np.ndarray) -> np.ndarray:
    """The camera frame: 1080p RGB and its NV12 by OpenCV's BT.601 narrow conversion."""
    frame = cv2.resize(rgb, (FRAME_W, FRAME_H), interpolation=cv2.INTER_AREA)
    i420 = cv2.cvtColor(frame, cv2.COLOR_RGB2YUV_I420)
    h, w = FRAME_H, FRAME_W
    u = i420[h:h + h // 4].reshape(h // 2, w // 2)
    v = i420[h + h // 4:].reshape(h // 2, w // 2)
    return frame, np.concatenate([i420[:h], np.stack([u, v], -1).reshape(h // 2, w)], 0)


def scale_nv12(nv12: np.ndarray) -> np.ndarray:
    """The decoder's scaler (DVPP's job): Y and interleaved UV planes resized apart."""
    y = cv2.resize(nv12[:FRAME_H], (SCALED_W, SIDE), interpolation=cv2.INTER_AREA)
    uv = nv12[FRAME_H:].reshape(FRAME_H // 2, FRAME_W // 2, 2)
    uv = cv2.resize(uv, (SCALED_W // 2, SIDE // 2), interpolation=cv2.INTER_AREA)
    return np.concatenate([y, uv.reshape(SIDE // 2, SCALED_W)], 0)


def opencv_input(scaled_nv12: np.ndarray) -> np.ndarray:
    rgb = cv2.cvtColor(scaled_nv12, cv2.COLOR_YUV2RGB_NV12)
    crop = rgb[:, CROP_X:CROP_X + SIDE].astype(np.float32) / 255
    return ((crop - MEAN) / STD).transpose(2, 0, 1)[None].astype(np.float32)


def detector() -> onnx.ModelProto:
    """Red-blob detector: score = Sigmoid(8 (R - (G + B) / 2) - 4) on the normalised image,
    box = centre -/+ 2 standard deviations of the score mass, in pixels."""
    ys, xs = np.mgrid[0:SIDE, 0:SIDE].astype(np.float32)
    inits = [numpy_helper.from_array(np.array([8, -4, -4], np.float32).reshape(1, 3, 1, 1), "w"),
             numpy_helper.from_array(np.array([-4], np.float32), "b"),
             numpy_helper.from_array(xs[None, None], "xs"),
             numpy_helper.from_array(ys[None, None], "ys"),
             numpy_helper.from_array(np.array([2], np.float32), "two"),
             numpy_helper.from_array(np.array([1e-3], np.float32), "eps")]
    n = helper.make_node
    nodes = [n("Conv", ["input", "w", "b"], ["logit"]), n("Sigmoid", ["logit"], ["s"]),
             n("ReduceSum", ["s"], ["m0"], keepdims=0), n("Add", ["m0", "eps"], ["mass"])]
    for axis, grid in (("x", "xs"), ("y", "ys")):
        nodes += [n("Mul", ["s", grid], [f"s{axis}"]),
                  n("ReduceSum", [f"s{axis}"], [f"m{axis}"], keepdims=0),
                  n("Div", [f"m{axis}", "mass"], [f"c{axis}"]),
                  n("Sub", [grid, f"c{axis}"], [f"d{axis}"]),
                  n("Mul", [f"d{axis}", f"d{axis}"], [f"q{axis}"]),
                  n("Mul", ["s", f"q{axis}"], [f"sq{axis}"]),
                  n("ReduceSum", [f"sq{axis}"], [f"v{axis}"], keepdims=0),
                  n("Div", [f"v{axis}", "mass"], [f"var{axis}"]),
                  n("Sqrt", [f"var{axis}"], [f"sd{axis}"]),
                  n("Mul", [f"sd{axis}", "two"], [f"r{axis}"]),
                  n("Sub", [f"c{axis}", f"r{axis}"], [f"lo{axis}"]),
                  n("Add", [f"c{axis}", f"r{axis}"], [f"hi{axis}"])]
    nodes.append(n("Concat", ["lox", "loy", "hix", "hiy"], ["box"], axis=0))
    graph = helper.make_graph(
        nodes, "blob_detector",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, SIDE, SIDE])],
        [helper.make_tensor_value_info("box", TensorProto.FLOAT, [4])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
    model.ir_version = 7
    return model


def compile_om(onnx_path: str, out: str, config: str | None) -> str:
    from ge.atc import main_impl
    args = ["pyatc", "--framework=5", f"--model={onnx_path}", f"--output={out}",
            "--soc_version=Ascend310P3", "--precision_mode=must_keep_origin_dtype"]
    if config:
        args.append(f"--insert_op_conf={config}")
    rc = main_impl(args)
    if rc != 0:
        raise SystemExit(f"compile of {onnx_path} failed ({rc})")
    return out + ".om"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheel", help="a scikit-image wheel (default: pip download once)")
    parser.add_argument("--size", default="full", choices=("full", "ci"))
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    from ge.runtime import load
    shots = photos(args.wheel or fetch_wheel())
    work = tempfile.mkdtemp(prefix="bench_aipp_")
    config = os.path.join(work, "aipp.cfg")
    with open(config, "w") as f:
        f.write(aipp_config())
    classifier = MODELS["mobilenetv2"](size=args.size)
    if args.size == "ci":   # the ci model takes 32x32: not a 224 classifier
        raise SystemExit("--size ci builds a 32x32 MobileNetV2; use --size full")
    models = {"classifier": classifier, "detector": detector()}
    compiled = {}
    for name, proto in models.items():
        path = os.path.join(work, f"{name}.onnx")
        onnx.save(proto, path)
        start = time.perf_counter()
        compiled[name] = (load(compile_om(path, os.path.join(work, name), None)),
                          load(compile_om(path, os.path.join(work, f"{name}_aipp"), config)))
        print(f"{name}: compiled with and without AIPP in {time.perf_counter() - start:.1f} s")
    box_error, frames, logits, rows = 0.0, [], ([], [], []), []
    rng = np.random.default_rng(0)
    for name, rgb in shots:
        _frame, nv12 = nv12_frame(rgb)
        scaled = scale_nv12(nv12)
        raw = scaled.reshape(1, SIDE * 3 // 2, SCALED_W, 1)
        ref_in = opencv_input(scaled)
        frames.append((scaled, raw))
        plain, with_aipp = compiled["classifier"]
        logits[0].append(plain.run([ref_in])[0][0])
        logits[1].append(with_aipp.run([raw])[0][0])
        level = rng.uniform(-1, 1, ref_in.shape).astype(np.float32) / (STD[:, None, None] * 255)
        logits[2].append(plain.run([ref_in + level])[0][0])
        plain, with_aipp = compiled["detector"]
        diff = float(np.abs(plain.run([ref_in])[0] - with_aipp.run([raw])[0]).max())
        box_error = max(box_error, diff)
        rows.append((name, diff))
    ref, ours, noisy = (np.array(v) for v in logits)
    top = (ref.argmax(1), ours.argmax(1))
    centred = ((ref - ref.mean(0)).argmax(1), (ours - ours.mean(0)).argmax(1),
               (noisy - noisy.mean(0)).argmax(1))
    print(f"{'photo':<24} {'top-1 opencv/aipp':>18} {'centred opencv/aipp':>20} "
          f"{'box diff px':>11}")
    for k, (name, diff) in enumerate(rows):
        print(f"{name:<24} {top[0][k]:>8} / {top[1][k]:<7} {centred[0][k]:>9} / "
              f"{centred[1][k]:<8} {diff:>11.3f}")
    agree = int((top[0] == top[1]).sum())
    agree_centred = int((centred[0] == centred[1]).sum())
    floor = int((centred[0] == centred[2]).sum())
    print(f"top-1 agreement: {agree}/{len(shots)} (target >= 9/10); centred {agree_centred}/"
          f"{len(shots)}, noise floor (one level of noise, no AIPP) {floor}/{len(shots)}; "
          f"largest box difference: {box_error:.3f} px (target <= 1); largest logit "
          f"difference {np.abs(ref - ours).max():.4f}, with one level of noise "
          f"{np.abs(ref - noisy).max():.4f} (logits up to {np.abs(ref).max():.2f})")
    scaled, raw = frames[0]
    plain, with_aipp = compiled["classifier"]
    base = median_ms(lambda: plain.run([opencv_input(scaled)]), args.runs)
    ours = median_ms(lambda: with_aipp.run([raw]), args.runs)
    print(f"classifier latency: AIPP model on the raw frame {ours:.1f} ms, OpenCV "
          f"pre-processing + model {base:.1f} ms: ratio {ours / base:.2f}")
    return 0 if agree >= 9 and box_error <= 1.0 else 1


if __name__ == "__main__":
    sys.exit(main())
