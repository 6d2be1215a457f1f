"""The conformance probes of spec/atc-cli.md §13, every one, through `main_impl` in process.

Each row: probe number, arguments, whether the `...` line is printed, and the expected first
line of the error report (stamp normalised).  Probe 28 (a successful compile) runs against the
stand-in compiler API and, in `test_probe_28_real_compiler`, against the real
`ge.compiler.api`.  `test_entries_print_the_same` runs a few of them through every entry as a
real process and compares with the in-process run.
"""
from __future__ import annotations

import json

import pytest

from atc_entries import run_entry

START = "ATC start working now, please wait for a moment."
FAILED = "ATC run failed, Please check the detail log, Try 'atc --help' for more information"
SUCCESS = "ATC run success, welcome to the next use."
STAMP = "[PID: n] <time> "
VALID = ["--framework=5", "--model=m.onnx", "--output=out", "--soc_version=Ascend310"]
VALID7 = ["--mode=7", "--model=m.onnx", "--output=out", "--soc_version=Ascend310"]
E10054 = ("Invalid_Argument(E10054): The required parameter {} for ATC is empty. Another possible"
          " reason is that the values of some parameters are not enclosed by quotation marks "
          "(\"\").")
MODE_RANGE = ("Invalid_Argument(E10001): Value 9 for parameter --mode is invalid. Reason: The value"
              " is not within the range of values. The valid range is [0] [1] [3] [30] [5] [6] "
              "[7] .")
FRAMEWORK = ("Invalid_Argument(E10007): --framework is required. The value must be 0(Caffe) or "
             "1(MindSpore) or 3(TensorFlow) or 5(Onnx).")

# (probe, args, dots, headline after the stamp)
FAILURES = [
    (2, [], True, FRAMEWORK),
    (3, ["--mode=9"], False, MODE_RANGE),
    (7, ["--framework=2"], False, FRAMEWORK),
    (8, ["--log=verbose"], False, "Invalid_Argument(E10010): Value verbose for parameter --log is "
                                  "invalid."),
    (9, ["--status_check=2"], False, "Invalid_Argument(E10006): Value 2 for parameter "
                                     "--status_check is invalid. The value must be either 1 or 0."),
    (10, ["--help=maybe"], False, "Invalid_Argument(E10003): Value maybe for parameter --help is "
                                  "invalid. Reason: The value type must be [bool]."),
    (12, ["--mode=9", "--help"], False, MODE_RANGE),
    (13, ["--framework=5", "--model=m.onnx", "--output=out"], True,
     E10054.format("--soc_version")),
    (14, ["--framework=5", "--model=m.onnx", "--soc_version=Ascend310"], True,
     E10054.format("--output")),
    (15, ["--framework=5", "--output=out", "--soc_version=Ascend310"], True,
     E10054.format("--model")),
    (16, ["--framework=5", "--model=missing.onnx", "--output=out", "--soc_version=Ascend310"],
     True, "Invalid_Argument(E10001): Value missing.onnx for parameter --model is invalid. "
           "Reason: [Errno 2] No such file or directory"),
    (17, ["--framework=0", "--model=m.prototxt", "--output=out", "--soc_version=Ascend310"], True,
     "Invalid_Argument(E10008): --weight must not be empty when --framework is set to 0 (Caffe)."),
    (18, ["--framework=0", "--input_format=NHWC", "--weight=w.caffemodel", "--model=m.prototxt",
          "--output=o", "--soc_version=Ascend310"], True,
     "Invalid_Argument(E10001): Value NHWC for parameter --input_format is invalid. Reason: The "
     "value must be NCHW or ND in Caffe model."),
    (19, ["--mode=6", "--om=a.om", "--framework=3"], True,
     "Invalid_Argument(E10057): --om and --mode can only be used together."),
    (20, ["--mode=5", "--om=a.pb", "--json=a.json"], True,
     "Invalid_Argument(E10001): Value a.pb for parameter --om is invalid. Reason: If the value of "
     "--model is 5, --om only supports *.txt format."),
    (21, ["--mode=1", "--om=a.om"], True, "Invalid_Argument(E10004): Value for --json is empty."),
    (22, ["--mode=30", "--framework=5", "--model=m.onnx", "--output=o",
          "--soc_version=Ascend310"], True,
     "Not_Supported(E10055): The operation is not supported. Reason: Option soc_version  "
     "Ascend035 Ascend035A Ascend035B  and mode 30 must be set together."),
    (23, ["--singleop=op.json", "--framework=5"], True,
     "Invalid_Argument(E10001): Value op.json for parameter --singleop is invalid. Reason: When "
     "--singleop is specified, --display_model_info=1, --framework, --insert_op_conf, and --mode "
     "values other than 0 are not supported."),
    (24, VALID + ["--precision_mode=force_fp16", "--precision_mode_v2=fp16"], True,
     "Invalid_Argument(E10056): Cannot configure both parameters ge.exec.precision_mode and "
     "ge.exec.precision_mode_v2 simultaneously."),
    (25, VALID7 + ["--status_check=0"], True,
     "Invalid_Argument(E10001): Value 0 for parameter status_check is invalid. Reason: this "
     "option is not supported in om2 mode."),
    (26, VALID + ["--input_shape=x:1,3,224,224;"], True,
     "Invalid_Argument_Tensor_Input_Shape(E10002): Value x:1,3,224,224; for parameter "
     "--input_shape is invalid. Reason: The shape must contain two parts: name and value. The "
     "value must be formatted as \"input_name1:n1,c1,h1,w1\"."),
    (27, VALID + ["--dynamic_batch_size=1,2", "--dynamic_dims=1;2"], True,
     "Invalid_Argument_Tensor_Dynamic_Shape(E10009): --dynamic_batch_size, --dynamic_image_size,"
     " --input_shape_range, and --dynamic_dims are mutually exclusive."),
]


