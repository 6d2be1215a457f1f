"""Running an unknown-shape OM (docs/runtime.md "Unknown-shape models").

The OM holds a static model compiled at one shape per input (upper bounds of bounded ranges)
plus the ranges, the parsed source graph and the compile options
(ge.compiler.dynamic_shape).  A run at the compiled shape uses that model directly.  Any
other shape inside the ranges is *specialised* on first use: the compiler (imported lazily,
only then) builds the source graph at that shape through the same pipeline, op compiler and
on-disk kernel cache, and the resulting model is kept in this process, keyed by the input
shapes.  A shape outside the ranges is EP0220 before anything runs.
"""
from __future__ import annotations

import logging
import time

from ge.errors import GeError
from ge.graph.attr_names import (ATTR_DYNAMIC_OPTIONS, ATTR_DYNAMIC_RANGES, ATTR_DYNAMIC_SOURCE,
                                 TENSOR_SHAPE_RANGE)

from ._errors import BAD_INPUT

log = logging.getLogger(__name__)

__all__ = ["DynamicShapes", "dynamic_shapes_of", "OUT_OF_RANGE"]

OUT_OF_RANGE = "EP0220"
UNBOUNDED = -1             # a shape_range pair's "no upper bound" (docs/dynamic-shapes.md)
_FRAMEWORKS = {"Caffe": 0, "MindSpore": 1, "TensorFlow": 3, "Onnx": 5}


def _allowed(low: int, high: int) -> str:
    return f"[{low}, inf)" if high == UNBOUNDED else f"[{low}, {high}]"


class DynamicShapes:
    """The ranges of an unknown-shape OM and its specialisations (one per input-shape key)."""

    def __init__(self, om, ranges_text: str):
        self.text = ranges_text
        self.ranges = _data_ranges(om.model_def)
        self._source = om.model_attr(ATTR_DYNAMIC_SOURCE, b"")
        self._weights = om.weights      # the source graph's constants are in WEIGHTS_DATA
        self._options = om.model_attr(ATTR_DYNAMIC_OPTIONS, "{}")
        framework = om.model_attr("framework_type", "")
        self._framework = _FRAMEWORKS.get(framework, int(framework) if framework.isdigit()
                                          else -1)
        self._models: dict = {}
        self.specialise_seconds: dict = {}     # shapes key -> seconds its first use took

    def check(self, name: str, shape: tuple) -> None:
        """EP0220 (or BAD_INPUT for a rank mismatch) unless `shape` fits input `name`."""
        dims = self.ranges.get(name)
        if dims is None:
            return
        if len(shape) != len(dims):
            raise GeError(BAD_INPUT, {"reason": f"input {name} must have rank {len(dims)} "
                                                f"(shape_range {[list(d) for d in dims]}), got "
                                                f"shape {list(shape)}"})
        for k, (value, (low, high)) in enumerate(zip(shape, dims)):
            if value < low or (high != UNBOUNDED and value > high):
                raise GeError(OUT_OF_RANGE, {"input": name, "shape": str(list(shape)),
                                             "dim": str(k), "allowed": _allowed(low, high),
                                             "ranges": self.text})

    def model_for(self, key: tuple, names: list, close_with: list):
        """The specialised Model for input shapes `key` (compiled on first use)."""
        model = self._models.get(key)
        if model is None:
            from ge.compiler.dynamic_shape import specialise   # the compiler, lazily
            from ge.om import parse_om
            from .model import Model
            start = time.perf_counter()
            try:
                image = specialise(self._source, self._weights, self._options,
                                   dict(zip(names, map(list, key))), self._framework)
            except GeError as e:       # e.g. two inputs whose sizes do not fit together
                raise GeError(BAD_INPUT, {"reason": f"the model cannot be built for the input "
                                                    f"shapes {[list(k) for k in key]} "
                                                    f"({e})"}) from None
            model = Model(parse_om(image, f"<specialised {list(key)}>"))
            self.specialise_seconds[key] = time.perf_counter() - start
            log.info("specialised the unknown-shape model at %s in %.3f s", list(key),
                     self.specialise_seconds[key])
            self._models[key] = model
            close_with.append(model)
        return model


def _data_ranges(model_def) -> dict:
    """Data name -> [(lo, hi), ...] from the `shape_range` of the root graph's Data ops."""
    ranges = {}
    for op in model_def.graph[0].op:
        if op.output_desc and TENSOR_SHAPE_RANGE in op.output_desc[0].attr:
            rows = op.output_desc[0].attr[TENSOR_SHAPE_RANGE].list_list_int.list_list_i
            ranges[op.name] = [tuple(int(v) for v in row.list_i) for row in rows]
    return ranges


def dynamic_shapes_of(om):
    """DynamicShapes of an unknown-shape OM, None for a static one."""
    text = om.model_attr(ATTR_DYNAMIC_RANGES, "")
    return DynamicShapes(om, text) if text else None
