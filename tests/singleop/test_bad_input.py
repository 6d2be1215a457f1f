"""Bad op lists: CANN's code naming the op and the field, exit status 255, no traceback, and
nothing written (the whole list is checked before any op is compiled)."""
from __future__ import annotations

import json

import pytest

from ._oplists import attr, tensor
from .conftest import ARGS

ADD = {"op": "Add", "input_desc": [tensor([2]), tensor([2])], "output_desc": [tensor([2])]}
MATMUL = {"op": "MatMulV2", "input_desc": [tensor([2, 2]), tensor([2, 2])],
          "output_desc": [tensor([2, 2])]}


def _with(base: dict, **fields) -> dict:
    return dict(base, **fields)


def _matmul_attr(kind: str, value, name: str = "transpose_x1") -> dict:
    return _with(MATMUL, attr=[attr(name, kind, value)])


CASES = [   # id, op list (or raw text), expected headline, expected detail ("" = none)
    ("not-json", '[{"op": "Add",', "Invalid_Argument(E10025): File {path} specified by "
     "--singleop is not a valid JSON file. Reason: Expecting", ""),
    ("nan", '[{"op": "Add", "attr": [{"name": "a", "type": "float", "value": NaN}]}]',
     "Invalid_Argument(E10025): File {path} specified by --singleop is not a valid JSON file. "
     "Reason: NaN is not a JSON value.", ""),
    ("not-a-list", {"op": "Add"}, "File_Operation_Error_Parse(E10032): Failed to parse JSON "
     "file ops.json. Reason: the top-level value must be a list of ops.", ""),
    ("entry-not-object", [ADD, 3], "(E10032): Failed to parse JSON file ops.json. Reason: "
     "entry 1 is 3, which is not an object.", ""),
    ("no-op", [{"input_desc": []}], "Invalid_Argument(E10026): The Op name is empty in the "
     "file specified by --singleop.", "Entry 0 of the op list ops.json has no op type"),
    ("unknown-op", [ADD, {"op": "NoSuchOp", "name": "mine"}], "(E10501): IR for Op mine with "
     "optype NoSuchOp is not registered.", ""),
    ("bad-dtype", [_with(ADD, input_desc=[tensor([2]), tensor([2], "floaty")])],
     "Invalid_Argument(E10027): Attribute datatype of input tensor 1 for Op Add is invalid "
     "when --singleop is specified.", 'input_desc[1] gives datatype "floaty"'),
    ("bad-format", [_with(ADD, output_desc=[tensor([2], fmt="XYZ")])],
     "(E10027): Attribute format of output tensor 0 for Op Add is invalid", ""),
    ("no-shape", [_with(ADD, input_desc=[{"format": "ND", "type": "float"}, tensor([2])])],
     '(E10032): Failed to parse JSON file ops.json. Reason: entry 0 (Add): input_desc[0] has '
     'no field "shape".', ""),
    ("shape-not-ints", [_with(ADD, input_desc=[tensor([2]), tensor("22")])],
     '(E10032): Failed to parse JSON file ops.json. Reason: entry 0 (Add): field "shape" of '
     'input_desc[1] is ["2","2"], which is not a list of integers.', ""),
    ("attr-no-name", [_matmul_attr("bool", True, name="")], "Invalid_Argument(E10029): "
     "Attribute name of Op MatMulV2 is empty in the file specified by --singleop.", "attr[0]"),
    ("attr-no-value", [_with(MATMUL, attr=[{"name": "transpose_x1", "type": "bool"}])],
     '(E10032): Failed to parse JSON file ops.json. Reason: entry 0 (MatMulV2): attr[0] '
     '(transpose_x1) has no field "value".', ""),
    ("attr-unknown-type", [_matmul_attr("boolean", True)], "Invalid_Argument(E10030): There "
     "is an invalid value for attribute name transpose_x1 of Op MatMulV2 in the file specified "
     "by --singleop.", 'type "boolean" is not an attribute type'),
    ("attr-value-not-of-type", [_matmul_attr("bool", "yes")], "(E10030): There is an invalid "
     "value for attribute name transpose_x1 of Op MatMulV2", 'value "yes" is not a bool'),
    ("attr-type-not-the-ops", [_matmul_attr("int", 1)], "(E10030): There is an invalid value "
     "for attribute name transpose_x1", "op type MatMulV2 takes transpose_x1 as bool, the file "
     "gives int"),
    ("required-attr-missing", [{"op": "Cast", "input_desc": [tensor([2])],
                                "output_desc": [tensor([2], "int32")]}],
     "(E10030): There is an invalid value for attribute name dst_type of Op Cast",
     "op type Cast requires attribute dst_type"),
    ("too-few-inputs", [_with(ADD, name="add1", input_desc=[tensor([2])])],
     "Invalid_Argument(E13014): Value 1 of parameter input size for Op add1 is invalid. "
     "Reason: op type Add needs at least 2 inputs (x1, x2).", ""),
    ("range-count", [_with(ADD, input_desc=[tensor([-1, 2]), tensor([2])])],
     "(E13014): Value 0 of parameter input_desc[0].shape_range size for Op Add is invalid. "
     "Reason: the shape [-1,2] needs one [low, high] range per -1 dim, 1 in all.", ""),
    ("unknown-rank-not-alone", [_with(ADD, input_desc=[tensor([-2, 2]), tensor([2])])],
     "(E13014): Value [-2,2] of parameter input_desc[0].shape for Op Add is invalid.", ""),
    ("range-not-a-pair", [_with(ADD, input_desc=[tensor([-1], shape_range=[[1]]),
                                                  tensor([2])])],
     "(E13014): Value [1] of parameter input_desc[0].shape_range[0] for Op Add", ""),
    ("const-value-count", [_with(ADD, input_desc=[tensor([2]), tensor(
        [2], is_const=True, const_value=[1.0, 2.0, 3.0])])],
     "(E13014): Value 3 of parameter input_desc[1].const_value size for Op Add", ""),
]


