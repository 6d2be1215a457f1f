"""`ge.runtime.load(path) -> Model`: an OM of ours executed on the host.

    model = ge.runtime.load("net.om")
    model.inputs, model.outputs          # [TensorSpec(name, shape, dtype, index)]
    outs = model.run([x])                # or run({"x": x}); list of new arrays
    outs, seen = model.run([x], capture=True)   # seen[op name] = [output arrays]

Loading checks the container (ge.om.read_om), the host target, the memory plan, the kernel
bytes and every compiled op's plan against its kernel's declarations (ge.runtime._validate);
running copies the inputs into the arena, runs every op in OpDef.id order with its compiled
kernel (cffi) or its ge.ops reference kernel (the AiCpu engine) and copies the graph outputs
out.  One Model is not re-entrant: run() from one thread at a time.
"""
from __future__ import annotations

import functools
import os
from typing import Union

import numpy as np

from ge.graph.attr_names import ATTR_CUSTOM_PACKAGE, ATTR_KERNEL_SHA256
from ge import blas
from ge.errors import GeError
from ge.graph.lowprec import call_lowprec, is_low_precision
from ge.ops import Role, role_of
from ._dynamic import dynamic_shapes_of
from ._gears import SHAPE_DATA, fill_prefix, gear_info, gear_of_option, gear_of_shapes
from ._errors import BAD_INPUT, EXEC_FAILED, FILE_OPEN, INVALID_OM, UNSUPPORTED_OP
from ._io import low_precision_input, shape_fits
from ._kernels import KernelLibrary
from ._threads import check_threads
from ._plan import GraphPlan, Plan, Step, TensorSpec, aligned_zeros, build_plan, check_target
from ._validate import check_kernel_step

__all__ = ["Model", "load", "TensorSpec"]


def load(path: str, *, check_host: bool = True, threads=None) -> "Model":
    """Load an OM written by our compiler for this host; `threads` for its runs (default: the
    physical cores, as onnxruntime; ge.runtime._threads)."""
    threads = check_threads(threads, "threads")
    from ge.om import read_om
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise GeError(FILE_OPEN, {"file": path, "reason": "it is a directory"
                                  if os.path.isdir(path) else "no such file"})
    try:
        om = read_om(path)
    except GeError:
        raise
    except OSError as e:
        raise GeError(FILE_OPEN, {"file": path, "reason": e.strerror}) from None
    except (ValueError, TypeError, KeyError, IndexError) as e:
        raise GeError(INVALID_OM, {"file": path, "reason": str(e)}) from None
    if check_host:
        check_target(om, path)
    from ge.ops.custom import ensure_loaded
    ensure_loaded()                 # custom operator packages (docs/custom-ops.md)
    return Model(om, path, threads=threads)


