"""`InferSession`: the host runtime in the shape of ais_bench's Python API.

    from ge.runtime import InferSession
    session = InferSession("net.om")              # ais_bench order InferSession(0, "net.om") too
    [d.name for d in session.get_inputs()]        # TensorDesc(name, shape, datatype, format,
                                                  #            size, realsize)
    outputs = session.infer([x])                  # list of numpy arrays, in output order
    session.summary().as_dict()                   # latency of every infer() so far

`device_id` is ais_bench's argument: 0 is the one device (this host), others are EP0002.  A session
wraps one ge.runtime.Model: one caller thread at a time; `threads` is the number it runs on
(default: the physical cores, as onnxruntime).  See docs/runtime.md, "Python API".
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Union

from ge.errors import GeError

from .bench import LatencySummary, summarize
from .model import Model, load

__all__ = ["InferSession", "TensorDesc", "InferSummary"]


@dataclass(frozen=True)
class TensorDesc:
    name: str
    shape: list
    datatype: str        # numpy dtype name: "float32", "int64", ...
    format: str          # "ND": the host runtime's tensors are dense row-major
    size: int            # bytes
    realsize: int        # bytes (no padding on the host)


@dataclass(frozen=True)
class InferSummary:
    exec_time_list: list        # [(start ms, end ms)] per infer() call, perf_counter clock
    stats: LatencySummary

    def as_dict(self) -> dict:
        return self.stats.as_dict()


def _desc(spec) -> TensorDesc:
    return TensorDesc(spec.name, list(spec.shape), spec.dtype.name, "ND", spec.nbytes,
                      spec.nbytes)


class InferSession:
    def __init__(self, om_path: Union[str, int], device_id: Union[int, str] = 0, loop: int = 1,
                 threads: Union[int, None] = None):
        if isinstance(om_path, int) and isinstance(device_id, str):   # ais_bench's order
            om_path, device_id = device_id, om_path
        self.device_id = int(device_id)
        if self.device_id != 0:
            raise GeError("EP0002", {"feature": f"device_id={device_id}", "reason": "the "
                                     "host runtime has one device, the host (device 0)"})
        self.loop = max(int(loop), 1)
        self.model: Model = load(om_path, threads=threads)
        self._times: list = []

    def get_inputs(self) -> list:
        return [_desc(s) for s in self.model.inputs]

    def get_outputs(self) -> list:
        return [_desc(s) for s in self.model.outputs]

    def infer(self, feeds, mode: str = "static") -> list:
        """Run the model on `feeds` (a list in input order, or a dict by input name) `loop`
        times; returns the last run's outputs.  `mode` is ais_bench's: "static", or for a
        model compiled with gears "dymbatch" / "dymhw" / "dymdims" (the gear is the one of
        the feeds' shapes; "static" picks it the same way)."""
        gear_modes = {"batch": "dymbatch", "image": "dymhw", "dims": "dymdims"}
        expected = gear_modes.get(self.model.gears.kind) if self.model.gears else None
        if mode in gear_modes.values() and mode != expected:
            raise GeError("EP0201", {"value": mode, "option": "infer mode", "reason":
                                     f"the model has {'no gears' if expected is None else ''}"
                                     f"{'' if expected is None else expected + ' gears'}"})
        if mode != "static" and mode not in gear_modes.values():
            raise GeError("EP0002", {"feature": f"infer mode {mode!r}", "reason": "the host "
                                     "runtime runs static shapes and gears"})
        outputs = None
        for _ in range(self.loop):
            start = time.perf_counter()
            outputs = self.model.run(feeds)
            self._times.append((start * 1000.0, time.perf_counter() * 1000.0))
        return outputs

    def summary(self) -> InferSummary:
        return InferSummary(list(self._times), summarize([e - s for s, e in self._times]))

    def reset_summaryinfo(self) -> None:
        self._times.clear()

    def free_resource(self) -> None:
        self.model.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.free_resource()
