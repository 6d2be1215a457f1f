"""Python passes end to end: the sample re-creations and probe plugins loaded through
ASCEND_GE_PY_PASS_PATH by the real `pyatc` process.

  MODELS     name -> (framework, writer): every input model of the cases, written once per
             session (ONNX from the samples' gen_onnx.py, AIR from their ge.es scripts)
  CASES      one row per pyatc compile: model, pass files, extra flags, extra environment
  e2e        session fixture: runs every case once (two at a time) and returns name -> Compile
             (rc, output, OM path, fusion_result.json records)
  mode1(om)  the mode-1 JSON of an OM (ATC main flow in this process) -> (op types, dict)

Kernels do not matter here (numbers come from the reference interpreter), so every compile
excludes the AiCore/AiVec engines through --raw_ge_options and shares one kernel cache dir.
"""
from __future__ import annotations

import contextlib
import glob
import importlib.util
import io
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

SAMPLES = REPO / "examples" / "fusion_pass"
PLUGINS = Path(__file__).resolve().parent / "plugins"
SOC = "Ascend310P3"
WORKERS = 2              # the machine has two shared cores
NO_KERNELS = {"compile options": {"graph": {"ge.exec.exclude_engines": "AiCore|AiVec"}}}


def load_script(path: Path):
    """Import a sample's model script (not a package) as a fresh module."""
    spec = importlib.util.spec_from_file_location(f"_e2e_{path.parent.name}_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- models ---------------------------------------------------------------------------------------
def _sample_onnx(directory: str, *args):
    return lambda out: onnx.save(load_script(SAMPLES / directory / "gen_onnx.py")
                                 .make_model(*args), str(out))


def _sample_air(directory: str, *args):
    return lambda out: (load_script(SAMPLES / directory / "es_gen_air.py")
                        .make_graph(*args).save_to_air(str(out)))


def _if_model(out: Path) -> None:
    """abs(If(c) then relu(x) else neg(x)): a root graph with two subgraphs."""
    branch = lambda op, name: helper.make_graph(  # noqa: E731
        [helper.make_node(op, ["x"], [name], name=f"{name}_{op.lower()}")], f"{name}_branch",
        [], [helper.make_tensor_value_info(name, TensorProto.FLOAT, [2, 2])])
    nodes = [helper.make_node("If", ["c"], ["r"], name="if", then_branch=branch("Relu", "then"),
                              else_branch=branch("Neg", "else")),
             helper.make_node("Abs", ["r"], ["out"], name="abs")]
    graph = helper.make_graph(
        nodes, "with_if", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2]),
                           helper.make_tensor_value_info("c", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [2, 2])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(out))


def _bias_model(out: Path) -> None:
    """matmul(x, W) + b with constant W [3,2] and bias vector b [2]: built-in bias fusion bait."""
    rng = np.random.default_rng(0)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["mm"], name="matmul"),
             helper.make_node("Add", ["mm", "b"], ["out"], name="add")]
    graph = helper.make_graph(
        nodes, "matmul_bias", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [2, 2])],
        initializer=[numpy_helper.from_array(rng.standard_normal((3, 2)).astype(np.float32), "w"),
                     numpy_helper.from_array(rng.standard_normal(2).astype(np.float32), "b")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(out))


S1, S2, S3 = ("1_fuse_matmul_add_pass", "2_fuse_matmul_add_pass_with_capture_tensor",
              "3_fuse_matmul_add_pass_with_pattern_matcher_config")
S4, S6 = "4_add_zero_pass", "6_decompose_grouped_conv_to_splited_pass"
G2, G3 = "g2_move_relu_before_concat_pass", "g3_modify_conv_data_format_pass"

# name -> (framework, writer(path)); framework 5 = ONNX, 1 = AIR
MODELS: Dict[str, Tuple[int, Callable]] = {
    "matmul_add": (5, _sample_onnx(S1)),
    "matmul_add_es_fp32": (1, _sample_air(S2, "float32")),
    "matmul_add_es_fp16": (1, _sample_air(S2, "float16")),
    "matmul_const": (1, _sample_air(S3, "match")),
    "matmul_const_transpose": (1, _sample_air(S3, "transpose")),
    "matmul_const_other": (1, _sample_air(S3, "const")),
    "add_zero": (5, _sample_onnx(S4, 0.0)),
    "add_one": (5, _sample_onnx(S4, 1.0)),
    "grouped_conv": (5, _sample_onnx(S6, 3)),
    "concat_relu": (1, _sample_air(G2, "Relu")),
    "conv_transpose": (5, _sample_onnx(G3)),
    "with_if": (5, _if_model),
    "matmul_bias": (5, _bias_model),
}


