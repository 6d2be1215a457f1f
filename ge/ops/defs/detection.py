"""SSD detection ops (Caffe PriorBox and SSDDetectionOutput), with numpy reference kernels.

PriorBox depends only on the shapes of its inputs (feature map, image), so the compiler folds
it to a constant.  SSDDetectionOutput decodes the boxes, keeps per class the boxes above the
confidence threshold after non-maximum suppression, then the keep_top_k best overall, in
descending score (as OpenCV's DNN module orders them; Caffe groups them by label); its output
has Caffe's row layout [image_id, label, score, xmin, ymin, xmax, ymax] with a fixed keep_top_k
rows per image (ours: CANN's op writes a [batch, n, 8] box list), unused rows -1.
"""
from __future__ import annotations

import math

import numpy as np

from ._common import DT, VT, AttrSpec, OpDef, Port, fail, register, shape_of

FAMILY = "detection"


# ---- PriorBox ---------------------------------------------------------------------------------

def _aspect_ratios(attrs) -> list:
    ratios = [1.0]
    for ar in attrs["aspect_ratio"]:
        if any(abs(ar - r) < 1e-6 for r in ratios):
            continue
        ratios.append(float(ar))
        if attrs["flip"]:
            ratios.append(1.0 / ar)
    return ratios


def _num_priors(attrs) -> int:
    return len(_aspect_ratios(attrs)) * len(attrs["min_size"]) + len(attrs["max_size"])


def infer_prior_box(ctx):
    fs = shape_of(ctx, 0)
    if fs is None or len(fs) != 4:
        fail(ctx, "the feature map must be 4-D (NCHW)")
    return [((1, 2, fs[2] * fs[3] * _num_priors(ctx.attrs) * 4), DT.DT_FLOAT)]


