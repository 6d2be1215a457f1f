"""Same model, same options: `atc`, `pyatc` and `python3 -m ge.pyatc` write the same OM bytes
apart from the `atc_cmdline` model attribute, and two runs (warm or cold kernel cache) write
identical bytes."""
from __future__ import annotations

from pathlib import Path

import pytest

from _om_compare import same_om_but_model_def
from ge.om import read_om
from ge.proto.ge_ir import ModelDef

from .conftest import compile_args

MODELS = ("bert_ci", "light_squeezenet")


def _compile(atc_run, entry: str, model: Path, work: Path, *extra: str, **kwargs) -> Path:
    work.mkdir()
    run = atc_run(entry, *compile_args(model, "m", *extra), cwd=work, **kwargs)
    assert run.rc == 0, run.text
    return work / "m.om"


def assert_same_except_cmdline(a: Path, b: Path) -> None:
    """Header, partition table and every partition equal; MODEL_DEF equal once the
    `atc_cmdline` attribute is cleared (and it re-serialises to the very bytes stored, so
    nothing else in it can differ unseen)."""
    payloads = same_om_but_model_def(a, b)
    cleared = []
    for payload in payloads:
        model_def = ModelDef.FromString(payload)
        assert model_def.SerializeToString(deterministic=True) == payload
        assert "atc_cmdline" in model_def.attr
        del model_def.attr["atc_cmdline"]
        cleared.append(model_def.SerializeToString(deterministic=True))
    assert cleared[0] == cleared[1]


@pytest.mark.parametrize("name", MODELS)
def test_entries_write_the_same_om(name, atc_run, model_path, tmp_path):
    model = model_path(name)
    paths = {entry: _compile(atc_run, entry, model, tmp_path / entry.replace(" ", "_"))
             for entry in ("pyatc", "atc", "python3 -m ge.pyatc")}
    cmdlines = {entry: read_om(str(p)).model_attr("atc_cmdline") for entry, p in paths.items()}
    args = " ".join(compile_args(model, "m"))
    for entry, cmdline in cmdlines.items():
        assert cmdline.endswith(" " + args) or args in cmdline, (entry, cmdline)
    for entry in ("atc", "python3 -m ge.pyatc"):
        assert_same_except_cmdline(paths["pyatc"], paths[entry])


@pytest.mark.parametrize("name", MODELS)
def test_two_runs_write_identical_bytes(name, atc_run, model_path, tmp_path):
    """Same command line from two directories; the third run compiles every kernel afresh
    into an empty cache."""
    model = model_path(name)
    first = _compile(atc_run, "pyatc", model, tmp_path / "first")
    second = _compile(atc_run, "pyatc", model, tmp_path / "second")
    assert first.read_bytes() == second.read_bytes()
    cold = _compile(atc_run, "pyatc", model, tmp_path / "cold",
                    f"--op_compiler_cache_dir={tmp_path / 'empty_cache'}", cache=False)
    assert_same_except_cmdline(first, cold)
