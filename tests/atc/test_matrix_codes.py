"""The generated compatibility matrix and the code table."""
from __future__ import annotations

import re

from atc_entries import REPO

from ge.atc import matrix
from ge.atc.codes import CODES, format_message, is_internal, lookup
from ge.atc.flags import FLAGS, NO_EFFECT, REFUSED
from ge.atc.matrix import BEGIN_MARK, END_MARK, render


def test_docs_embed_the_current_matrix():
    text = (REPO / "docs" / "atc.md").read_text(encoding="utf-8")
    start, end = text.index(BEGIN_MARK), text.index(END_MARK) + len(END_MARK)
    assert text[start:end] == render(), "run python3 -m ge.atc.matrix and update docs/atc.md"


def test_matrix_module_prints_every_flag(capsys, monkeypatch):
    monkeypatch.setattr("sys.argv", ["matrix"])
    matrix.main()
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| `--")]
    assert [row.split("`")[1] for row in rows] == [f"--{f.name}" for f in FLAGS]


def test_every_refused_flag_has_a_refusal_rule():
    for f in FLAGS:
        if f.support == REFUSED:
            assert f.refuse is not None, f.name
            assert not f.refuse(f.default), f.name      # the default is never refused
        if f.support == NO_EFFECT:
            assert f.refuse is None, f.name


def test_code_table_shape():
    codes = [c.code for c in CODES]
    assert sorted(code for code in codes if codes.count(code) > 1) == []
    for c in CODES:
        assert re.fullmatch(r"(E1\d{4}|EZ\d{4}|EP\d{4}|WP\d{4})", c.code), c.code
        assert c.ours == c.code.startswith(("EP", "WP"))
    assert is_internal("E19999") and not is_internal("E10001")
    assert lookup("E10054").solution == "Check whether the command line parameter format is correct."


def test_format_message():
    assert format_message("E10004", {"parameter": "om"}) == "Value for --om is empty."
    assert format_message("E10041", {"file": "m.onnx", "reason": "empty"}) == \
        "Failed to load the model from m.onnx. Reason: empty."
    assert format_message("E18123", {"opname": "x"}) == "opname=x"


def test_every_code_used_in_ge_atc_is_in_the_table():
    sources = "".join(p.read_text() for p in (REPO / "ge" / "atc").glob("*.py"))
    used = set(re.findall(r'"((?:E1|EZ|EP|WP)[0-9]{4})"', sources))
    assert used <= {c.code for c in CODES}


def test_every_code_raised_in_ge_is_in_the_table():
    """The one code table: a code raised or warned anywhere below ge/ must be listed in
    ge/atc/codes.py (ask the ge/atc owner to add it)."""
    pattern = re.compile(r'(?:GeError|KernelBuildError|warn)\(\s*"((?:E|W)[0-9A-Z]{5})"')
    used = set()
    for path in (REPO / "ge").rglob("*.py"):
        used |= set(pattern.findall(path.read_text(encoding="utf-8", errors="replace")))
    assert used - {c.code for c in CODES} == set()