def kernel_prior_box(ins, attrs):
    """Caffe SSD's priors: per cell, per min size the square box, the sqrt(min*max) box and one
    box per extra aspect ratio; coordinates normalised by the image size."""
    h, w = ins[0].shape[2:]
    img_h = attrs["img_h"] or ins[1].shape[2]
    img_w = attrs["img_w"] or ins[1].shape[3]
    step_h = attrs["step_h"] or img_h / h
    step_w = attrs["step_w"] or img_w / w
    sizes = []                                   # (box width, box height) per prior
    for i, s in enumerate(attrs["min_size"]):
        sizes.append((s, s))
        if attrs["max_size"]:
            m = math.sqrt(s * attrs["max_size"][i])
            sizes.append((m, m))
        for ar in _aspect_ratios(attrs)[1:]:
            sizes.append((s * math.sqrt(ar), s / math.sqrt(ar)))
    sizes = np.array(sizes, dtype=np.float64)
    cy, cx = np.meshgrid((np.arange(h) + attrs["offset"]) * step_h,
                         (np.arange(w) + attrs["offset"]) * step_w, indexing="ij")
    cx, cy = cx[..., None], cy[..., None]
    boxes = np.stack([(cx - sizes[:, 0] / 2) / img_w, (cy - sizes[:, 1] / 2) / img_h,
                      (cx + sizes[:, 0] / 2) / img_w, (cy + sizes[:, 1] / 2) / img_h], axis=-1)
    boxes = boxes.reshape(-1)
    if attrs["clip"]:
        boxes = np.clip(boxes, 0.0, 1.0)
    variance = list(attrs["variance"])
    variance = variance * 4 if len(variance) == 1 else variance
    var = np.tile(np.asarray(variance, dtype=np.float64), boxes.size // 4)
    return [np.stack([boxes, var]).reshape(1, 2, -1).astype(np.float32)]


register(OpDef("PriorBox", inputs=(Port("x"), Port("img")), outputs=(Port("y"),),
               attrs=(AttrSpec("min_size", VT.VT_LIST_FLOAT),
                      AttrSpec("max_size", VT.VT_LIST_FLOAT, []),
                      AttrSpec("aspect_ratio", VT.VT_LIST_FLOAT, []),
                      AttrSpec("flip", VT.VT_BOOL, True), AttrSpec("clip", VT.VT_BOOL, False),
                      AttrSpec("variance", VT.VT_LIST_FLOAT, [0.1]),
                      AttrSpec("img_h", VT.VT_INT, 0), AttrSpec("img_w", VT.VT_INT, 0),
                      AttrSpec("step_h", VT.VT_FLOAT, 0.0), AttrSpec("step_w", VT.VT_FLOAT, 0.0),
                      AttrSpec("offset", VT.VT_FLOAT, 0.5)),
               infer=infer_prior_box, kernel=kernel_prior_box, family=FAMILY,
               doc="SSD prior boxes and their variances, [1, 2, H*W*num_priors*4]"))


# ---- SSDDetectionOutput -----------------------------------------------------------------------

def infer_detection_output(ctx):
    ls = shape_of(ctx, 0)
    batch = ls[0] if ls is not None else -1
    rows = batch * ctx.attrs["keep_top_k"] if batch >= 0 else -1
    return [((1, 1, rows, 7), DT.DT_FLOAT)]


def _decode(loc, prior, var, code_type, encoded):
    """Boxes [P, 4] from the location offsets and the priors (Caffe's DecodeBBox)."""
    v = np.ones_like(var) if encoded else var
    pw, ph = prior[:, 2] - prior[:, 0], prior[:, 3] - prior[:, 1]
    if code_type == 1:                                   # CORNER
        return prior + v * loc
    if code_type == 3:                                   # CORNER_SIZE
        size = np.stack([pw, ph, pw, ph], axis=1)
        return prior + v * loc * size
    pcx, pcy = (prior[:, 0] + prior[:, 2]) / 2, (prior[:, 1] + prior[:, 3]) / 2
    cx = v[:, 0] * loc[:, 0] * pw + pcx
    cy = v[:, 1] * loc[:, 1] * ph + pcy
    bw = np.exp(v[:, 2] * loc[:, 2]) * pw
    bh = np.exp(v[:, 3] * loc[:, 3]) * ph
    return np.stack([cx - bw / 2, cy - bh / 2, cx + bw / 2, cy + bh / 2], axis=1)


def _iou(box, others):
    ix = np.clip(np.minimum(box[2], others[:, 2]) - np.maximum(box[0], others[:, 0]), 0, None)
    iy = np.clip(np.minimum(box[3], others[:, 3]) - np.maximum(box[1], others[:, 1]), 0, None)
    inter = ix * iy

    def area(b):
        return np.clip(b[..., 2] - b[..., 0], 0, None) * np.clip(b[..., 3] - b[..., 1], 0, None)
    union = area(box) + area(others) - inter
    return np.where(union > 0, inter / np.where(union > 0, union, 1), 0.0)


def _nms(boxes, scores, threshold, top_k, iou_threshold, eta):
    """Caffe's ApplyNMSFast: indices kept, in descending score order."""
    order = [int(i) for i in np.argsort(-scores, kind="stable") if scores[i] > threshold]
    if top_k > -1:
        order = order[:top_k]
    kept: list[int] = []
    adaptive = iou_threshold
    for i in order:
        if kept and np.any(_iou(boxes[i], boxes[kept]) > adaptive):
            continue
        kept.append(i)
        if eta < 1 and adaptive > 0.5:
            adaptive *= eta
    return kept


def kernel_detection_output(ins, attrs):
    loc, conf, prior = (np.asarray(a, dtype=np.float64) for a in ins)
    batch, classes = loc.shape[0], attrs["num_classes"]
    priors = prior.reshape(prior.shape[0], 2, -1, 4)[0]
    keep_top_k = attrs["keep_top_k"]
    out = np.full((batch * keep_top_k, 7), -1.0)
    for n in range(batch):
        boxes = _decode(loc[n].reshape(-1, 4), priors[0], priors[1], attrs["code_type"],
                        attrs["variance_encoded_in_target"])
        scores = conf[n].reshape(-1, classes)
        found = []                                       # (score, label, prior index)
        for c in range(classes):
            if c == attrs["background_label_id"]:
                continue
            for i in _nms(boxes, scores[:, c], attrs["confidence_threshold"], attrs["top_k"],
                          attrs["iou_threshold"], attrs["eta"]):
                found.append((scores[i, c], c, i))
        found = sorted(found, key=lambda f: -f[0])[:keep_top_k]   # stable: label order on ties
        for row, (score, c, i) in enumerate(found):
            out[n * keep_top_k + row] = [n, c, score, *boxes[i]]
    return [out.reshape(1, 1, -1, 7).astype(np.float32)]


register(OpDef("SSDDetectionOutput", inputs=(Port("bbox_delta"), Port("score"), Port("anchors")),
               outputs=(Port("y"),),
               attrs=(AttrSpec("num_classes", VT.VT_INT),
                      AttrSpec("share_location", VT.VT_BOOL, True),
                      AttrSpec("background_label_id", VT.VT_INT, 0),
                      AttrSpec("iou_threshold", VT.VT_FLOAT, 0.3),
                      AttrSpec("top_k", VT.VT_INT, 200), AttrSpec("eta", VT.VT_FLOAT, 1.0),
                      AttrSpec("variance_encoded_in_target", VT.VT_BOOL, False),
                      AttrSpec("code_type", VT.VT_INT, 2),
                      AttrSpec("keep_top_k", VT.VT_INT, 200),
                      AttrSpec("confidence_threshold", VT.VT_FLOAT, 0.0)),
               infer=infer_detection_output, kernel=kernel_detection_output, family=FAMILY,
               doc="SSD detection output: [1, 1, batch*keep_top_k, 7] rows, unused rows -1"))
