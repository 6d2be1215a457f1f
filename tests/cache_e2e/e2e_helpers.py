"""Helpers of the end-to-end cache tests: model files, a `pyatc` process runner, and checks of
cache directories and OM files from the outside (what a user could look at)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional

from _atc_run import AtcRun

REPO = Path(__file__).resolve().parents[2]
SOC = "Ascend310P3"
FAULT_ENVS = ("GE_TEST_FAULT", "GE_TEST_FAULT_FIFO")


class ModelFiles:
    """name -> ONNX path, each model built on first use (CI sizes, seeded, byte-identical)."""

    def __init__(self, directory: Path):
        self.dir = Path(directory)

    def _build(self, name: str):
        import e2e_models
        if name in ("tiny", "small"):
            return getattr(e2e_models, "tiny" if name == "tiny" else "small_conv")()
        if name == "small6":
            return e2e_models.small_conv(seed=11, channels=6)
        sys.path.insert(0, str(REPO))
        from bench.models import MODELS
        return MODELS[name]("ci")

    def __getitem__(self, name: str) -> Path:
        path = self.dir / f"{name}.onnx"
        if not path.exists():
            import onnx
            tmp = path.with_suffix(".tmp")
            onnx.save(self._build(name), str(tmp))
            os.replace(tmp, path)
        return path


@dataclass(frozen=True)
class Result(AtcRun):
    cwd: Path
    work: Path
    output: str

    @property
    def om(self) -> Path:
        return self.cwd / f"{self.output}.om"

    def ok(self) -> "Result":
        assert self.rc == 0, f"rc={self.rc}\n{self.text[-4000:]}"
        return self

    def report(self) -> dict:
        """compile_report.json of this run ($ASCEND_WORK_PATH/FE/<pid>/)."""
        found = sorted(self.work.glob("FE/*/compile_report.json"))
        assert len(found) == 1, (found, self.text[-2000:])
        return json.loads(found[0].read_text())


class Pyatc:
    """Runs the installed `pyatc` with a private HOME/TMPDIR/work/log under `tmp`.

    Models are linked into the working directory and named relatively, so two compiles with
    the same arguments in different directories have byte-identical argv (atc_cmdline)."""

    def __init__(self, argv0: List[str], base_env: Dict[str, str], tmp: Path, models):
        self.argv0 = list(argv0)
        self.tmp = Path(tmp)
        self.models = models
        env = dict(base_env)
        for name in ("ASCEND_CACHE_PATH", "ASCEND_WORK_PATH", "ASCEND_MAX_OP_CACHE_SIZE",
                     "ASCEND_REMAIN_CACHE_SIZE_RATIO", "ASCEND_SLOG_PRINT_TO_STDOUT") + FAULT_ENVS:
            env.pop(name, None)
        for name in ("home", "tmpdir", "log"):
            (self.tmp / name).mkdir(exist_ok=True)
        env.update(HOME=str(self.tmp / "home"), TMPDIR=str(self.tmp / "tmpdir"),
                   ASCEND_PROCESS_LOG_PATH=str(self.tmp / "log"), TE_PARALLEL_COMPILER="2")
        self.env = env
        self._runs = 0

    def argv(self, model: str, *flags: str, output: str = "net") -> List[str]:
        return self.argv0 + ["--framework=5", f"--model={model}.onnx", f"--output={output}",
                             f"--soc_version={SOC}", "--precision_mode=must_keep_origin_dtype", *flags]

    def _prepare(self, cwd: Path, model: str, env: Optional[dict]) -> tuple:
        cwd = Path(cwd)
        cwd.mkdir(parents=True, exist_ok=True)
        link = cwd / f"{model}.onnx"
        if not link.exists():
            link.symlink_to(self.models[model])
        self._runs += 1
        work = self.tmp / "work" / str(self._runs)
        run_env = dict(self.env, ASCEND_WORK_PATH=str(work), **(env or {}))
        return cwd, work, run_env

    def run(self, cwd, model: str, *flags: str, output: str = "net",
            env: Optional[dict] = None) -> Result:
        cwd, work, run_env = self._prepare(cwd, model, env)
        proc = subprocess.run(self.argv(model, *flags, output=output), cwd=cwd, env=run_env,
                              capture_output=True, text=True, timeout=600)
        return Result(proc.returncode, proc.stdout, proc.stderr, cwd, work, output)

    def start(self, cwd, model: str, *flags: str, output: str = "net",
              env: Optional[dict] = None, quiet: bool = False):
        """A running compile in its own session (so a test can kill its whole group);
        returns (Popen, Result factory)."""
        cwd, work, run_env = self._prepare(cwd, model, env)
        sink = subprocess.DEVNULL if quiet else subprocess.PIPE
        proc = subprocess.Popen(self.argv(model, *flags, output=output), cwd=cwd, env=run_env,
                                stdout=sink, stderr=sink, text=True, start_new_session=True)

        def finish(timeout: float = 600) -> Result:
            out, err = proc.communicate(timeout=timeout)
            return Result(proc.returncode, out or "", err or "", cwd, work, output)
        return proc, finish

    def cache_cli(self, *args: str) -> subprocess.CompletedProcess:
        """`python3 -m ge.compiler.cache ...` of the installed package."""
        return subprocess.run([sys.executable, "-m", "ge.compiler.cache", *args], env=self.env,
                              capture_output=True, text=True, timeout=120)


# ---- looking at a cache root -----------------------------------------------------------------

def soc_dir(root) -> Path:
    return Path(root) / "kernel_cache" / SOC


SUPPORT_PREFIX = "te_ge_support_"   # the entry of the object kernels link (docs/cache.md)
TEMPLATE_PREFIX = "te_ge_template_"  # entries of templates, which kernels are copies of


def all_entries(root) -> List[str]:
    d = soc_dir(root)
    if not d.is_dir():
        return []
    return sorted(p.name for p in d.iterdir() if p.is_dir() and not p.name.startswith("."))


def entries(root) -> List[str]:
    """The kernels' entries (not the support object's or the templates')."""
    return [n for n in all_entries(root) if not n.startswith((SUPPORT_PREFIX, TEMPLATE_PREFIX))]