def model_file(root: Path, name: str) -> Path:
    return root / f"{name}.{'onnx' if MODELS[name][0] == 5 else 'air'}"


# -- compiles -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Case:
    model: str
    passes: Tuple[str, ...]                  # paths under examples/fusion_pass or plugins/
    args: Tuple[str, ...] = ()
    env: Tuple[Tuple[str, str], ...] = ()


P1 = f"{S1}/python_fuse_matmul_add_pass.py"
P2 = f"{S2}/python_fuse_matmul_add_pass.py"
P3 = f"{S3}/python_fuse_matmul_add_pass.py"
P4 = f"{S4}/python_add_zero_pass.py"
P4C = f"{S4}/python_add_zero_pass_const_value_match.py"
P6 = f"{S6}/python_decompose_pass.py"
PG2 = f"{G2}/python_move_relu_before_concat_pass.py"
PG3 = f"{G3}/python_modify_conv_data_format_pass.py"
TRACE = (("GE_PASS_MATCH_TRACE", "1"),)
SWITCH_JSON = json.dumps({"Switch": {"GraphFusion": {"PythonMatmulAddFusionPass": "off"}}})
SWITCH_LINES = "PythonAddZeroConstValueMatchPass:off\n"


def _off(name: str) -> str:
    return f"--optimization_switch={name}:off"


CASES: Dict[str, Case] = {
    # each sample on its model
    "s1": Case("matmul_add", (P1,)),
    "s2": Case("matmul_add", (P2,)),
    "s2_es": Case("matmul_add_es_fp32", (P2,)),
    "s3": Case("matmul_const", (P3,)),
    "s4": Case("add_zero", (P4,)),
    "s4c": Case("add_zero", (P4C,)),
    "s6": Case("grouped_conv", (P6,)),
    "g2": Case("concat_relu", (PG2,)),
    "g3": Case("conv_transpose", (PG3,), env=(("DUMP_GE_GRAPH", "2"),
                                              ("DUMP_GRAPH_LEVEL", "2"))),
    # the negative variants of spec §7 (traced: the report says why)
    "s2_fp16": Case("matmul_add_es_fp16", (P2,), env=TRACE),
    "s3_transpose": Case("matmul_const_transpose", (P3,), env=TRACE),
    "s3_const": Case("matmul_const_other", (P3,), env=TRACE),
    "s4_nonzero": Case("add_one", (P4,)),
    # each sample switched off (s1 also: a built-in pass off, an unknown name)
    "s1_off": Case("matmul_add", (P1,), (
        "--optimization_switch=PythonFuseMatMulAndAddPass:off;ConvBatchNormFusionPass:off;"
        "PythonFuseMatMulAndAdPass:on",)),
    "s2_off": Case("matmul_add", (P2,), (_off("PythonFuseMatMulAndAddCaptureTensorPass"),)),
    "s3_off": Case("matmul_const", (P3,), ("--fusion_switch_file=@switch.json",)),
    "s4_off": Case("add_zero", (P4,), (_off("PythonAddZeroPass"),)),
    "s4c_off": Case("add_zero", (P4C,), ("--fusion_switch_file=@switch.cfg",)),
    "s6_off": Case("grouped_conv", (P6,), (_off("PythonDecomposeGroupedConvToSplitedPass"),)),
    "g2_off": Case("concat_relu", (PG2,), (_off("PythonMoveReluBeforeConcatPass"),)),
    "g3_off": Case("conv_transpose", (PG3,), (_off("PythonConvTransFormatPass"),)),
    # failures
    "raises": Case("matmul_add", ("@errors/raises.py",)),
    "status": Case("matmul_add", ("@errors/status.py",)),
    "wrong_type": Case("matmul_add", ("@errors/wrong_type.py",)),
    "broken_import": Case("matmul_add", ("@errors/broken_import.py",)),
    # hostile passes (issue #19): exits, non-Exception raises, graphs broken by a pass
    "exits": Case("matmul_add", ("@errors/exits.py",)),
    "base_exception": Case("matmul_add", ("@errors/base_exception.py",)),
    "generator_exit": Case("matmul_add", ("@errors/generator_exit.py",)),
    "drops_output": Case("matmul_add", ("@errors/drops_output.py",)),
    "unconnects": Case("matmul_add", ("@errors/unconnects.py",)),
    # passes that never return: the time limit (2 s here) fails them naming the pass
    "sleeps": Case("matmul_add", ("@hangs/sleeps.py",),
                   env=(("ASCEND_GE_PY_PASS_TIMEOUT", "2"),)),
    "spins": Case("matmul_add", ("@hangs/spins.py",),
                  env=(("ASCEND_GE_PY_PASS_TIMEOUT", "2"),)),
    # scheduling and built-in interference
    "schedule": Case("with_if", ("@schedule",)),
    "late": Case("matmul_bias", ("@late/late_matmul_add.py",)),
    "late_builtin_off": Case("matmul_bias", ("@late/late_matmul_add.py",),
                             (_off("MatMulBiasAddFusionPass"),)),
}


