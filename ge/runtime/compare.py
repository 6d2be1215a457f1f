"""Numerical comparison of an OM (this runtime) with its ONNX model (onnxruntime).

    python3 -m ge.runtime.compare --onnx m.onnx --om m.om [--input a.npy,...] \\
        [--rtol 1e-4 --atol 1e-5] [--seed 0] [--freeze_inputs "k=k.npy"] [--dump]
    python3 -m ge.runtime.compare --tf m.pb --om m.om [--out_nodes n:0] [--dump]
      (a frozen TensorFlow graph run by TensorFlow: ge.runtime.compare_tf)
    python3 -m ge.runtime.compare --caffe m.prototxt --weight m.caffemodel --om m.om [--dump]

The Caffe reference is OpenCV's DNN module (ge.runtime.compare_caffe).

Library: `compare_model(onnx_model, om_model, inputs, rtol, atol, dump)` returns a
`Comparison` (per output and, with dump, per node `TensorDiff` records); the caller decides
what to print.  A value is within tolerance when |ours - ref| <= atol + rtol * max|ref|
(the largest magnitude in that tensor: accumulation-order rounding scales with the tensor)
everywhere (NaN equal to NaN).

--dump maps our ops to ONNX tensors through `_datadump_original_op_names`: an op stands for
the latest (in ONNX node order) of the ONNX nodes it names; when several of our ops stand for
the same ONNX node, the last one in our execution order carries its value.  onnxruntime is
run with every intermediate tensor exposed as a graph output.  The first compared op (in our
execution order) outside tolerance is the divergence point.
"""
from __future__ import annotations

import dataclasses

import sys
from dataclasses import dataclass, field, replace
from typing import Optional

import numpy as np

from ge.errors import GeError

from ._aipp import aipp_links, mismatch_stage, reference_features
from ._errors import BAD_INPUT, INVALID_OM

__all__ = ["TensorDiff", "Comparison", "diff", "random_inputs", "prepare_run", "compare_model",
           "run_onnxruntime", "main"]


@dataclass(frozen=True)
class TensorDiff:
    name: str                      # our output name / our op name
    reference: str                 # the ONNX tensor compared with
    shape: tuple
    max_abs: float
    max_rel: float
    ok: bool
    first_bad: Optional[tuple] = None   # index of the first element outside tolerance
    op_type: str = ""
    dtype: str = ""                # the dtype the tensor was effectively computed in
    precision_list: str = ""       # the op's mixed-precision list (white / black / gray)
    hint: str = ""                 # the --keep_dtype line that pins the op


@dataclass
class Comparison:
    outputs: list = field(default_factory=list)      # [TensorDiff]
    nodes: list = field(default_factory=list)        # [TensorDiff], with dump
    unmapped: list = field(default_factory=list)     # our ops without an ONNX counterpart
    aipp: list = field(default_factory=list)         # [TensorDiff] Aipp op vs numpy reference

    @property
    def ok(self) -> bool:
        return all(d.ok for d in self.outputs) and all(d.ok for d in self.aipp)

    @property
    def first_divergence(self) -> Optional[TensorDiff]:
        return next((d for d in self.nodes if not d.ok), None)