def support_entries(root) -> List[str]:
    return [n for n in all_entries(root) if n.startswith(SUPPORT_PREFIX)]


def template_entries(root) -> List[str]:
    return [n for n in all_entries(root) if n.startswith(TEMPLATE_PREFIX)]


def temporaries(root) -> List[str]:
    d = soc_dir(root)
    return sorted(p.name for p in d.iterdir() if p.name.startswith(".")) if d.is_dir() else []


def om_temporaries(cwd, output: str = "net") -> List[str]:
    return sorted(p.name for p in Path(cwd).iterdir() if p.name.startswith(f".{output}.om."))


def assert_entries_sound(root) -> None:
    """Every entry under a final name is complete: exactly its binary and JSON, and the JSON's
    size and sha256 match the binary (the check a cache hit makes)."""
    from ge.compiler.cache.store import lookup
    for name in all_entries(root):
        files = sorted(os.listdir(soc_dir(root) / name))
        assert files == [f"{name}.json", f"{name}.so"], (name, files)
        found = lookup(str(soc_dir(root)), name, refresh=False)
        assert found.status == "hit", (name, found.reason)


def snapshot(root) -> dict:
    """relative path -> (size, mtime_ns, inode) of everything under `root`."""
    out = {}
    for dirpath, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            out[os.path.relpath(path, root)] = (st.st_size, st.st_mtime_ns, st.st_ino)
    return out


# ---- looking at OM files ---------------------------------------------------------------------

def om_parts(om_file) -> dict:
    """Every part of an OM (a path, or its bytes) except the `atc_cmdline` attribute (which
    records argv)."""
    from ge.om import parse_om, read_om
    om = parse_om(om_file) if isinstance(om_file, bytes) else read_om(str(om_file))
    model_def = type(om.model_def)()
    model_def.CopyFrom(om.model_def)
    del model_def.attr["atc_cmdline"]
    return {"model_def": model_def.SerializeToString(deterministic=True),
            "weights": om.weights, "kernels": om.kernels,
            "cust_aicpu_kernels": om.cust_aicpu_kernels, "inout": om.inout,
            "task_def": om.task_def.SerializeToString(deterministic=True)
            if om.task_def is not None else b""}


def engine_of_ops(json_path) -> Dict[str, tuple]:
    """op name -> (type, _lxfusion_engine_name) from a `--mode=1` JSON of an OM."""
    doc = json.loads(Path(json_path).read_text())
    out = {}
    for graph in doc["graph"]:
        for op in graph["op"]:
            attrs = {a["key"]: a["value"] for a in op.get("attr", [])}
            out[op["name"]] = (op["type"], attrs.get("_lxfusion_engine_name", {}).get("s"))
    return out
