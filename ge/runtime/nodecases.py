"""The ONNX backend node test cases, compiled and run through this runtime.

Cases come from the installed onnx package: `onnx/backend/test/data/node/<case>/model.onnx`
plus `test_data_set_*/{input,output}_*.pb` when the wheel ships them, else the same cases
generated in-process by `onnx.backend.test.case.node.collect_testcases()` (the wheel without
the data folder).  Only ops our parser maps (`ge.parser.onnx.MAPPINGS`) are run; the
`_expanded` function-body variants are left out (they test other ops).

One case: freeze its shape-determining inputs (table `FREEZE_INPUTS`, option
`pyatc.freeze_inputs`, see ge.runtime.freeze) to the test's values, parse
(ge.parser.onnx.parse_onnx), compile (ge.compiler.api.build_graph), save_om to a temp file,
load with ge.runtime, run every data set and compare with the expected outputs using the
case's own rtol/atol.  `run_case` returns a `CaseResult`; nothing here prints.
"""
from __future__ import annotations

import glob
import os
import tempfile
import time
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from ge.errors import GeError
from ge.graph.lowprec import bf16_to_f32

__all__ = ["NodeCase", "CaseResult", "FREEZE_INPUTS", "mapped_op_types", "collect_cases",
           "run_case", "onnx_version"]

# ONNX op -> input positions whose values determine output shapes (or the compile-time
# structure), frozen to the test's values before parsing.
FREEZE_INPUTS: dict[str, tuple] = {
    "Reshape": (1,), "Expand": (1,), "Tile": (1,), "ConstantOfShape": (0,),
    "Slice": (1, 2, 3, 4), "Pad": (1, 2, 3), "TopK": (1,), "Resize": (1, 2, 3),
    "Upsample": (1,), "Squeeze": (1,), "Unsqueeze": (1,), "Split": (1,), "Range": (0, 1, 2),
    "ReduceSum": (1,), "ReduceMean": (1,), "ReduceMax": (1,), "ReduceMin": (1,),
    "ReduceProd": (1,), "ReduceL1": (1,), "ReduceL2": (1,), "ReduceLogSumExp": (1,),
    "ReduceSumSquare": (1,), "CumSum": (1,), "OneHot": (1,), "Dropout": (1, 2),
    "Clip": (), "ScatterND": (), "Einsum": (),
}


@dataclass
class NodeCase:
    name: str
    op_type: str
    opset: int
    model: object                  # onnx.ModelProto
    data_sets: list                # [(inputs list, outputs list)]
    rtol: float = 1e-3
    atol: float = 1e-7


@dataclass
class CaseResult:
    case: str
    op_type: str
    opset: int
    status: str                    # "pass" | "fail" | "error" | "n/a"
    reason: str = ""
    max_abs: float = 0.0
    seconds: float = 0.0
    engines: dict = field(default_factory=dict)


def onnx_version() -> str:
    import onnx
    return onnx.__version__


def mapped_op_types() -> set:
    from ge.parser.onnx import MAPPINGS
    return {m.op_type for m in MAPPINGS if m.domain in ("", "ai.onnx")}


def _opset(model) -> int:
    for imp in model.opset_import:
        if imp.domain in ("", "ai.onnx"):
            return int(imp.version)
    return 0


def _main_op(model) -> str:
    return model.graph.node[0].op_type if len(model.graph.node) == 1 else ""


def _from_data_dir(root: str) -> list:
    import onnx
    from onnx import numpy_helper
    cases = []
    for case_dir in sorted(glob.glob(os.path.join(root, "test_*"))):
        path = os.path.join(case_dir, "model.onnx")
        if not os.path.isfile(path):
            continue
        model = onnx.load(path)
        sets = []
        for ds in sorted(glob.glob(os.path.join(case_dir, "test_data_set_*"))):
            def read(kind):
                out = []
                for f in sorted(glob.glob(os.path.join(ds, f"{kind}_*.pb")),
                                key=lambda p: int(p.rsplit("_", 1)[1].split(".")[0])):
                    t = onnx.TensorProto()
                    with open(f, "rb") as fh:
                        t.ParseFromString(fh.read())
                    out.append(numpy_helper.to_array(t))
                return out
            sets.append((read("input"), read("output")))
        cases.append(NodeCase(os.path.basename(case_dir), _main_op(model), _opset(model),
                              model, sets))
    return cases


