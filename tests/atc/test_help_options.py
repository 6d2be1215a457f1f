"""Help layout (§5), option map (§8.2) and raw options (§8.5), in process."""
from __future__ import annotations

import json

import pytest

from ge.atc.flags import FLAGS, HIDDEN
from ge.atc.help import help_text, program_name
from ge.atc.options import RunState, apply_raw_options, build_options, name_table
from ge.atc.parse import parse_args
from ge.errors import GeError


@pytest.mark.parametrize("argv0,name", [
    ("/x/bin/atc.bin", "atc"), ("/opt/cann/bin/pyatc", "pyatc"),
    ("/usr/bin/python3 -m ge.pyatc", "python3 -m ge.pyatc"), ("whatever", "atc"),
    ("/x/pyatc.sh", "atc"),
])
def test_program_name(argv0, name):
    assert program_name(argv0) == name


def test_help_layout():
    text = help_text("pyatc")
    lines = text.split("\n")
    assert lines[0] == "usage: pyatc <args>"
    assert lines[2].startswith("pyatc --model=./alexnet.prototxt") and lines[2].endswith(" ")
    assert lines[5:8] == ["", "===== Basic Functionality =====", "[General]"]
    assert lines[8].startswith("  --h/help ")
    advanced = lines.index("===== Advanced Functionality =====")
    assert lines[advanced + 1] == "[Feature]" and lines[advanced - 1] != ""
    for section in ("[Input]", "[Output]", "[Target]", "[Model Tuning]", "[Operator Tuning]",
                    "[Debug]"):
        assert lines[lines.index(section) - 1] == ""
    assert text.endswith("\n")
    assert "  --oo_constant_folding" + " " * 11 + "true or false" in text


def test_help_lists_every_visible_flag_and_hides_the_rest():
    text = help_text("atc")
    for f in FLAGS:
        shown = f"  --{'h/help' if f.name == 'help' else f.name} " in text
        assert shown == (f.group != HIDDEN), f.name
    assert "30: generate an execute-om" in text and "\n  7:" not in text


def _state(*args: str) -> RunState:
    parsed = parse_args(["atc", *args], {})
    return RunState(argv=["atc", *args], prog="atc", values=parsed.values,
                    user_set=parsed.user_set, environ={})


def test_option_map_fixed_keys_and_conversions():
    options = build_options(_state("--soc_version=Ascend310", "--status_check=1",
                                   "--enable_attr_compression=TRUE"))
    assert options["ge.socVersion"] == "Ascend310"
    assert options["ge.status_check"] == "true"
    assert options["ge.enableAttrCompression"] == "true"
    assert options["ge.enableCompressWeight"] == "0"
    assert options["ge.opSelectImplmode"] == "high_performance"
    assert options["ge.op_compiler_cache_mode"] == "enable"
    assert options["ge.optimizationSwitch"] == "forbidden_close_pass:on"
    assert options["ge.buildGraphMode"] == "offline"
    assert options["MULTI_THREAD_COMPILE"] == "1"
    assert "ge.deterministicLevel" not in options and "ge.oo.constantFolding" not in options
    names = json.loads(options["ge.optionNameMap"])
    assert names["ge.socVersion"] == "--soc_version" and names["ge.inputShape"] == "--input_shape"
    assert "ge.compile.h2dOverlappedWithCompute" not in names


def test_option_map_user_switch_and_registered_first_value():
    options = build_options(_state("--optimization_switch=A:off", "--oo_constant_folding=false",
                                   "--oo_constant_folding=true", "--deterministic_level=0"))
    assert options["ge.optimizationSwitch"] == "A:off;forbidden_close_pass:on"
    assert options["ge.oo.constantFolding"] == "false"
    assert options["ge.deterministicLevel"] == "0"


def test_name_table_covers_spec_keys():
    table = name_table()
    for key in ("input_format", "ge.exec.tuneDeviceIds", "ge.buildConfig", "ge.oo.level",
                "ge.topoSortingMode", "ge.exportCompileStat", "ge.autoMultistreamParallelMode"):
        assert key in table


def _raw(tmp_path, content, *args):
    path = tmp_path / "raw.json"
    path.write_text(json.dumps(content) if not isinstance(content, str) else content)
    state = _state(f"--raw_ge_options={path}", *args)
    apply_raw_options(state)
    return state


def test_raw_precedence_graph_over_session_over_global_and_cli_wins(tmp_path):
    state = _raw(tmp_path, {"compile options": {
        "global": {"ge.exec.precision_mode": "force_fp32", "ge.oo.level": "O1"},
        "graph": {"ge.exec.precision_mode": "allow_mix_precision",
                  "ge.exec.exclude_engines": "AiCore"},
        "session": {"ge.exec.precision_mode": "force_fp16"}}}, "--oo_level=O3")
    assert state.get("precision_mode") == "allow_mix_precision"
    assert state.get("oo_level") == "O3"
    options = build_options(state)
    assert options["ge.exec.exclude_engines"] == "AiCore"
    assert options["ge.exec.precision_mode"] == "allow_mix_precision"


@pytest.mark.parametrize("level", ["global", "session", "graph"])
def test_exclude_engines_accepted_at_any_level(tmp_path, level):
    state = _raw(tmp_path, {"compile options": {level: {"ge.exec.exclude_engines": "AiCpu"}}})
    assert build_options(state)["ge.exec.exclude_engines"] == "AiCpu"


@pytest.mark.parametrize("content,code,reason", [
    ("{bad", "E10032", "Invalid JSON format"),
    ([], "E10032", "The top-level JSON value must be an object"),
    ({}, "E10032", "The options JSON file must contain an object under the key (key=compile options)."),
    ({"compile options": {"op": {}}}, "E10032",
     "Unsupported compile options level (level=op). Supported levels are [global, session, graph]"),
    ({"compile options": {"graph": []}}, "E10032", "Compile options level (level=graph) must be an object"),
    ({"compile options": {"graph": {"": "1"}}}, "E10032",
     "Option key in level (level=graph) must not be empty"),
    ({"compile options": {"graph": {"ge.oo.level": 1}}}, "E10032",
     "Option (option=ge.oo.level) in level (level=graph) must be a string"),
    ({"compile options": {"session": {"ge.unknown": "1"}}}, "E10055",
     "RawGeOptions[ge.unknown:1] in level [session] is not supported in ATC. Please do not set it."),
    ({"compile options": {"global": {"ge.socVersion": "Ascend310"}}}, "E10001",
     "This option must be set explicitly by command line and cannot be replaced by raw_ge_options."),
])
def test_raw_errors(tmp_path, content, code, reason):
    with pytest.raises(GeError) as info:
        _raw(tmp_path, content)
    assert info.value.code == code
    assert info.value.params["reason"] == reason


def test_raw_values_validated_like_flags(tmp_path):
    with pytest.raises(GeError) as info:
        _raw(tmp_path, {"compile options": {"global": {"ge.op_compiler_cache_mode": "on"}}})
    assert info.value.code == "E10001" and info.value.params["parameter"] == "--op_compiler_cache_mode"


def test_raw_ignore_unsupported_warns(tmp_path):
    state = _raw(tmp_path, {"compile options": {"global": {"ge.unknown": "1"}}},
                 "--raw_ge_options_ignore_unsupported")
    assert [w.code for w in state.warnings] == ["WP0002"]
