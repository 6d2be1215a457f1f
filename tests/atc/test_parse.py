"""Unit tests of the parser (spec/atc-cli.md §3) over the flag table, in process."""
from __future__ import annotations

import pytest

from ge.atc.flags import BOOL, FLAGS, INT, STRING
from ge.atc.parse import ParseFailure, parse_args, range_reason, rewrite_element


def parse(*args: str, environ: dict | None = None):
    return parse_args(["atc", *args], environ or {})


def failure(*args: str) -> ParseFailure:
    with pytest.raises(ParseFailure) as info:
        parse(*args)
    return info.value


def test_flag_table_counts_match_spec():
    static = [f for f in FLAGS if not f.registered]
    assert sum(f.kind == STRING for f in static) == 77
    assert sorted(f.name for f in static if f.kind == INT) == sorted(
        ["framework", "mode", "virtual_type", "sparsity", "disable_reuse_memory", "op_debug_level"])
    assert sorted(f.name for f in FLAGS if f.kind == BOOL) == ["help",
                                                                "raw_ge_options_ignore_unsupported"]
    assert sorted(f.name for f in FLAGS if f.registered) == sorted(
        ["oo_constant_folding", "oo_dead_code_elimination", "topo_sorting_mode",
         "multi_stream_parallel_mode", "export_compile_stat"])


@pytest.mark.parametrize("raw,rewritten", [
    ("-mode=1", "--mode=1"), ("-help", "--help"), ("-h", "-h"), ("--soc-version=a-b", "--soc_version=a-b"),
    ("--virtual-type=0", "--virtual_type=0"), ("-1", "-1"), ("-x", "-x"), ("value-x", "value-x"),
])
def test_rewrite_element(raw, rewritten):
    assert rewrite_element(raw) == rewritten


def test_defaults_and_last_value_wins_first_is_user_set():
    result = parse("--mode=1", "--mode", "3")
    assert result.values["mode"] == "3"
    assert result.user_set["mode"] == "1"
    assert result.values["op_compiler_cache_mode"] == "enable"
    assert result.values["framework"] == "-1"
    assert "framework" not in result.user_set


def test_unique_prefix_and_exact_match():
    assert parse("--soc=Ascend310").values["soc_version"] == "Ascend310"
    assert parse("--mode=1").values["mode"] == "1"          # exact wins over --model prefix
    assert parse("--he").help and parse("--h").help and parse("-h").help


@pytest.mark.parametrize("arg,name", [("--mod=1", "mod"), ("--ho=1", "ho"), ("-x", "x"),
                                      ("-1", "1"), ("--noflag", "noflag"), ("--version", "version")])
def test_unknown_and_ambiguous(arg, name):
    assert failure(arg).stderr == [f"ERROR: unknown command line flag '{name}'"]


def test_separate_value_may_start_with_dash():
    assert parse("--input_shape", "-1,3").values["input_shape"] == "-1,3"
    assert parse("--model", "--framework=3").values["model"] == "--framework=3"


def test_first_equals_separates():
    assert parse("--out_nodes=a=b").values["out_nodes"] == "a=b"


def test_bool_does_not_consume_next():
    assert failure("--raw_ge_options_ignore_unsupported", "yes").stderr == [
        "ERROR: Non-option parameter: yes"]
    assert parse("--raw_ge_options_ignore_unsupported=YES").values[
        "raw_ge_options_ignore_unsupported"] == "true"
    assert not parse("--help=no").help


def test_missing_argument_text():
    assert failure("--soc").stderr == [
        "ERROR: flag '--soc' is missing its argument; flag description: "
        "Target SoC name, for example Ascend310."]


def test_positionals_reported_after_options_and_after_dashdash():
    assert failure("a", "--mode=1", "b").stderr == ["ERROR: Non-option parameter: a",
                                                    "ERROR: Non-option parameter: b"]
    assert failure("--", "--mode=1").stderr == ["ERROR: Non-option parameter: --mode=1"]


def test_posixly_correct_stops_at_first_positional():
    with pytest.raises(ParseFailure) as info:
        parse("a", "--mode=9", environ={"POSIXLY_CORRECT": "1"})
    assert info.value.stderr == ["ERROR: Non-option parameter: a",
                                 "ERROR: Non-option parameter: --mode=9"]


def test_first_failure_wins_and_help_stops():
    assert failure("--log=x", "--mode=9").error.code == "E10010"
    assert parse("--help", "--log=x", "pos").help


@pytest.mark.parametrize("args,code,params", [
    (["--mode="], "E10001", {"value": "", "parameter": "--mode"}),
    (["--framework=9"], "E10007", {"parameter": "framework"}),
    (["--external_weight=3"], "E10006", {"value": "3", "parameter": "external_weight"}),
    (["--core_type=x"], "E10001", {"value": "x", "parameter": "--core_type"}),
    (["--help=maybe"], "E10003", {"value": "maybe", "parameter": "help"}),
    (["--log="], "E10010", {"value": ""}),
])
def test_value_errors(args, code, params):
    error = failure(*args).error
    assert error.code == code
    assert {k: error.params[k] for k in params} == params


def test_range_reason_is_lexicographic_with_space_before_period():
    assert range_reason(("0", "1", "3", "5", "6", "7", "30")).endswith(
        "[0] [1] [3] [30] [5] [6] [7] .")


def test_deprecation_notice_collected():
    result = parse("--shape_generalized_build_mode=shape_precise")
    assert result.notices == ["[WARNING][GE] Option shape_generalized_build_mode is deprecated "
                              "and will be removed in future version. Please do not configure "
                              "this option in the future."]
