"""Bad input through real processes: spec codes, exit 255, no traceback (§3, §7.5)."""
from __future__ import annotations

import os

import pytest

from test_probes import FAILED, START, STAMP, VALID


def _assert_coded(run, headline: str, dots: bool = True):
    assert run.rc == 255
    assert run.lines[:2] == [START, "..." if dots else FAILED]
    assert run.headline == STAMP + headline
    assert "Traceback" not in run.stdout + run.stderr


@pytest.mark.parametrize("args,stderr", [
    (["--unknown"], "ERROR: unknown command line flag 'unknown'\n"),
    (["--mod=1"], "ERROR: unknown command line flag 'mod'\n"),
    (["-x"], "ERROR: unknown command line flag 'x'\n"),
    (["--framework=5", "stray", "--model=m.onnx"], "ERROR: Non-option parameter: stray\n"),
    (["--soc_version"], "ERROR: flag '--soc_version' is missing its argument; flag description: "
                        "Target SoC name, for example Ascend310.\n"),
])
def test_parser_diagnostics(atc, args, stderr):
    run = atc(*args)
    assert (run.rc, run.stderr) == (255, stderr)
    assert run.stdout == f"{START}\n{FAILED}\n\n"


@pytest.mark.parametrize("args,headline", [
    (["--mode="], "Invalid_Argument(E10001): Value  for parameter --mode is invalid. Reason: The "
                  "value is not within the range of values. The valid range is [0] [1] [3] [30] "
                  "[5] [6] [7] ."),
    (["--op_compiler_cache_mode=on"], "Invalid_Argument(E10001): Value on for parameter "
     "--op_compiler_cache_mode is invalid. Reason: The value is not within the range of values. "
     "The valid range is [disable] [enable] [force] ."),
    (["--external_weight=3"], "Invalid_Argument(E10006): Value 3 for parameter --external_weight "
                              "is invalid. The value must be either 1 or 0."),
    (["--raw_ge_options_ignore_unsupported=2"], "Invalid_Argument(E10003): Value 2 for parameter "
     "--raw_ge_options_ignore_unsupported is invalid. Reason: The value type must be [bool]."),
])
def test_bad_values(atc, args, headline):
    _assert_coded(atc(*args), headline, dots=False)


def test_empty_model_value_is_required_error(atc):
    run = atc("--framework=5", "--model=", "--output=out", "--soc_version=Ascend310")
    assert "(E10054): The required parameter --model for ATC is empty." in run.headline


def test_unknown_soc(atc):
    run = atc("--framework=5", "--model=m.onnx", "--output=out", "--soc_version=Ascend999")
    assert run.headline.startswith(STAMP + "Invalid_Argument(E10001): Value Ascend999 for "
                                           "parameter --soc_version is invalid. Reason: The SoC "
                                           "is unknown. The valid values are: Ascend310, ")


def test_path_with_space_is_rejected(atc, work):
    (work / "my model.onnx").write_bytes(b"x")
    run = atc("--framework=5", "--model=my model.onnx", "--output=out", "--soc_version=Ascend310")
    _assert_coded(run, "Invalid_Argument(E10001): Value my model.onnx for parameter --model is "
                       "invalid. Reason: The path can only contain 'a-z' 'A-Z' '0-9' '-' '.' '_' "
                       "and Chinese characters.")


def test_non_utf8_path_is_rejected_and_echoed_byte_for_byte(atc, work):
    name = os.fsdecode(b"m\xff.onnx")
    (work / name).write_bytes(b"x")
    run = atc("--framework=5", f"--model={name}", "--output=out", "--soc_version=Ascend310")
    _assert_coded(run, f"Invalid_Argument(E10001): Value {name} for parameter --model is "
                       "invalid. Reason: The path can only contain 'a-z' 'A-Z' '0-9' '-' '.' '_' "
                       "and Chinese characters.")


def test_unreadable_model(work, monkeypatch):
    """In process: the test may run as root, who can read a chmod-0 file."""
    from ge.atc import paths
    from ge.errors import GeError
    monkeypatch.setattr(paths.os, "access", lambda path, mode: False)
    with pytest.raises(GeError) as info:
        paths.check_input_path(str(work / "m.onnx"), "model")
    assert (info.value.code, info.value.params["reason"]) == ("E10001",
                                                              "[Errno 13] Permission denied")


def test_directory_as_model(atc, work):
    (work / "d.onnx").mkdir()
    run = atc("--framework=5", "--model=d.onnx", "--output=out", "--soc_version=Ascend310")
    _assert_coded(run, "Invalid_Argument(E10001): Value d.onnx for parameter --model is invalid. "
                       "Reason: [Errno 21] Is a directory")


def test_output_trailing_slash(atc):
    run = atc("--framework=5", "--model=m.onnx", "--output=out/", "--soc_version=Ascend310")
    _assert_coded(run, "Invalid_Argument(E10022): Path out/ for parameter --output does not "
                       "include the file name.")


def test_explicitly_empty_check_report_quirk(atc):
    run = atc(*VALID, "--check_report=")
    assert run.headline == STAMP + "Invalid_Argument(E10004): Value for ----check_report is empty."


def test_missing_raw_options_file_no_dots(atc):
    run = atc(*VALID, "--raw_ge_options=nothere.json")
    _assert_coded(run, "Invalid_Argument(E10001): Value nothere.json for parameter "
                       "--raw_ge_options is invalid. Reason: [Errno 2] No such file or directory",
                  dots=False)


def test_raw_options_cannot_set_soc(atc, work):
    (work / "raw.json").write_text('{"compile options": {"global": {"ge.socVersion": "x"}}}')
    run = atc("--framework=5", "--model=m.onnx", "--output=out", "--raw_ge_options=raw.json")
    _assert_coded(run, "Invalid_Argument(E10001): Value x for parameter --soc_version is invalid."
                       " Reason: This option must be set explicitly by command line and cannot be"
                       " replaced by raw_ge_options.", dots=False)


@pytest.mark.parametrize("args,headline", [
    (["--output_type=FP8E5M2"], "Not_Supported(EP0002): --output_type=FP8E5M2 is not supported "
     "by this implementation. Reason: it is not implemented for the host CPU target."),
])
def test_refused_flag_values(atc, args, headline):
    _assert_coded(atc(*VALID, *args), headline)


def test_deterministic_pair_rule(atc):
    run = atc(*VALID, "--deterministic=1", "--deterministic_level=0")
    assert run.headline == STAMP + ("Invalid_Argument(E10001): Value 1 / 0 for parameter "
                                    "ge.deterministic / ge.deterministicLevel is invalid. Reason: "
                                    "must both be 0 or both non-zero.")


def test_mode30_display_model_info(atc):
    run = atc("--mode=30", "--framework=5", "--model=m.onnx", "--output=o",
              "--soc_version=Ascend035", "--display_model_info=1")
    assert "Parameter display_model_info does not support execute-om for nano." in run.headline
