"""One network per row of the Caffe mapping table (and per parameter variant): it compiles with
pyatc --framework=0 and its OM computes what OpenCV's DNN module computes on the original
network (or, where OpenCV cannot be the reference, what numpy computes from Caffe's
definition of the layer)."""
from __future__ import annotations

import numpy as np
import pytest

from ge.parser.caffe import MAPPINGS
from ge.runtime import load
from ge.runtime.compare import random_inputs
from ge.runtime.compare_caffe import compare_caffe

from ._rows import NUMPY_REFERENCE, ROW_NETS

RTOL, ATOL = 1e-4, 1e-5


def test_every_mapping_row_has_a_network():
    """SSDDetectionOutput is checked on the SSD head (test_networks.py)."""
    covered = {layer.type for _, build in ROW_NETS.values() for layer in build().net.layer}
    assert {row.type for row in MAPPINGS} - {"SSDDetectionOutput"} <= covered


@pytest.mark.parametrize("case", sorted(set(ROW_NETS) - set(NUMPY_REFERENCE)))
def test_row_matches_opencv(case, caffe_compile):
    model = caffe_compile(case, ROW_NETS[case][1])
    result = compare_caffe(str(model.prototxt), str(model.weight), str(model.om),
                           rtol=RTOL, atol=ATOL, dump=True)
    assert result.outputs and result.ok, result.outputs
    assert result.first_divergence is None, result.first_divergence


@pytest.mark.parametrize("case", sorted(NUMPY_REFERENCE))
def test_row_matches_caffe_definition(case, caffe_compile):
    model = caffe_compile(case, ROW_NETS[case][1])
    om = load(str(model.om))
    inputs = random_inputs(om.inputs, seed=0)
    (got,) = om.run(inputs)
    want = np.asarray(NUMPY_REFERENCE[case](inputs, model.net.blobs))
    assert got.shape == want.shape
    scale = float(np.abs(want).max())
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL + RTOL * scale)
