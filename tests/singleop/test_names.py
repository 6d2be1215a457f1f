"""The OM file name ATC gives an op (spec/atc-cli.md §6.13)."""
from __future__ import annotations

import pytest

from ge.graph import DataType, Format
from ge.parser.singleop import SingleOp, TensorSpec, file_name


def _op(name: str, index: int = 7, dims=(2, 3)) -> SingleOp:
    t = TensorSpec(DataType.DT_INT32, Format.FORMAT_ND, tuple(dims), Format.FORMAT_ND,
                   tuple(dims))
    return SingleOp(entry=9, index=index, op_type="Add", name=name, inputs=(t, t), outputs=(t,),
                    attrs=())


@pytest.mark.parametrize("name,expected", [
    ("my_add-1.v2", "my_add-1.v2.om"),                   # a valid file name is used as is
    ("", "7_Add_3_2_2_3_3_2_2_3_3_2_2_3.om"),            # serial, type, dtype/format/dims
    ("has space", "7_Add_3_2_2_3_3_2_2_3_3_2_2_3.om"),   # not a file name: generated
    ("..", "7_Add_3_2_2_3_3_2_2_3_3_2_2_3.om"),
    ("a/b", "7_Add_3_2_2_3_3_2_2_3_3_2_2_3.om"),
    ("x" * 200, "x" * 128 + ".om"),                      # cut to 128 characters first
])
def test_file_name(name, expected):
    assert file_name(_op(name)) == expected


def test_generated_name_is_cut_to_128_characters():
    name = file_name(_op("", dims=(1024,) * 20))
    assert len(name) == 128 + len(".om") and name.startswith("7_Add_3_2_1024_1024")