class Model:
    def __init__(self, om, source: str = "<memory>", threads=None):
        self.source = source
        self.threads = check_threads(threads, "threads")
        self.name = om.model_def.name
        self._plan: Plan = build_plan(om, source)
        self._kernels = KernelLibrary(list(om.kernels or ()))
        self._branch_seen = None        # capture dict of a gear run (see _run_gear)
        self.prepared: list = []        # ops whose kernels packed their constants at load
        try:
            for graph in self._plan.graphs.values():
                for step in graph.steps:
                    self._bind(step)
        except BaseException:
            self._kernels.close()
            raise
        self.gears = gear_info(om.model_def)     # None unless compiled with gears
        self.inputs = [spec for spec, _, _ in self._plan.root.data]
        self.outputs = [spec for spec, _, _ in self._plan.root.outputs]
        if self.gears is not None:     # the shape input is filled by run(), as ACL does
            self.inputs = [_gear_spec(spec, self.gears) for spec in self.inputs
                           if spec.name != SHAPE_DATA]
        self.engines = {s.name: ("AiCore" if s.kernel_name else "AiCpu")
                        for g in self._plan.graphs.values() for s in g.steps}
        # unknown-shape model: inputs shows the compiled shapes, input_ranges the ranges
        self.dynamic = dynamic_shapes_of(om)
        self.input_ranges = dict(self.dynamic.ranges) if self.dynamic else {}
        self._specialised: list = []

    # -- loading ---------------------------------------------------------------------------
    def _bind(self, step: Step) -> None:
        _check_package(step)
        if step.kernel_name:
            self._bind_kernel(step)
        elif _is_byte_copy(step):
            step.call = _byte_copy_runner(step)
        elif role_of(step.type) == Role.CONTROL:
            step.call = _subgraph_runner(step, self)
        else:
            step.call = _reference_runner(step, self.source)

    def _bind_kernel(self, step: Step) -> None:
        sha = step.attrs.get(ATTR_KERNEL_SHA256, (None, ""))[1]
        fn = self._kernels.function(step.kernel_name, sha, step.name)
        check_kernel_step(step, *self._kernels.declared(step.kernel_name))
        ffi = self._kernels.ffi
        keep = [v for v in step.inputs if v is not None] + list(step.outputs)

        def ptr(view):
            return ffi.NULL if view is None else ffi.cast("void *", _addr(view))
        ins = ffi.new("void *[]", [ptr(v) for v in step.inputs] or [ffi.NULL])
        outs = ffi.new("void *[]", [ptr(v) for v in step.outputs] or [ffi.NULL])
        ws_list = step.attrs.get("__workspace__") or []
        if ws_list:
            base = _addr(self._plan.arena) - self._plan.arena_base
            ws = ffi.cast("void *", base + int(ws_list[0][0]))
        else:
            scratch = np.zeros(64, dtype=np.uint8)
            keep.append(scratch)
            ws = ffi.cast("void *", _addr(scratch))
        step.c_args = (ins, outs, ws, keep)
        name, optype, kernel = step.name, step.type, step.kernel_name

        def failed(rc: int, entry: str) -> GeError:
            return GeError(EXEC_FAILED, {"opname": name, "optype": optype,
                                         "reason": f"kernel {kernel} {entry} status {rc}"})
        entry, args = fn, (ins, outs, ws)
        prep = self._kernels.preparation(step.kernel_name)
        if prep is not None and _constants(step.inputs, prep.constant_inputs):
            state = self._prepare(prep, ins, keep, failed)
            entry, args = prep.prepared, (ins, outs, ws, state)
            self.prepared.append(step.name)

        def call(_step):
            rc = entry(*args)
            if rc != 0:
                raise failed(rc, "returned")
        step.call = call

    def _prepare(self, prep, ins, keep: list, failed):
        """The state of a kernel with prepared constants (docs/kernel-abi.md), filled once
        here from its constant inputs."""
        buf = aligned_zeros(prep.state_bytes)   # 64-byte aligned, like the arena
        keep.append(buf)
        state = self._kernels.ffi.cast("void *", _addr(buf))
        rc = prep.prepare(ins, state)
        if rc != 0:
            raise failed(rc, "preparation returned")
        return state

    # -- running ---------------------------------------------------------------------------
    def run(self, inputs: Union[list, tuple, dict], *, capture: bool = False,
            gear: int | None = None):
        """Run on `inputs`.  A model with gears runs the gear of the inputs' shapes (or gear
        number `gear`, see select_gear); EP0200 when they are no gear."""
        feeds = self._check_inputs(inputs)
        self._use_threads()
        other = self._specialisation(feeds)
        if other is not None:
            return other.run(feeds, capture=capture)
        seen: dict = {} if capture else None
        if self.gears is not None:
            outs = self._run_gear(feeds, gear, seen)
        else:
            outs = _run_graph(self._plan.root, feeds, seen)
        return (outs, seen) if capture else outs

    def select_gear(self, option: str, value: str) -> int:
        """The gear number an msame-style option names (`--dymBatch 4`, `--dymHW 64,64`,
        `--dymDims "x:1,16"`); EP0201/EP0200 when it names none of the model's gears."""
        if self.gears is None:
            raise GeError("EP0201", {"value": value, "option": option,
                                     "reason": "the model was compiled without gears"})
        return gear_of_option(self.gears, option, value, self.source)

    def gear_shapes(self, gear: int) -> dict:
        """{input name: shape} of one gear of the model."""
        return self.gears.shapes(gear)

    def _run_gear(self, feeds: list, gear, seen) -> list:
        shapes = {spec.name: tuple(v.shape) for spec, v in zip(self.inputs, feeds)}
        if gear is None:
            gear = gear_of_shapes(self.gears, shapes, self.source)
        elif any(shapes[n] != tuple(s) for n, s in self.gears.shapes(gear).items()
                 if n in shapes):
            raise GeError("EP0200", {"shapes": str(shapes), "model": self.source,
                                     "gears": self.gears.text()})
        by_name = dict(zip((s.name for s in self.inputs), feeds))
        root = self._plan.root
        for spec, view, _ in root.data:
            if spec.name == SHAPE_DATA:
                np.copyto(view, np.asarray(self.gears.gears[gear], view.dtype).reshape(view.shape))
            else:
                fill_prefix(view, by_name[spec.name])
        self._branch_seen = seen            # run_case records the branch's ops there
        try:
            for step in root.steps:
                step.call(step)
                if seen is not None:
                    seen[step.name] = [o.copy() for o in step.outputs]
        finally:
            self._branch_seen = None
        case = next(s for s in root.steps if s.name == self.gears.case_name)
        branch = case.subgraphs[f"branches{gear}"]
        return [view.reshape(-1)[:spec.nbytes // spec.dtype.itemsize].reshape(spec.shape).copy()
                for (_, view, _), (spec, _, _) in zip(root.outputs, branch.outputs)]

    def profile(self, inputs, runs: int = 1) -> list:
        """[(op name, op type, engine, mean seconds)] of the root graph's ops, in order."""
        import time
        feeds = self._check_inputs(inputs)
        self._use_threads()
        other = self._specialisation(feeds)
        if other is not None:
            return other.profile(feeds, runs)
        root = self._plan.root
        totals = {s.name: 0.0 for s in root.steps}
        for _ in range(runs):
            for (_, view, _), value in zip(root.data, feeds):
                np.copyto(view, value.reshape(view.shape), casting="unsafe")
            for step in root.steps:
                start = time.perf_counter()
                step.call(step)
                totals[step.name] += time.perf_counter() - start
        return [(s.name, s.type, self.engines[s.name], totals[s.name] / runs)
                for s in root.steps]

    def _use_threads(self) -> None:
        if self._kernels.uses_blas:
            blas.set_threads(self.threads)

    def _check_inputs(self, inputs) -> list:
        specs = self.inputs
        if isinstance(inputs, dict):
            unknown = [k for k in inputs if k not in {s.name for s in specs}]
            if unknown:
                raise GeError(BAD_INPUT, {"reason": f"unknown model input {unknown[0]!r}; the "
                                          f"model inputs are {', '.join(s.name for s in specs)}"})
            missing = [s.name for s in specs if s.name not in inputs]
            if missing:
                raise GeError(BAD_INPUT, {"reason": f"no value given for model input "
                                                    f"{missing[0]!r}"})
            arrays = [inputs[s.name] for s in specs]
        elif isinstance(inputs, (list, tuple)):
            if len(inputs) != len(specs):
                raise GeError(BAD_INPUT, {"reason": f"the model has {len(specs)} input(s) "
                                                    f"({', '.join(s.name for s in specs)}); "
                                                    f"{len(inputs)} given"})
            arrays = list(inputs)
        else:
            raise GeError(BAD_INPUT, {"reason": f"inputs must be a list or a dict of numpy "
                                                f"arrays, not {type(inputs).__name__}"})
        out = []
        for spec, value in zip(specs, arrays):
            if not isinstance(value, np.ndarray):
                value = np.asarray(value)
            value = low_precision_input(value, spec)
            if value.dtype != spec.dtype:
                raise GeError(BAD_INPUT, {"reason": f"input {spec.name} must have dtype "
                                                    f"{spec.dtype}, got {value.dtype}"})
            if self.dynamic is not None:
                self.dynamic.check(spec.name, tuple(value.shape))
            elif not shape_fits(value.shape, spec.shape):
                raise GeError(BAD_INPUT, {"reason": f"input {spec.name} must have shape "
                                                    f"{list(spec.shape)}, got {list(value.shape)}"})
            out.append(value)
        return out

    def _specialisation(self, feeds: list):
        """The specialised model for these input shapes (unknown-shape model, shapes other
        than the compiled ones), else None."""
        if self.dynamic is None:
            return None
        key = tuple(tuple(int(d) for d in f.shape) for f in feeds)
        if key == tuple(tuple(s.shape) for s in self.inputs):
            return None
        return self.dynamic.model_for(key, [s.name for s in self.inputs], self._specialised)

    def close(self) -> None:
        for model in getattr(self, "_specialised", ()):
            model.close()
        self._kernels.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        kernels = getattr(self, "_kernels", None)
        if kernels is not None:
            kernels.close()


def _gear_spec(spec: TensorSpec, gears) -> TensorSpec:
    """The input as the user sees it: -1 in the dimensions the gears vary."""
    dims = list(spec.shape)
    for axis in gears.axes(spec.name):
        dims[axis] = -1
    return TensorSpec(spec.name, tuple(dims), spec.dtype, spec.index, spec.aipp)


def _check_package(step: Step) -> None:
    """A custom op runs only where its package is loaded (EP0905 names the package)."""
    from ge.ops.custom import loaded_packages
    recorded = step.attrs.get(ATTR_CUSTOM_PACKAGE, (None, ""))[1]
    if recorded:
        package, _, version = str(recorded).partition(" ")
        if package not in loaded_packages():
            raise GeError("EP0905", {"optype": step.type, "package": package,
                                     "version": version})


def _constants(views: list, mask: int) -> bool:
    """Every input of bit mask `mask` is a constant of the model: a weight, whose memory is
    read-only (the arena's is writable)."""
    return all(view is not None and not view.flags.writeable
               for k, view in enumerate(views) if mask >> k & 1)


def _addr(view: np.ndarray) -> int:
    return view.__array_interface__["data"][0]


def _run_graph(graph: GraphPlan, feeds: list, seen) -> list:
    for (spec, view, _), value in zip(graph.data, feeds):
        np.copyto(view, np.asarray(value).reshape(view.shape), casting="unsafe")
    for step in graph.steps:
        step.call(step) if step.call is not None else None
        if seen is not None:
            seen[step.name] = [o.copy() for o in step.outputs]
    return [view.copy() for _, view, _ in graph.outputs]


def _is_byte_copy(step: Step) -> bool:
    """A reshape-family op (output 0 = the bytes of input 0) with a plain dense layout."""
    if role_of(step.type) != Role.ALIAS or len(step.outputs) != 1 or not step.inputs:
        return False
    src, dst = step.inputs[0], step.outputs[0]
    return (src is not None and src.dtype == dst.dtype and src.size == dst.size
            and src.flags.c_contiguous and dst.flags.c_contiguous)


def _byte_copy_runner(step: Step):
    """The reshape family without its reference kernel: one copy between flat views made once
    (the other inputs, e.g. a shape tensor, only fixed the output shape at compile time)."""
    src, dst = step.inputs[0].reshape(-1), step.outputs[0].reshape(-1)

    def call(_step):
        np.copyto(dst, src)
    return call


def _reference_runner(step: Step, source: str):
    from ge import ops
    opdef = ops.get(step.type)
    if opdef is None or opdef.kernel is None:
        raise GeError(UNSUPPORTED_OP, {"what": f"op {step.name} ({step.type})", "reason":
                                       f"it has no compiled kernel in the model and "
                                       f"{'no reference kernel' if opdef else 'is not a known op'}"
                                       f" in ge.ops"})
    attrs = _resolved(opdef, step)
    kernel = opdef.kernel
    # float16 / bfloat16 slots compute in float32, rounded as compiled kernels do
    in_types = [t and t[1] for t in step.io[0]] if step.io else []
    out_types = [t and t[1] for t in step.io[1]] if step.io else []
    if any(is_low_precision(t) for t in in_types + out_types):
        kernel = functools.partial(call_lowprec, kernel, in_types=in_types, out_types=out_types)

    def call(_step):
        try:
            results = kernel(list(step.inputs), attrs)
        except GeError:
            raise
        except (ValueError, TypeError, IndexError, KeyError, ArithmeticError) as e:
            raise GeError(EXEC_FAILED, {"opname": step.name, "optype": step.type, "reason":
                                        f"reference kernel: {type(e).__name__}: {e}"}) from None
        _store(step, results)
    return call


def _store(step: Step, results) -> None:
    if len(results) < len(step.outputs):
        raise GeError(EXEC_FAILED, {"opname": step.name, "optype": step.type, "reason":
                                    f"it produced {len(results)} outputs; the model expects "
                                    f"{len(step.outputs)}"})
    for k, (view, value) in enumerate(zip(step.outputs, results)):
        value = np.asarray(value)
        if value.shape != view.shape:
            if value.size != view.size:
                raise GeError(EXEC_FAILED, {"opname": step.name, "optype": step.type, "reason":
                                            f"output {k} has shape {list(value.shape)}; the "
                                            f"model planned {list(view.shape)}"})
            value = value.reshape(view.shape)
        np.copyto(view, value, casting="unsafe")


class _Attrs:
    """What ge.ops.resolved_attrs reads of a node, over the OpDef proto's attributes."""

    def __init__(self, name: str, attrs: dict):
        self.name, self._attrs = name, attrs

    def has_attr(self, key):
        return key in self._attrs

    def attr(self, key, default=None):
        return self._attrs[key][1] if key in self._attrs else default

    def attr_items(self):
        return [(k, kind, v) for k, (kind, v) in self._attrs.items()]


def _resolved(opdef, step: Step) -> dict:
    from ge import ops
    plain = {k: v for k, v in step.attrs.items() if not k.startswith("__")}
    return ops.resolved_attrs(opdef, _Attrs(step.name, plain))


def _subgraph_runner(step: Step, model: Model):
    """If: run the chosen branch; PartitionedCall: run `f`.  Parent inputs reach the branch
    Data nodes by copy (`_parent_node_index`), branch outputs are copied into the parent's."""
    def run_branch(branch: GraphPlan, offset: int):
        feeds = []
        for spec, view, parent in branch.data:
            p = int(parent) if parent is not None else spec.index + offset
            if not 0 <= p < len(step.inputs) or step.inputs[p] is None:
                raise GeError(EXEC_FAILED, {"opname": step.name, "optype": step.type, "reason":
                                            f"subgraph {branch.name} reads parent input {p}, "
                                            f"which is not connected"})
            feeds.append(step.inputs[p])
        return _run_graph(branch, feeds, None)

    def run_case(index: int):
        """Case of a gear model: inputs and outputs are sized for the largest gear, the
        branch reads and writes their first bytes (ge.runtime._gears)."""
        branch = step.subgraphs.get(f"branches{index}")
        if branch is None:
            raise GeError(EXEC_FAILED, {"opname": step.name, "optype": step.type,
                                        "reason": f"branch index {index} has no subgraph"})
        feeds = []
        for spec, view, parent in branch.data:
            feeds.append(step.inputs[int(parent)].reshape(-1)[:view.size])
        for (spec, view, _), value in zip(branch.data, feeds):
            np.copyto(view, value.reshape(view.shape), casting="unsafe")
        seen = model._branch_seen
        for inner in branch.steps:
            inner.call(inner)
            if seen is not None:
                seen[inner.name] = [o.copy() for o in inner.outputs]
        for (spec, view, _), out in zip(branch.outputs, step.outputs):
            fill_prefix(out, view)

    def call(_step):
        if step.type == "Case":
            run_case(int(np.asarray(step.inputs[0]).reshape(-1)[0]))
            return
        if step.type == "If":
            cond = bool(np.asarray(step.inputs[0]).reshape(-1)[0])
            branch = step.subgraphs.get("then_branch" if cond else "else_branch")
            offset = 1
        else:
            branch, offset = step.subgraphs.get("f"), 0
        if branch is None:
            raise GeError(UNSUPPORTED_OP, {"what": f"op {step.name} ({step.type})",
                                           "reason": "it has no attached subgraph to run"})
        _store(step, run_branch(branch, offset))
    return call