@pytest.mark.parametrize("name,ops,headline,detail", CASES, ids=[c[0] for c in CASES])
def test_bad_op_list(atc_main, tmp_path, name, ops, headline, detail):
    path = tmp_path / "ops.json"
    path.write_text(ops if isinstance(ops, str) else json.dumps(ops))
    run = atc_main("--singleop=ops.json", "--output=out", *ARGS, cwd=tmp_path)
    assert run.rc == 255 and "Traceback" not in run.text, run.text
    report = run.stdout.split("\n")
    failed = report.index("ATC run failed, Please check the detail log, Try 'pyatc --help' "
                          "for more information")
    assert headline.format(path=path) in report[failed + 1]
    if detail:
        assert "TraceBack (most recent call last):" in report
        assert detail in run.stdout
    assert not (tmp_path / "out").exists()


def test_unreadable_op_list_is_e10024(atc_main, tmp_path):
    (tmp_path / "ops.json").write_bytes(b'[{"op": "\xff"}]')
    run = atc_main("--singleop=ops.json", "--output=out", *ARGS, cwd=tmp_path)
    assert run.rc == 255
    assert "Invalid_Argument(E10024): Failed to open file ops.json specified by --singleop." \
        in run.stdout and "it is not UTF-8" in run.stdout
    assert not (tmp_path / "out").exists()


def test_missing_op_list_is_e10023(atc_main, tmp_path):
    run = atc_main("--singleop=nope.json", "--output=out", *ARGS, cwd=tmp_path)
    assert run.rc == 255
    assert "Invalid_Argument(E10023): Value nope.json for parameter --singleop is invalid." \
        in run.stdout
    assert not (tmp_path / "out").exists()


def test_compile_flag_1_entry_is_skipped_with_a_warning(atc_main, tmp_path):
    """CANN: an entry with compile_flag 1 turns fuzzy build on for the ops after it and is not
    compiled itself."""
    (tmp_path / "ops.json").write_text(json.dumps([
        {"compile_flag": 1, "op": "Relu", "input_desc": [tensor([3])],
         "output_desc": [tensor([3])]},
        {"op": "Relu", "input_desc": [tensor([3])], "output_desc": [tensor([3])]}]))
    run = atc_main("--singleop=ops.json", "--output=out", *ARGS, cwd=tmp_path)
    assert run.rc == 0, run.text
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["0_Relu_0_2_3_0_2_3.om"]
    assert "Fuzzy_Build_Entry(WP0700): Entry 0 of ops.json sets compile_flag 1" in run.stdout


def test_flags_of_the_flow_are_refused_or_warned_as_in_a_compile(atc_main, tmp_path):
    """The §8.3 flags: a refused value is EP0002 before anything is written, a flag without
    effect on this target is WP0001; flags the flow does not read are ignored, as in CANN."""
    (tmp_path / "ops.json").write_text(json.dumps([ADD]))
    run = atc_main("--singleop=ops.json", "--output=out", *ARGS, "--sparsity=1",
                   cwd=tmp_path)
    assert run.rc == 255
    assert "Not_Supported(EP0002): --sparsity=1 is not supported" in run.stdout
    assert not (tmp_path / "out").exists()
    run = atc_main("--singleop=ops.json", "--output=out", *ARGS, "--virtual_type=1",
                   "--input_fp16_nodes=x", cwd=tmp_path)
    assert run.rc == 0, run.text
    assert "Option_Without_Effect(WP0001): Option --virtual_type=1 is accepted" in run.stdout
    assert "input_fp16_nodes" not in run.stdout