def diff(name: str, reference: str, ours: np.ndarray, ref: np.ndarray, rtol: float,
         atol: float, op_type: str = "") -> TensorDiff:
    ours, ref = np.asarray(ours), np.asarray(ref)
    if ours.shape != ref.shape:
        if ours.size != ref.size:
            return TensorDiff(name, reference, tuple(ours.shape), float("inf"), float("inf"),
                              False, None, op_type)
        ours = ours.reshape(ref.shape)
    if ref.dtype == np.bool_ or ours.dtype == np.bool_ or ref.dtype.kind in "OSU":
        bad = ours != ref
        max_abs = float(bad.sum() > 0)
        max_rel = max_abs
    else:
        a = ours.astype(np.float64)
        b = ref.astype(np.float64)
        both_nan = np.isnan(a) & np.isnan(b)
        same_inf = np.isinf(a) & np.isinf(b) & (np.sign(a) == np.sign(b))
        err = np.where(both_nan | same_inf, 0.0, np.abs(a - b))
        err = np.where(np.isnan(err), np.inf, err)
        finite = np.abs(np.where(np.isfinite(b), b, 0.0))
        # relative to the tensor's magnitude: an element near zero in a tensor of large
        # values carries the rounding error of the large ones (accumulation order differs)
        scale = float(finite.max()) if finite.size else 0.0
        bad = err > atol + rtol * np.maximum(finite, scale)
        max_abs = float(err.max()) if err.size else 0.0
        # relative error |a - b| / max(|ref|, atol): a reference of zero (or below the
        # absolute tolerance) does not turn a tiny difference into an astronomic ratio
        floor = max(float(atol), np.finfo(np.float64).tiny)
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            rel = err / np.maximum(np.abs(b), floor)
        max_rel = float(np.where(err == 0, 0.0, rel).max()) if err.size else 0.0
    first = None
    if bad.any():
        first = tuple(int(i) for i in np.unravel_index(int(np.argmax(bad)), bad.shape))
    return TensorDiff(name, reference, tuple(ref.shape), max_abs, max_rel, not bad.any(),
                      first, op_type)


def random_inputs(specs, seed: int = 0) -> list:
    """Seeded inputs: floats N(0, 1); integers in [0, 2) (valid ids, masks and indices for
    every model we test); booleans fair coins."""
    rng = np.random.default_rng(seed)
    out = []
    for spec in specs:
        dtype = np.dtype(spec.dtype)
        if dtype.kind == "f":
            out.append(rng.standard_normal(spec.shape).astype(dtype))
        elif dtype.kind in "iu":
            out.append(rng.integers(0, 2, spec.shape).astype(dtype))
        elif dtype.kind == "b":
            out.append(rng.integers(0, 2, spec.shape).astype(bool))
        else:
            raise GeError(BAD_INPUT, {"reason": f"cannot make a random value for input "
                                                f"{spec.name} of dtype {dtype}; give it with "
                                                f"--input"})
    return out


def prepare_run(om_model, inputs, seed: int) -> tuple:
    """What every reference comparison starts from: the loaded model (`om_model` a path or a
    ge.runtime.Model), its inputs (None = seeded random) and the reference's feeds by input
    name."""
    from . import Model, load
    model = om_model if isinstance(om_model, Model) else load(om_model)
    if inputs is None:
        specs = model.inputs
        if model.gears is not None:         # a model with gears: its first gear's shapes
            first = model.gear_shapes(0)
            specs = [dataclasses.replace(s, shape=tuple(first.get(s.name, s.shape)))
                     for s in specs]
        inputs = random_inputs(specs, seed)
    return model, inputs, {spec.name: value for spec, value in zip(model.inputs, inputs)}


def _load_onnx(model):
    import onnx
    if isinstance(model, onnx.ModelProto):
        return model
    try:
        return onnx.load(model)
    except Exception as e:  # onnx raises DecodeError / OSError / ValueError
        raise GeError(INVALID_OM, {"file": str(model), "reason": str(e)}) from None


def _expose_all(model):
    """A copy of `model` whose graph outputs are every node output (typed where known)."""
    import onnx
    from onnx import shape_inference
    try:
        inferred = shape_inference.infer_shapes(model)
    except Exception:  # inference is only a help for typing the extra outputs
        inferred = model
    out = onnx.ModelProto()
    out.CopyFrom(inferred)
    typed = {v.name: v for v in list(out.graph.value_info) + list(out.graph.input)}
    have = {o.name for o in out.graph.output}
    for node in out.graph.node:
        for name in node.output:
            if name and name not in have:
                have.add(name)
                vi = onnx.ValueInfoProto()
                if name in typed:
                    vi.CopyFrom(typed[name])
                else:
                    vi.name = name
                out.graph.output.append(vi)
    return out


