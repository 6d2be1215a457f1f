"""Fixtures for the ONNX parser tests.

STAND-IN REGISTRY ENTRIES (clearly a test-only fallback): the op registry (ge/ops/defs) is being
written in parallel.  For every IR op the parser's mapping table can emit and the registry does
not define yet, a port/attribute-only OpDef from spec/ir-ops.md §3 is registered for the test
session and removed afterwards.  Once the registry defines an op, its real entry is used.
"""
from __future__ import annotations

import os

import onnx
import pytest

from ge.graph.types import AttrValueType as VT
from ge.ops import registry
from ge.ops.registry import AttrSpec, OpDef, Port

LIGHT_DIR = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")


def _p(spec: str) -> tuple:
    """'x filter bias? offset_w? args*' -> Ports."""
    ports = []
    for name in spec.split():
        kind = "optional" if name.endswith("?") else "dynamic" if name.endswith("*") else \
            "required"
        ports.append(Port(name.rstrip("?*"), kind))
    return tuple(ports)


# IR type -> (inputs, outputs, attrs) from spec/ir-ops.md §3 (attrs: name -> kind).
_STANDIN = {
    "BroadcastTo": ("x shape", "y", {}),
    "ConcatD": ("x*", "y", {"concat_dim": VT.VT_INT, "N": VT.VT_INT}),
    "DepthToSpace": ("x", "y", {"block_size": VT.VT_INT, "mode": VT.VT_STRING,
                                "data_format": VT.VT_STRING}),
    "Expand": ("x shape", "y", {}),
    "ExpandDims": ("x axis", "y", {}),
    "Fill": ("dims value", "y", {}),
    "Flatten": ("x", "y", {"axis": VT.VT_INT}),
    "GatherElements": ("x index", "y", {"dim": VT.VT_INT}),
    "GatherV2": ("x indices axis", "y", {"batch_dims": VT.VT_INT,
                                         "is_preprocessed": VT.VT_BOOL,
                                         "negative_index_support": VT.VT_BOOL}),
    "MirrorPad": ("x paddings", "y", {"mode": VT.VT_STRING}),
    "PadV3": ("x paddings constant_values?", "y", {"mode": VT.VT_STRING,
                                                   "paddings_contiguous": VT.VT_BOOL}),
    "Range": ("start limit delta", "y", {"is_closed": VT.VT_BOOL}),
    "Reshape": ("x shape", "y", {"axis": VT.VT_INT, "num_axes": VT.VT_INT}),
    "Resize": ("x roi? scales? sizes?", "y", {"coordinate_transformation_mode": VT.VT_STRING,
                                              "mode": VT.VT_STRING}),
    "ResizeNearestNeighborV2": ("x size", "y", {"align_corners": VT.VT_BOOL,
                                                "half_pixel_centers": VT.VT_BOOL}),
    "Shape": ("x", "y", {"dtype": VT.VT_INT}),
    "Slice": ("x offsets size", "y", {}),
    "Split": ("split_dim x", "y*", {"num_split": VT.VT_INT}),
    "SplitV": ("x size_splits split_dim", "y*", {"num_split": VT.VT_INT}),
    "Squeeze": ("x", "y", {"axis": VT.VT_LIST_INT}),
    "SqueezeV3": ("x axes?", "y", {}),
    "StridedSliceV2": ("x begin end axes? strides?", "y", {}),
    "TensorScatterUpdate": ("x indices updates", "y", {}),
    "Tile": ("x multiples", "y", {}),
    "Transpose": ("x perm", "y", {}),
    "Unsqueeze": ("x", "y", {"axes": VT.VT_LIST_INT}),
    "UnsqueezeV3": ("x axes", "y", {}),
}


@pytest.fixture(scope="session", autouse=True)
def standin_registry():
    registry.all_ops()  # load the real registry first
    added = []
    for ir_type, (ins, outs, attrs) in _STANDIN.items():
        if registry.get(ir_type) is None:
            registry.register(OpDef(ir_type, _p(ins), _p(outs),
                                    tuple(AttrSpec(k, v, None) for k, v in attrs.items()),
                                    doc="test stand-in (tests/parser/conftest.py)"))
            added.append(ir_type)
    yield added
    for ir_type in added:
        registry.REGISTRY.pop(ir_type, None)


@pytest.fixture
def light_dir():
    if not os.path.isdir(LIGHT_DIR):
        pytest.skip("onnx light models not installed")
    return LIGHT_DIR
