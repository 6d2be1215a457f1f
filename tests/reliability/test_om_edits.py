"""Edited OMs (issue #19 item 2): a ModelDef changed after compilation while every kernel hash
stays valid, and the file checksum recomputed (as an attacker or a buggy tool can), must end in
a coded error naming the op, never in SIGSEGV/SIGABRT of `python3 -m ge.runtime`.  The
checksum would refuse most of these edits first (test_om_integrity.py); resealing them
exercises the runtime's plan validation itself (ge.runtime._validate, docs/runtime.md)."""
from __future__ import annotations

import random
import subprocess
import sys
import textwrap

import pytest

from ge.graph import DataType
from ge.graph.serialize import to_proto_dtype
from ge.graph.attr_names import ATTR_KERNEL_NAME_FOR_LOAD, ATTR_KERNEL_SHA256
from ge.om import OmContent, read_om, write_om
from ge.om.plan import KERNEL_TYPE_TE

MODEL = "mobilenetv2_ci"
TIMEOUT = 120


@pytest.fixture(scope="module")
def om_path(compiled_model):
    return str(compiled_model(MODEL).om)


def _rewrite(src: str, dst, edit) -> str:
    """`src` with edit(model_def) applied, weights, tasks and kernels kept; write_om seals it
    with a fresh checksum."""
    om = read_om(src)
    edit(om.model_def)
    write_om(str(dst), OmContent(model_def=om.model_def, weights=om.weights,
                                 task_def=om.task_def, kernels=list(om.kernels),
                                 memory_size=om.model_attr("memory_size")))
    return str(dst)


def _compiled_ops(model_def) -> list:
    """Ops that run a compiled kernel, in execution order."""
    return [op for op in sorted(model_def.graph[0].op, key=lambda o: o.id)
            if "_kernelname" in op.attr]


def _conv_with_workspace(model_def):
    return next(op for op in _compiled_ops(model_def) if op.type == "Conv2D" and
                any(b > 0 for b in op.workspace_bytes))


def _run(path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ge.runtime", "--model", path],
                          capture_output=True, text=True, timeout=TIMEOUT)


# -- the edits: (what it does to the ModelDef, code expected, the op it must name) ------------
def _drop_workspace(md):
    op = _conv_with_workspace(md)
    del op.workspace[:], op.workspace_bytes[:]
    return op.name


def _shrink_workspace(md):
    op = _conv_with_workspace(md)
    op.workspace_bytes[0] = 1
    return op.name