def run_onnxruntime(model, feeds: dict, all_tensors: bool = False) -> dict:
    """{tensor name: array} of the graph outputs (every node output with all_tensors)."""
    import onnxruntime as ort
    if all_tensors:
        model = _expose_all(model)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    if all_tensors:
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    from ._custom_ref import custom_nodes, run_node_by_node
    if custom_nodes(model):         # ops of custom operator packages: their numpy reference
        values = run_node_by_node(model, feeds, so)
        names = [o.name for o in model.graph.output] if not all_tensors else list(values)
        return {n: values[n] for n in names if n in values}
    sess = ort.InferenceSession(model.SerializeToString(), so,
                                providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    wanted = {i.name for i in sess.get_inputs()}
    values = sess.run(names, {k: v for k, v in feeds.items() if k in wanted})
    return dict(zip(names, values))


def compare_model(onnx_model, om_model, inputs=None, *, rtol: Optional[float] = None,
                  atol: Optional[float] = None, seed: int = 0, dump: bool = False,
                  frozen: Optional[dict] = None) -> Comparison:
    """`onnx_model`: path or ModelProto; `om_model`: path or loaded ge.runtime.Model;
    `inputs`: arrays in OM input order (None = seeded random); `frozen`: values of ONNX
    inputs that the OM has as constants (pyatc.freeze_inputs).  `rtol`/`atol` left None take
    the fixed tolerance of the dtype each tensor was computed in (ge.runtime._precision)."""
    from ._precision import effective_dtypes, tolerance_for
    model, inputs, feeds = prepare_run(om_model, inputs, seed)
    step_dtypes, out_dtypes = effective_dtypes(model)
    proto = _load_onnx(onnx_model)
    feeds.update(frozen or {})
    onnx_outputs = [o.name for o in proto.graph.output]
    links = aipp_links(model)
    # an AIPP input takes a raw image: the original model gets the numpy pre-processing of it
    references = {link.step.name: reference_features(link, list(inputs)) for link in links}
    for link in links:
        feeds[link.data_name] = references[link.step.name]
    if dump or links:
        ours, seen = model.run(inputs, capture=True)
    else:
        ours, seen = model.run(inputs), None
    ref = run_onnxruntime(proto, feeds, all_tensors=dump)
    result = Comparison()
    for k, value in enumerate(ours):
        ref_name = onnx_outputs[k] if k < len(onnx_outputs) else ""
        if ref_name not in ref:
            raise GeError(BAD_INPUT, {"reason": f"output {k} of the OM has no ONNX counterpart "
                                                f"(the ONNX model has {len(onnx_outputs)} "
                                                f"outputs)"})
        dtype = out_dtypes[k] if k < len(out_dtypes) else "float32"
        result.outputs.append(replace(diff(model.outputs[k].name, ref_name, value,
                                           ref[ref_name], *tolerance_for(dtype, rtol, atol)),
                                      dtype=dtype))
    for link in links:
        mine, expected = seen[link.step.name][0], references[link.step.name]
        d = diff(link.step.name, "numpy AIPP reference", mine, expected,
                 *tolerance_for("float32", rtol, atol), "Aipp")
        if not d.ok:
            stage = mismatch_stage(link, mine, expected, d.first_bad)
            d = replace(d, reference=f"numpy AIPP reference, stage {stage}")
        result.aipp.append(d)
    if dump:
        _compare_nodes(result, model, proto, seen, ref, rtol, atol, step_dtypes)
    return result


def _compare_nodes(result: Comparison, model, proto, seen: dict, ref: dict, rtol, atol,
                   step_dtypes: Optional[dict] = None):
    from ._precision import keep_dtype_hint, op_precision, tolerance_for
    position = {}
    outputs_of = {}
    for i, node in enumerate(proto.graph.node):
        key = node.name or f"{node.op_type}_{i}"
        position[key] = i
        outputs_of[key] = list(node.output)
    # the root's ops, and those of the branch a gear model ran (the captures name them)
    steps = list(model._plan.root.steps) + [
        s for g in model._plan.graphs.values() if g is not model._plan.root
        for s in g.steps if s.name in seen]
    target = {}
    for step in steps:
        known = [o for o in step.origin if o in position]
        if not known:
            result.unmapped.append(step.name)
            continue
        target[max(known, key=position.get)] = step   # the last of ours wins
    chosen = {id(s): onnx_name for onnx_name, s in target.items()}
    for step in steps:
        onnx_name = chosen.get(id(step))
        if onnx_name is None or step.name not in seen:
            continue
        for k, value in enumerate(seen[step.name][:1] if len(outputs_of[onnx_name]) == 1
                                  else seen[step.name]):
            names = outputs_of[onnx_name]
            if k >= len(names) or names[k] not in ref:
                continue
            dtype = (step_dtypes or {}).get(step.name, "float32")
            d = diff(step.name, names[k], value, ref[names[k]],
                     *tolerance_for(dtype, rtol, atol), step.type)
            result.nodes.append(replace(d, dtype=dtype,
                                        precision_list=op_precision(step).get("list", ""),
                                        hint=keep_dtype_hint(step, onnx_name)))


def format_report(result: Comparison, rtol: Optional[float], atol: Optional[float],
                  reference: str = "onnxruntime", tensor: str = "ONNX tensor") -> str:
    """`reference` names the reference runtime, `tensor` what our ops are compared with;
    rtol/atol None: the per-dtype table was used."""
    from ._precision import TOLERANCES
    if rtol is None and atol is None:
        table = ", ".join(f"{k} {t.atol:g} + {t.rtol:g}" for k, t in TOLERANCES.items())
        lines = [f"tolerance: |ours - {reference}| <= atol + rtol * max|{reference}| (per "
                 f"tensor, by the dtype it was computed in: {table})"]
    else:
        from ._precision import tolerance_for
        r, a = tolerance_for("float32", rtol, atol)
        lines = [f"tolerance: |ours - {reference}| <= {a:g} + {r:g} * max|{reference}| "
                 "(per tensor)"]
    lines.append(f"{'output':<40} {'shape':<20} {'max abs err':>12} {'max rel err':>12}  "
                 f"{'dtype':<8} result")
    for d in result.outputs:
        lines.append(f"{d.name[:40]:<40} {str(list(d.shape)):<20} {d.max_abs:>12.4g} "
                     f"{d.max_rel:>12.4g}  {d.dtype or 'float32':<8} "
                     f"{'ok' if d.ok else 'MISMATCH'}")
    for d in result.aipp:
        lines.append(f"AIPP {d.name} vs {d.reference}: max abs {d.max_abs:.4g}, "
                     f"{'ok' if d.ok else f'MISMATCH at {d.first_bad}'}")
    if result.nodes:
        bad = result.first_divergence
        lines.append(f"node comparison: {len(result.nodes)} ops compared, "
                     f"{sum(not d.ok for d in result.nodes)} outside tolerance, "
                     f"{len(result.unmapped)} without an {tensor}")
        if bad is None:
            lines.append("no divergence")
        else:
            lines.append(f"first divergence: op {bad.name} ({bad.op_type}) vs {tensor} "
                         f"{bad.reference}: max abs {bad.max_abs:.4g}, max rel "
                         f"{bad.max_rel:.4g}, first bad index {bad.first_bad}")
            if bad.dtype and bad.dtype != "float32":
                member = f", {bad.precision_list} list" if bad.precision_list else ""
                lines.append(f"  computed in {bad.dtype}{member}; to keep it in its original "
                             f"dtype put this line in a --keep_dtype file: {bad.hint}")
    lines.append("result: " + ("PASS" if result.ok else "FAIL"))
    return "\n".join(lines)


def main(argv: list) -> int:
    from ._args import Opt, help_text, parse
    from ._cli import EXIT_FAIL, EXIT_OK
    from ge.stdio import write_product
    table = (
        Opt("onnx", "the ONNX model (or --caffe, --tf)"),
        Opt("caffe", "the Caffe network (.prototxt), with --weight; reference: OpenCV DNN"),
        Opt("weight", "the Caffe weights (.caffemodel)"),
        Opt("op_name_map", "the --op_name_map file the Caffe OM was compiled with", ""),
        Opt("tf", "the frozen TensorFlow graph (.pb / .pbtxt), run by TensorFlow"),
        Opt("out_nodes", "with --tf: the compared TF outputs, node:index;... (default: sinks)"),
        Opt("om", "the OM compiled from it", required=True),
        Opt("input", "comma-separated input files in OM input order (.npy or raw .bin); "
                     "default: seeded random values"),
        Opt("rtol", "relative tolerance (default: by dtype, docs/runtime.md)", None, float),
        Opt("atol", "absolute tolerance (default: by dtype, docs/runtime.md)", None, float),
        Opt("seed", "seed of the random inputs", 0, int),
        Opt("freeze_inputs", "name=path;... values of ONNX inputs frozen at compile time"),
        Opt("dump", "compare every intermediate tensor and report the first divergence",
            False, bool),
        Opt("precision_report", "print, per op type, how many ops run in which dtype",
            False, bool),
        Opt("help", "print this text", False, bool),
    )
    if "--help" in argv or "-h" in argv:
        write_product("stdout", help_text("python3 -m ge.runtime.compare",
                                          __doc__.strip().splitlines()[0], table) + "\n")
        return EXIT_OK
    args = parse(argv, table)
    from . import load
    from ._io import read_inputs
    from .freeze import parse_freeze_option
    model = load(args["om"])
    files = [f for f in (args["input"] or "").split(",") if f]
    inputs = read_inputs(files, model.inputs) if files else None
    common = dict(rtol=args["rtol"], atol=args["atol"], seed=args["seed"], dump=args["dump"])
    if args["precision_report"]:
        from ._precision import format_dtype_report
        write_product("stdout", format_dtype_report(model) + "\n")
        if not (args["onnx"] or args["tf"] or args["caffe"]):
            return EXIT_OK
    if args["tf"] or args["caffe"]:     # their references compare at float32 tolerances
        from ._precision import tolerance_for
        common["rtol"], common["atol"] = tolerance_for("float32", args["rtol"], args["atol"])
    if args["tf"]:
        from .compare_tf import compare_tf_model
        result = compare_tf_model(args["tf"], model, inputs, out_nodes=args["out_nodes"] or "",
                                  **common)
        labels = dict(reference="tensorflow", tensor="equivalent TF tensor")
    elif args["caffe"]:
        from .compare_caffe import compare_caffe
        if not args["weight"]:
            raise GeError("E10004", {"parameter": "weight"})
        result = compare_caffe(args["caffe"], args["weight"], model, inputs,
                               op_name_map=args["op_name_map"], **common)
        labels = dict(reference="OpenCV", tensor="equivalent Caffe layer")
    else:
        if not args["onnx"]:
            raise GeError("E10004", {"parameter": "onnx"})
        result = compare_model(args["onnx"], model, inputs,
                               frozen=parse_freeze_option(args["freeze_inputs"]), **common)
        labels = {}
    write_product("stdout", format_report(result, args["rtol"], args["atol"], **labels) + "\n")
    return EXIT_OK if result.ok else EXIT_FAIL


if __name__ == "__main__":
    from ._cli import guarded
    sys.exit(guarded(main, sys.argv[1:]))