@pytest.mark.parametrize("probe,args,dots,headline", FAILURES, ids=[f"probe{r[0]}" for r in FAILURES])
def test_failure_probe(atc, probe, args, dots, headline):
    run = atc(*args)
    assert run.rc == 255
    assert run.stderr == ""
    lines = run.lines
    assert lines[0] == START
    assert lines[1] == ("..." if dots else FAILED)
    assert run.headline == STAMP + headline
    assert run.stdout.endswith("\n\n")
    assert "Traceback" not in run.stdout


@pytest.mark.parametrize("flag", ["--help", "-h", "--h", "-help", "--he"])
def test_probe_1_help(atc, flag):
    run = atc(flag)
    assert run.rc == 0 and run.stderr == ""
    assert run.lines[0] == START
    assert run.lines[1] == "usage: atc <args>"
    assert run.stdout.endswith("\n\n")
    assert "..." not in run.lines and SUCCESS not in run.stdout and "ATC run failed" not in run.stdout


def test_probe_4_unknown_flag(atc):
    run = atc("--foo=1")
    assert (run.rc, run.stderr) == (255, "ERROR: unknown command line flag 'foo'\n")
    assert run.stdout == f"{START}\n{FAILED}\n\n"


def test_probe_5_missing_value(atc):
    run = atc("--model")
    assert run.rc == 255
    assert run.stderr.startswith("ERROR: flag '--model' is missing its argument; flag description: ")
    assert run.stderr.count("\n") == 1
    assert run.stdout == f"{START}\n{FAILED}\n\n"


def test_probe_6_positional(atc):
    run = atc("foo")
    assert (run.rc, run.stderr) == (255, "ERROR: Non-option parameter: foo\n")
    assert run.stdout == f"{START}\n{FAILED}\n\n"


def test_probe_11_help_first_wins(atc):
    run = atc("--help", "--mode=9")
    assert run.rc == 0
    assert run.lines[1] == "usage: atc <args>"
    assert "E10001" not in run.stdout


def _assert_refused(run, feature):
    assert run.rc == 255 and run.stderr == ""
    assert run.lines[:3] == [START, "...", FAILED]
    assert run.headline.startswith(STAMP + f"Not_Supported(EP0002): {feature} is not supported by "
                                           "this implementation.")


@pytest.mark.parametrize("args,feature", [
    (VALID7, "--mode=7 (OM2 package)"),
    (["--mode=30", "--framework=5", "--model=m.onnx", "--output=o", "--soc_version=Ascend035"],
     "--mode=30 (execute-om for nano)"),
], ids=["mode7", "mode30"])
def test_refused_modes_and_frameworks(atc, args, feature):
    _assert_refused(atc(*args), feature)


def test_probe_28_success(atc, work, fake_api):
    run = atc(*VALID)
    assert (run.rc, run.stderr) == (0, "")
    assert run.stdout == f"{START}\n...\n{SUCCESS}\n\n"
    saved = json.loads((work / "out.om").read_text())
    assert saved["framework"] == 5 and saved["model"] == "m.onnx"
    assert saved["options"]["ge.socVersion"] == "Ascend310"


def test_probe_28_host_dependent_name(atc, work, fake_api):
    fake_api.host_platform_dependent = True
    run = atc(*VALID)
    assert run.rc == 0
    assert [p.name for p in work.glob("out_linux_*.om")]
    assert not (work / "out.om").exists()


def test_import_error_below_the_compiler_is_internal(atc, work, monkeypatch):
    """A module missing under ge.compiler is a fault of ours (E19999), not a user error."""
    from ge.compiler import api

    def compile_model_file(*args, **kwargs):
        raise ModuleNotFoundError("No module named 'ge.compiler.gone'", name="ge.compiler.gone")
    monkeypatch.setattr(api, "compile_model_file", compile_model_file)
    run = atc(*VALID)
    assert run.rc == 255
    assert run.lines[:4] == [START, "...", FAILED, "E19999: Internal error!"]
    assert "Traceback" not in run.stdout + run.stderr
    assert not (work / "out.om").exists()


def write_relu_model(path):
    from onnx import TensorProto, helper, save
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))


def test_probe_28_real_compiler(atc, work):
    """Probe 28 with the real ge.compiler.api: success line, exit 0, `<output>.om` written."""
    write_relu_model(work / "m.onnx")
    run = atc(*VALID)
    assert run.rc == 0, run.stdout + run.stderr
    assert run.lines[:3] == [START, "...", SUCCESS]
    assert run.stdout.endswith("\n\n") and "Traceback" not in run.stdout + run.stderr
    assert [p.name for p in work.glob("out*.om")] in (["out.om"], [p.name for p in
                                                                   work.glob("out_*_*.om")])


@pytest.mark.parametrize("args", [["--help"], [], ["--mode=9"], ["--foo=1"], ["foo"],
                                  VALID, ["--mode=1", "--om=a.om"]],
                         ids=["help", "none", "mode9", "unknown", "positional", "valid",
                              "mode1"])
def test_entries_print_the_same(entry, atc, work, args):
    """Every entry, as a real process, prints what main_impl prints in process (program name
    and stamps normalised); `valid` compiles a real model."""
    write_relu_model(work / "m.onnx")
    assert run_entry(entry, args, cwd=work) == atc(*args)
