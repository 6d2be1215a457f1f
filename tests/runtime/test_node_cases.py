"""CI subset of the ONNX backend node tests (the full table is bench/node_tests.py).

A couple of cases per op family, compiled in-process (parse_onnx -> build_graph -> save_om)
and run by ge.runtime against the expected outputs shipped with the case; three of them also
through the real installed `pyatc` process.  Shape inputs are frozen with
pyatc.freeze_inputs semantics (ge.runtime.freeze), newer opsets moved to 18.
"""
from __future__ import annotations

import subprocess

import numpy as np
import pytest

from _build import REPO  # noqa: F401  (puts the repo on sys.path)

import ge.runtime
from ge.runtime.nodecases import _freeze, collect_cases, run_case

SUBSET = (
    # elementwise / activation
    "test_add_bcast", "test_sub_uint8", "test_div_example", "test_pow", "test_relu",
    "test_sigmoid", "test_erf", "test_clip_default_min", "test_leakyrelu", "test_hardswish",
    "test_where_example", "test_equal", "test_not_2d",
    # conv / pool / norm
    "test_basic_conv_with_padding", "test_conv_with_strides_padding",
    "test_maxpool_2d_pads", "test_averagepool_2d_default", "test_globalaveragepool",
    "test_batchnorm_example", "test_instancenorm_example", "test_layer_normalization_2d_axis0",
    "test_lrn_default",
    # matmul
    "test_matmul_3d", "test_gemm_all_attributes", "test_einsum_batch_matmul",
    # reduce / softmax
    "test_reduce_sum_keepdims_example", "test_reduce_mean_do_not_keepdims_example",
    "test_softmax_axis_1", "test_logsoftmax_example_1", "test_argmax_keepdims_example",
    "test_cumsum_1d",
    # shape / structural, with frozen shape inputs
    "test_reshape_negative_dim", "test_expand_dim_changed", "test_slice_neg_steps",
    "test_unsqueeze_axis_0", "test_squeeze", "test_concat_2d_axis_1",
    "test_split_equal_parts_1d_opset13",
    "test_transpose_all_permutations_1", "test_tile", "test_gather_1",
    "test_gather_elements_0", "test_depthtospace_example", "test_flatten_axis1",
    "test_constant_pad", "test_cast_FLOAT_to_DOUBLE",
    # control flow
    "test_if",
    # recurrent layers (every option: tests/parser/test_recurrent.py)
    "test_lstm_with_peepholes", "test_gru_batchwise", "test_simple_rnn_bidirectional",
    # quantization (generated C kernels; the rest in tests/runtime/test_quant.py)
    "test_qlinearconv", "test_dynamicquantizelinear", "test_quantizelinear_axis",
    # ONNX semantics beyond CANN's tables (docs/parser.md, deviations) and compiled-kernel
    # regressions (auto_pad resolved into explicit pads)
    "test_conv_with_autopad_same", "test_maxpool_2d_same_lower", "test_averagepool_2d_dilations",
    "test_top_k", "test_pow_types_int64_float32", "test_reduce_max_empty_set",
    "test_resize_downsample_scales_nearest", "test_resize_downsample_scales_linear_antialias",
    "test_shape_start_1", "test_argmax_keepdims_example_select_last_index",
    "test_scatternd_add", "test_convtranspose_autopad_same", "test_dropout_default_mask",
    "test_batchnorm_example_training_mode",
)
PROCESS_CASES = ("test_relu", "test_reshape_negative_dim", "test_maxpool_2d_pads")


@pytest.fixture(scope="module")
def cases():
    found = {c.name: c for c in collect_cases(names=set(SUBSET))}
    return found


@pytest.mark.parametrize("name", SUBSET)
def test_node_case(cases, name):
    if name not in cases:
        pytest.skip(f"{name} is not in this onnx version's node tests")
    result = run_case(cases[name])
    assert result.status == "pass", result.reason


def test_subset_covers_most_families(cases):
    assert len(cases) >= len(SUBSET) - 3


@pytest.mark.parametrize("name", PROCESS_CASES)
def test_node_case_through_pyatc(cases, name, entry_argv, entry_env, tmp_path):
    if name not in cases:
        pytest.skip(f"{name} is not in this onnx version's node tests")
    case = cases[name]
    model, keep, _ = _freeze(case)
    onnx_path = tmp_path / "case.onnx"
    onnx_path.write_bytes(model.SerializeToString())
    out = tmp_path / "case"
    run = subprocess.run(entry_argv("pyatc") + [f"--model={onnx_path}", "--framework=5",
                                                f"--output={out}", "--soc_version=Ascend310P3",
                                                 "--precision_mode=must_keep_origin_dtype"],
                         env=entry_env, cwd=tmp_path, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    om = ge.runtime.load(f"{out}.om")
    inputs, expected = case.data_sets[0]
    got = om.run([np.asarray(inputs[k]) for k in keep])
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=case.rtol, atol=case.atol)