def _generated() -> list:
    import warnings
    from onnx.backend.test.case import node
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        raw = node.collect_testcases(None)
    cases = []
    for c in raw:
        if c.model is None:
            continue
        sets = [([_array(v) for v in i], [_array(v) for v in o]) for i, o in c.data_sets or ()]
        cases.append(NodeCase(c.name, _main_op(c.model), _opset(c.model), c.model, sets,
                              float(c.rtol), float(c.atol)))
    return cases


def _array(value):
    """Data set values are numpy arrays or (for exotic types) TensorProtos."""
    import onnx
    from onnx import numpy_helper
    if isinstance(value, onnx.TensorProto):
        return numpy_helper.to_array(value)
    return value


_CACHE: list = []


def collect_cases(op_types: Optional[set] = None, names: Optional[set] = None) -> list:
    """Node cases of the mapped ops (or of `op_types`), optionally only the named ones."""
    if not _CACHE:
        import onnx
        root = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "node")
        _CACHE.extend(_from_data_dir(root) if os.path.isdir(root) else _generated())
    wanted = mapped_op_types() if op_types is None else set(op_types)
    out = []
    for c in _CACHE:
        if c.name.endswith("_expanded") or "_expanded_" in c.name or not c.op_type:
            continue
        if c.op_type in wanted and (names is None or c.name in names):
            out.append(c)
    return out


def retarget_opset(model, lo: int = 8, hi: int = 18):
    """The case model at an ai.onnx opset our parser takes: onnx's version converter moves
    a newer (older) model to opset `hi` (`lo`); most cases only gained types since."""
    opset = _opset(model)
    if lo <= opset <= hi:
        return model
    import onnx
    from onnx import version_converter
    target = hi if opset > hi else lo
    try:
        return version_converter.convert_version(model, target)
    except Exception as e:  # the converter raises its own C++ assertion errors
        msg = " ".join(str(e).split()) or type(e).__name__
    if "unallowed" in msg or "not supported in Opset" in msg:
        raise NotApplicable(f"uses a data type that ai.onnx opset {target} lacks") from None
    # No adapter for a version step that only added types: the model is valid as it stands
    # at the target opset if the checker says so.
    moved = onnx.ModelProto()
    moved.CopyFrom(model)
    for imp in moved.opset_import:
        if imp.domain in ("", "ai.onnx"):
            imp.version = target
    try:
        onnx.checker.check_model(moved, full_check=True)
    except Exception:  # checker errors: the model really differs at the target opset
        raise NotApplicable(f"opset {opset} -> {target}: {msg[-100:]}") from None
    return moved


class NotApplicable(Exception):
    """The case cannot be expressed at an opset our parser takes (types added later)."""


def _freeze(case: NodeCase):
    from .freeze import freeze_inputs
    graph = case.model.graph
    inits = {i.name for i in graph.initializer}
    data_inputs = [i.name for i in graph.input if i.name not in inits]
    positions = FREEZE_INPUTS.get(case.op_type, ())
    node = graph.node[0]
    frozen_names = {node.input[p] for p in positions if p < len(node.input) and node.input[p]}
    frozen_names &= set(data_inputs)
    first = case.data_sets[0][0] if case.data_sets else []
    values = {n: first[data_inputs.index(n)] for n in frozen_names
              if data_inputs.index(n) < len(first)}
    model = freeze_inputs(case.model, values) if values else case.model
    model = retarget_opset(model)
    keep = [k for k, n in enumerate(data_inputs) if n not in values]
    return model, keep, values


def _short(e: BaseException) -> str:
    text = e.message if isinstance(e, GeError) else str(e)
    text = " ".join(text.split())
    code = f"{e.code} " if isinstance(e, GeError) else f"{type(e).__name__}: "
    return (code + text)[:200]


