"""AIPP models in the runtime: which inputs take raw images, the pre-processed image the numpy
reference (ge.ops.defs.aipp) makes of them for the original model, and, when the model's own
AIPP output differs from that reference, the AIPP stage the first difference points at.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

__all__ = ["AippLink", "aipp_links", "aipp_attrs", "reference_features", "mismatch_stage",
           "DYNAMIC_AIPP_MODE"]

DYNAMIC_AIPP_MODE = "dynamic_aipp"   # _data_related_aipp_mode of a dynamic AIPP image input


@dataclass(frozen=True)
class AippLink:
    step: object          # the Aipp step of the plan
    image: int            # model input index of the raw image
    params: object        # model input index of the dynamic parameters, or None
    data_name: str        # the image input's name (the original model's input)


def _address(view) -> int:
    return view.__array_interface__["data"][0]


def aipp_links(model) -> list:
    """One AippLink per Aipp op of the root graph fed directly by model inputs."""
    by_address = {_address(view): k for k, (_, view, _) in enumerate(model._plan.root.data)}
    links = []
    for step in model._plan.root.steps:
        if step.type != "Aipp" or step.inputs[0] is None:
            continue
        image = by_address.get(_address(step.inputs[0]))
        if image is None:
            continue
        params = None
        if len(step.inputs) > 1 and step.inputs[1] is not None:
            params = by_address.get(_address(step.inputs[1]))
        links.append(AippLink(step, image, params, model.inputs[image].name))
    return links


def aipp_attrs(step) -> dict:
    from ge import ops
    from .model import _resolved
    return _resolved(ops.get("Aipp"), step)


def reference_features(link: AippLink, inputs: list) -> np.ndarray:
    """The numpy reference's AIPP output for the raw inputs (model input order)."""
    from ge import ops
    raw = [inputs[link.image], None if link.params is None else inputs[link.params]]
    return ops.get("Aipp").kernel(raw, aipp_attrs(link.step))[0]


def mismatch_stage(link: AippLink, ours: np.ndarray, ref: np.ndarray, first_bad: tuple) -> str:
    """The AIPP stage a wrong element points at: padding (it lies outside the crop window);
    normalisation (over the crop window of its channel ours differs from the reference by one
    constant offset - mean_chn, min_chn - or one constant factor - var_reci_chn); else the
    pixel stages (crop, swaps, colour-space conversion)."""
    from ge.ops.defs.aipp import static_params
    attrs = aipp_attrs(link.step)
    nhwc = attrs.get("output_format") == "NHWC"
    shape = list(attrs["output_shape"])
    if len(first_bad) != 4 or len(shape) != 4:
        return "AIPP"
    if link.params is not None:
        return "AIPP (dynamic parameters)"
    to_nchw = (lambda a: a.reshape(shape).transpose(0, 3, 1, 2)) if nhwc else \
        (lambda a: a.reshape(shape))
    n, c, h, w = ([first_bad[i] for i in (0, 3, 1, 2)] if nhwc else list(first_bad))
    ours, ref = to_nchw(np.asarray(ours, np.float64)), to_nchw(np.asarray(ref, np.float64))
    p = static_params(json.loads(attrs["aipp_config_path"]), ours.shape[2:])
    top, _bottom, left, _right = p["pads"]
    if not (top <= h < top + p["crop_h"] and left <= w < left + p["crop_w"]):
        return "padding"
    window = (n, c, slice(top, top + p["crop_h"]), slice(left, left + p["crop_w"]))
    a, b = ours[window], ref[window]
    scale = max(float(np.abs(b).max()), 1e-6)
    if np.ptp(a - b) <= 1e-4 * scale:
        return "normalisation (mean_chn / min_chn)"
    nonzero = np.abs(b) > 1e-3 * scale
    if nonzero.any() and np.ptp(a[nonzero] / b[nonzero]) <= 1e-4:
        return "normalisation (var_reci_chn)"
    return "crop / channel swap / colour-space conversion"