@dataclass(frozen=True)
class Compile:
    name: str
    rc: int
    stdout: str
    stderr: str
    work: Path
    om: Optional[Path]
    records: Optional[list]            # fusion_result.json, None when not written

    @property
    def text(self) -> str:
        return self.stdout + self.stderr

    def graph_fusion(self, graph_name: Optional[str] = None) -> dict:
        assert self.records, f"{self.name}: no fusion_result.json\n{self.text}"
        for record in self.records:
            if graph_name in (None, record["graph_name"]):
                return record["graph_fusion"]
        raise KeyError(graph_name)


def _pass_path(entry: str) -> str:
    return str(PLUGINS / entry[1:]) if entry.startswith("@") else str(SAMPLES / entry)


def _run_case(name: str, case: Case, models: Path, root: Path, argv: List[str],
              base_env: Dict[str, str], cache: Path) -> Compile:
    work = root / name
    work.mkdir()
    (work / "switch.json").write_text(SWITCH_JSON)
    (work / "switch.cfg").write_text(SWITCH_LINES)
    (work / "raw.json").write_text(json.dumps(NO_KERNELS))
    env = dict(base_env, ASCEND_WORK_PATH=str(work), ASCEND_PROCESS_LOG_PATH=str(work / "log"),
               ASCEND_GE_PY_PASS_PATH=os.pathsep.join(_pass_path(p) for p in case.passes),
               DUMP_GRAPH_PATH=str(work / "dump"))
    env.update(case.env)
    framework = MODELS[case.model][0]
    args = [f"--framework={framework}", f"--model={model_file(models, case.model)}",
            f"--output={work / name}", f"--soc_version={SOC}", "--precision_mode=must_keep_origin_dtype",
            f"--raw_ge_options={work / 'raw.json'}", f"--op_compiler_cache_dir={cache}"]
    args += [a.replace("@", str(work) + os.sep) for a in case.args]
    done = subprocess.run(argv + args, cwd=work, env=env, capture_output=True, timeout=300)
    found = sorted(glob.glob(str(work / "FE" / "*" / "fusion_result.json")))
    records = json.loads(Path(found[0]).read_text()) if found else None
    om = work / f"{name}.om"
    return Compile(name, done.returncode, done.stdout.decode("utf-8", "replace"),
                   done.stderr.decode("utf-8", "replace"), work, om if om.exists() else None,
                   records)


@pytest.fixture(scope="session")
def e2e_models(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("e2e_models")
    for name, (_, write) in MODELS.items():
        write(model_file(root, name))
    return root


@pytest.fixture(scope="session")
def e2e(entry_argv, entry_env, e2e_models, shared_kernel_cache,
        tmp_path_factory) -> Dict[str, Compile]:
    """Every case of CASES compiled once by the installed `pyatc`, two at a time."""
    root = tmp_path_factory.mktemp("e2e_runs")
    cache = shared_kernel_cache
    base = {k: v for k, v in entry_env.items()
            if not k.startswith(("ASCEND_", "DUMP_", "GE_PASS_"))}
    argv = entry_argv("pyatc")
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        futures = {name: pool.submit(_run_case, name, case, e2e_models, root, argv, base, cache)
                   for name, case in CASES.items()}
        return {name: future.result() for name, future in futures.items()}


_MODE1: Dict[Path, tuple] = {}


def mode1(om: Path) -> Tuple[List[str], dict]:
    """(sorted op types of the root graph, whole JSON) from `--mode=1`, run through the ATC
    main flow in this process (the same flow the entries call; saves a process per OM)."""
    if om not in _MODE1:
        from ge.atc.main import main_impl
        out = om.with_suffix(".mode1.json")
        with contextlib.redirect_stdout(io.StringIO()) as text:
            rc = main_impl(["pyatc", "--mode=1", f"--om={om}", f"--json={out}"])
        assert rc == 0, text.getvalue()
        document = json.loads(out.read_text())
        _MODE1[om] = (sorted(op["type"] for op in document["graph"][0]["op"]), document)
    return _MODE1[om]