def _smaller_input_shape(md):
    op = _conv_with_workspace(md)
    dims = op.input_desc[0].shape.dim
    dims[2] = max(1, dims[2] // 2)
    return op.name


def _other_output_dtype(md):
    op = _compiled_ops(md)[0]
    op.output_desc[0].dtype = to_proto_dtype(DataType.DT_FLOAT16)    # half the bytes
    return op.name


def _unconnected_input(md):
    op = _conv_with_workspace(md)
    op.input_i[0] = -1
    return op.name


def _dropped_output_address(md):
    op = _compiled_ops(md)[0]
    del op.output_i[:]
    return op.name


def _another_ops_kernel(md):
    """A conv made to load the kernel of an op of another type (its hash recorded too)."""
    ops = _compiled_ops(md)
    conv = next(op for op in ops if op.type == "Conv2D")
    other = next(op for op in ops if op.type != "Conv2D")
    conv.attr[ATTR_KERNEL_NAME_FOR_LOAD].s = other.attr["_kernelname"].s
    conv.attr[ATTR_KERNEL_SHA256].s = other.attr[ATTR_KERNEL_SHA256].s
    return conv.name


def _output_outside_the_arena(md):
    op = _compiled_ops(md)[0]
    op.output_i[0] = 1 << 39            # neither feature-map nor weight memory
    return op.name


EDITS = {
    "drop_workspace": (_drop_workspace, "EP0406"),
    "shrink_workspace": (_shrink_workspace, "EP0406"),
    "smaller_input_shape": (_smaller_input_shape, "EP0406"),
    "other_output_dtype": (_other_output_dtype, "EP0406"),
    "unconnected_input": (_unconnected_input, "EP0406"),
    "dropped_output_address": (_dropped_output_address, "EP0404"),
    "another_ops_kernel": (_another_ops_kernel, "EP0406"),
    "output_outside_the_arena": (_output_outside_the_arena, "EP0404"),
}


def test_the_unedited_rewrite_runs(om_path, tmp_path):
    """The control: rewriting without an edit gives an OM that runs (so a failure below comes
    from the edit, not from the rewrite)."""
    run = _run(_rewrite(om_path, tmp_path / "same.om", lambda md: None))
    assert run.returncode == 0, run.stderr


@pytest.mark.parametrize("name", sorted(EDITS))
def test_an_edited_plan_is_a_coded_error_naming_the_op(om_path, tmp_path, name):
    edit, code = EDITS[name]
    named = []
    path = _rewrite(om_path, tmp_path / f"{name}.om", lambda md: named.append(edit(md)))
    run = _run(path)
    assert run.returncode == 255, f"{name}: rc {run.returncode}\n{run.stderr}"
    assert f"[ERROR] {code}" in run.stderr
    assert named[0] in run.stderr
    assert "Traceback" not in run.stderr + run.stdout


_PROBE = textwrap.dedent("""
    import sys
    import ge.runtime
    from ge.errors import GeError
    for path in sys.argv[1:]:
        try:
            model = ge.runtime.load(path)
            model.run([__import__("numpy").zeros(s.shape, s.dtype) for s in model.inputs])
            print("ran", flush=True)
        except GeError as e:
            print(e.code, flush=True)
""")


def test_random_plan_edits_never_crash(om_path, tmp_path):
    """Random edits of the fields a kernel trusts (addresses, workspace, shapes, dtypes) on
    compiled ops, resealed, loaded and run in one child process: each ends in a coded error
    or a run, and the process never dies of a signal."""
    rng = random.Random(2)
    base = read_om(om_path)
    te = {(t.kernel.context.op_id, t.kernel.context.op_index) for t in base.task_def.task
          if t.kernel.context.kernel_type == KERNEL_TYPE_TE}
    assert te, "the model has no compiled kernel"

    def edit(md):
        op = rng.choice(_compiled_ops(md))
        field = rng.choice(["input_i", "output_i", "workspace", "workspace_bytes", "dim",
                            "dtype"])
        if field in ("input_i", "output_i", "workspace", "workspace_bytes"):
            values = getattr(op, field)
            if values and rng.random() < 0.5:
                values[rng.randrange(len(values))] = rng.choice([-1, 0, 1, 64, 1 << 20])
            elif values:
                del values[-1]
        else:
            descs = rng.choice([op.input_desc, op.output_desc])
            desc = descs[rng.randrange(len(descs))]
            if field == "dim" and desc.shape.dim:
                desc.shape.dim[rng.randrange(len(desc.shape.dim))] = rng.choice([0, 1, 2, 3])
            else:
                desc.dtype = to_proto_dtype(rng.choice([DataType.DT_FLOAT16, DataType.DT_INT8,
                                                        DataType.DT_INT64, DataType.DT_BOOL]))
    paths = [_rewrite(om_path, tmp_path / f"edit{i}.om", edit) for i in range(24)]
    run = subprocess.run([sys.executable, "-c", _PROBE, *paths], capture_output=True,
                         text=True, timeout=TIMEOUT * 2)
    assert run.returncode == 0, f"rc {run.returncode}: {run.stderr[-2000:]}"
    outcomes = run.stdout.split()
    assert len(outcomes) == len(paths)
    assert set(outcomes) <= {"ran", "EP0404", "EP0406", "EP0405", "EP0402"}, outcomes
