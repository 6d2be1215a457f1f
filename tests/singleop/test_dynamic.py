"""`--singleop` with dynamic shapes (issue #13): an op whose tensors have -1 dims and a
`shape_range` compiles to an unknown-shape OM named as ATC names it, runs on the host at any
shape inside its ranges (through `ge.runtime.load` and `python3 -m ge.runtime`) and matches
numpy; a shape outside the ranges is EP0220; an unbounded range has no upper limit."""
from __future__ import annotations

import numpy as np
import pytest

import ge.runtime
from ge.errors import GeError
from ge.om import read_om
from ge.runtime.__main__ import main as runtime_main
from ge.runtime._cli import guarded

from ._oplists import tensor, write
from .conftest import ARGS

DYNAMIC = [
    {"op": "Add", "name": "add_dyn",
     "input_desc": [tensor([-1, 16], shape_range=[[1, 32]]),
                    tensor([-1, 16], shape_range=[[1, 32]])],
     "output_desc": [tensor([-1, 16], shape_range=[[1, 32]])]},
    {"op": "Relu",                      # unbounded: the file name keeps the -1
     "input_desc": [tensor([2, -1], shape_range=[[1, -1]])],
     "output_desc": [tensor([2, -1], shape_range=[[1, -1]])]},
]
RELU_OM = "1_Relu_0_2_2_-1_0_2_2_-1.om"


@pytest.fixture(scope="module")
def built(atc_main, shared_kernel_cache, tmp_path_factory):
    root = tmp_path_factory.mktemp("singleop_dynamic")
    op_list = write(root / "dyn.json", DYNAMIC)
    run = atc_main(f"--singleop={op_list}", "--output=out", *ARGS,
                   f"--op_compiler_cache_dir={shared_kernel_cache}", cwd=root)
    assert run.rc == 0, run.text
    return root / "out"


def test_dynamic_ops_build_unknown_shape_oms(built):
    assert sorted(p.name for p in built.iterdir()) == sorted(["add_dyn.om", RELU_OM])
    om = read_om(str(built / "add_dyn.om"))
    assert om.header.is_unknow_model == 1
    assert om.model_attr("GE_INNER_SINGLE_OP_TYPE") == "Add"
    assert om.model_attr("_pyatc_input_shape_range") == \
        "add_dyn_in_0:[1~32,16];add_dyn_in_1:[1~32,16]"


@pytest.mark.parametrize("rows", [32, 1, 7])
def test_add_runs_inside_its_range_and_matches_numpy(built, rows):
    rng = np.random.default_rng(rows)
    a, b = (rng.standard_normal((rows, 16)).astype(np.float32) for _ in range(2))
    with ge.runtime.load(str(built / "add_dyn.om")) as model:
        (got,) = model.run([a, b])
    np.testing.assert_array_equal(got, a + b)


def test_shapes_inside_the_ranges_that_do_not_fit_together_are_a_bad_input(built):
    with ge.runtime.load(str(built / "add_dyn.om")) as model, pytest.raises(GeError) as err:
        model.run([np.zeros((5, 16), np.float32), np.zeros((7, 16), np.float32)])
    assert err.value.code == "EP0403"
    assert "the model cannot be built for the input shapes [[5, 16], [7, 16]]" in str(err.value)


def test_an_unbounded_dim_takes_any_size(built):
    with ge.runtime.load(str(built / RELU_OM)) as model:
        assert model.input_ranges == {"Relu_in_0": [(2, 2), (1, -1)]}
        for cols in (1, 300):
            x = np.random.default_rng(cols).standard_normal((2, cols)).astype(np.float32)
            (got,) = model.run([x])
            np.testing.assert_array_equal(got, np.maximum(x, 0))
        with pytest.raises(GeError) as err:
            model.run([np.zeros((2, 0), np.float32)])
    assert err.value.code == "EP0220" and "dim 1 must be in [1, inf)" in str(err.value)


def test_the_runtime_command_line_runs_other_shapes(built, tmp_path, capsys):
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal((5, 16)).astype(np.float32) for _ in range(2)]
    files = []
    for k, x in enumerate(inputs):
        files.append(str(tmp_path / f"in{k}.npy"))
        np.save(files[-1], x)
    rc = guarded(runtime_main, ["--model", str(built / "add_dyn.om"), "--input",
                                ",".join(files), "--output", str(tmp_path / "out")])
    first = capsys.readouterr()
    assert rc == 0, first
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "output_0.npy"), sum(inputs))
    np.save(files[0], np.zeros((33, 16), np.float32))
    np.save(files[1], np.zeros((33, 16), np.float32))
    rc = guarded(runtime_main, ["--model", str(built / "add_dyn.om"), "--input",
                                ",".join(files), "--output", str(tmp_path / "out2")])
    assert rc == 255 and "[ERROR] EP0220: Input add_dyn_in_0 has shape [33, 16]" in \
        capsys.readouterr().err
    assert not (tmp_path / "out2").exists()
