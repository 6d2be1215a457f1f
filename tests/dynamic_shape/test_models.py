"""Unknown dimensions on the CI-sized ResNet-50, MobileNetV2 and BERT: each compiled with a
range form and with `-1` in `--input_shape`, run on the host at several shapes inside the
ranges (the bounds included) and compared with onnxruntime at the same shapes; a shape outside
the ranges is EP0220 before anything runs."""
from __future__ import annotations

import numpy as np
import onnx
import pytest

import ge.runtime
from ge.errors import GeError
from ge.om import read_om

from runtime._build import onnxruntime_outputs

RTOL = 1e-4

# (model, shape flags, shapes to run: the bounds, for BERT also a size between them; each new
# CNN shape costs a kernel set, so the CNNs run their bounds).  The `-1` compile of each model
# is built at (hint) and run on shapes its range compile already specialised, so its kernels
# come from the cache.
CASES = [
    ("resnet50", ("--input_shape=input:1~2,3,16~32,16~32",), [(2, 3, 32, 32), (1, 3, 16, 16)]),
    ("resnet50", ("--input_shape=input:-1,3,-1,-1", "--input_hint_shape=0:[2,3,32,32]"),
     [(2, 3, 32, 32), (1, 3, 16, 16)]),
    ("mobilenetv2", ("--input_shape_range=input:[1~2,3,24~32,24~32]",),
     [(2, 3, 32, 32), (1, 3, 24, 24)]),
    ("mobilenetv2", ("--input_shape=input:-1,3,-1,-1", "--input_hint_shape=0:[1,3,24,24]"),
     [(1, 3, 24, 24), (2, 3, 32, 32)]),
    ("bert", ("--input_shape=input_ids:1~3,8;attention_mask:1~3,8",), [(3, 8), (1, 8), (2, 8)]),
    ("bert", ("--input_shape=input_ids:-1,8;attention_mask:-1,8",), [(1, 8), (3, 8)]),
]


def _feeds(name: str, shape: tuple, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    if name == "bert":
        mask = np.ones(shape, np.int64)
        mask[:, -2:] = 0
        return {"input_ids": rng.integers(0, 100, shape).astype(np.int64),
                "attention_mask": mask}
    return {"input": rng.standard_normal(shape).astype(np.float32)}


@pytest.mark.parametrize("name,flags,shapes", CASES,
                         ids=[f"{c[0]}-{'range' if '~' in ' '.join(c[1]) else 'unbounded'}"
                              for c in CASES])
def test_runs_inside_the_ranges_match_onnxruntime(dynamic_om, name, flags, shapes):
    compiled = dynamic_om(name, *flags)
    source = onnx.load(str(compiled.onnx))
    with ge.runtime.load(str(compiled.om)) as model:
        assert model.dynamic is not None
        for k, shape in enumerate(shapes):
            feeds = _feeds(name, shape, seed=k)
            got = model.run(feeds)
            want = onnxruntime_outputs(source, feeds)
            for g, w in zip(got, want):
                assert g.shape == w.shape, (shape, g.shape, w.shape)
                atol = 1e-4 * max(float(np.abs(w).max()), 1.0)
                np.testing.assert_allclose(g, w, rtol=RTOL, atol=atol, err_msg=str(shape))
        # the compiled shape runs the OM's own model; every other shape was specialised once
        compiled_at = tuple(model.inputs[0].shape)
        assert len(model.dynamic.specialise_seconds) == len(
            {s for s in shapes if s != compiled_at})


def test_the_om_is_sized_for_the_upper_bounds(dynamic_om):
    om = read_om(str(dynamic_om("resnet50", "--input_shape=input:1~2,3,16~32,16~32").om))
    assert om.header.is_unknow_model == 1
    data = next(op for op in om.model_def.graph[0].op if op.type == "Data")
    assert list(data.output_desc[0].shape.dim) == [2, 3, 32, 32]
    assert [list(r.list_i) for r in
            data.output_desc[0].attr["shape_range"].list_list_int.list_list_i] == [
        [1, 2], [3, 3], [16, 32], [16, 32]]


@pytest.mark.parametrize("shape,dim,allowed", [((3, 3, 32, 32), 0, "[1, 2]"),
                                               ((1, 3, 8, 32), 2, "[16, 32]")])
def test_a_shape_outside_the_ranges_is_refused_before_anything_runs(dynamic_om, shape, dim,
                                                                    allowed):
    om = dynamic_om("resnet50", "--input_shape=input:1~2,3,16~32,16~32").om
    with ge.runtime.load(str(om)) as model:
        with pytest.raises(GeError) as err:
            model.run([np.zeros(shape, np.float32)])
        assert model.dynamic.specialise_seconds == {}          # nothing compiled or run
    assert err.value.code == "EP0220"
    assert (f"Input input has shape {list(shape)}; dim {dim} must be in {allowed}, the range "
            "the unknown-shape model was compiled for (input:[1~2,3,16~32,16~32]). Nothing "
            "was computed.") in str(err.value)


def test_a_rank_mismatch_is_a_bad_input(dynamic_om):
    om = dynamic_om("bert", "--input_shape=input_ids:-1,8;attention_mask:-1,8").om
    with ge.runtime.load(str(om)) as model, pytest.raises(GeError) as err:
        model.run([np.zeros((8,), np.int64), np.zeros((1, 8), np.int64)])
    assert err.value.code == "EP0403" and "rank 2" in str(err.value)