def compile_case_model(model, options: Optional[dict] = None, workdir: Optional[str] = None):
    """ModelProto -> loaded ge.runtime.Model through parse, build_graph and save_om.  The node
    tests hold float32 expectations: the float32 build unless `options` name a precision mode
    (CANN's default would be force_fp16, docs/precision.md)."""
    from ge.compiler.api import build_graph, save_om
    from ge.parser.onnx import parse_onnx
    from . import load
    options = dict(options or {})
    if not options.get("ge.exec.precision_mode_v2"):
        options.setdefault("ge.exec.precision_mode", "must_keep_origin_dtype")
    graph = parse_onnx(model, dict(options or {}))
    compiled = build_graph(graph, dict(options or {}))
    with tempfile.TemporaryDirectory(prefix="ge_nodecase_", dir=workdir) as tmp:
        path = os.path.join(tmp, "case.om")
        save_om(path, compiled, "")
        return load(path)


def run_case(case: NodeCase, options: Optional[dict] = None,
             diagnose: bool = False) -> CaseResult:
    """Compile and run one case.  With diagnose, a numeric failure is retried with every op
    on AiCpu (reference kernels) and the reason says whether that build passes."""
    result = _run_case(case, options)
    if diagnose and result.status == "fail" and "AiCore" in result.engines.values():
        cpu = _run_case(case, dict(options or {}, **{"ge.exec.exclude_engines": "AiCore"}))
        verdict = ("passes: a compiled kernel differs" if cpu.status == "pass"
                   else "fails too: reference kernel or graph")
        result.reason += f" [AiCpu-only build {verdict}]"
    return result


def _run_case(case: NodeCase, options: Optional[dict] = None) -> CaseResult:
    start = time.perf_counter()
    result = CaseResult(case.name, case.op_type, case.opset, "error")
    try:
        model, keep, frozen = _freeze(case)
        om = compile_case_model(model, options)
        result.engines = dict(om.engines)
        worst = 0.0
        for inputs, expected in case.data_sets:
            if any(not np.array_equal(inputs[k], v) for k, v in _frozen_positions(case, frozen)):
                continue  # another data set with other frozen values: not this OM's model
            feeds = [np.asarray(inputs[k]) for k in keep]
            outs = om.run(feeds)
            bad = _check(outs, expected, case.rtol, case.atol)
            worst = max(worst, bad[1])
            if bad[0]:
                result.status, result.reason, result.max_abs = "fail", bad[0], worst
                break
        else:
            result.status, result.max_abs = "pass", worst
        om.close()
    except NotApplicable as e:
        result.status, result.reason = "n/a", str(e)
    except GeError as e:
        result.reason = _short(e)
    except Exception as e:  # a harness must report every case, whatever broke
        result.reason = _short(e)
    result.seconds = time.perf_counter() - start
    return result


def _frozen_positions(case: NodeCase, frozen: dict) -> list:
    graph = case.model.graph
    inits = {i.name for i in graph.initializer}
    names = [i.name for i in graph.input if i.name not in inits]
    return [(names.index(n), v) for n, v in frozen.items()]


def _check(outs: list, expected: list, rtol: float, atol: float) -> tuple:
    if len(outs) < len(expected):
        return f"{len(outs)} outputs, expected {len(expected)}", float("inf")
    worst = 0.0
    for k, (got, want) in enumerate(zip(outs, expected)):
        want = np.asarray(want)
        if want.dtype.name == "bfloat16" and got.dtype == np.uint16:
            # onnx's expectation is an ml_dtypes array, ours the bit patterns (kernel-abi.md)
            got, want = bf16_to_f32(got), want.astype(np.float32)
        if got.shape != want.shape:
            return f"output {k} shape {list(got.shape)}, expected {list(want.shape)}", worst
        if got.dtype != want.dtype:
            return f"output {k} dtype {got.dtype}, expected {want.dtype}", worst
        if want.dtype.kind in "fc":
            if not np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True):
                err = np.abs(got.astype(np.float64) - want.astype(np.float64))
                m = float(np.nanmax(err)) if err.size else 0.0
                return f"output {k} max abs error {m:.3g} > rtol {rtol:g} atol {atol:g}", m
            if want.size:
                fin = np.isfinite(want) & np.isfinite(got)
                if fin.any():
                    worst = max(worst, float(np.abs(got[fin].astype(np.float64)
                                                    - want[fin].astype(np.float64)).max()))
        elif not np.array_equal(got, want):
            return f"output {k} differs (exact dtype {want.dtype})", worst
    return "", worst
