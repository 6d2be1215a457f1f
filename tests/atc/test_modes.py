"""Mode dispatch, success output, warnings, logs and internal faults (main_impl in process).

The compiler API is the stand-in `fake_api` (atc_entries.py), so these tests check what ATC
does around the hand-over, independent of the compiler.
"""
from __future__ import annotations

import json

import pytest

from test_probes import FAILED, START, STAMP, SUCCESS, VALID

pytestmark = pytest.mark.usefixtures("fake_api")


def test_option_map_and_cmdline_reach_the_compiler(atc, work):
    run = atc(*VALID, "--optimization_switch=P:off", "--op_compiler_cache_mode=force")
    assert run.rc == 0
    saved = json.loads((work / "out.om").read_text())
    options = saved["options"]
    assert options["ge.optimizationSwitch"] == "P:off;forbidden_close_pass:on"
    assert options["ge.op_compiler_cache_mode"] == "force"
    assert options["ge.frameworkType"] == "5"
    assert saved["atc_cmdline"].endswith(" ".join(VALID + ["--optimization_switch=P:off",
                                                           "--op_compiler_cache_mode=force"]))


def test_no_effect_flag_warns_after_success(atc):
    run = atc(*VALID, "--enable_small_channel=1")
    assert run.rc == 0
    assert run.lines[:3] == [START, "...", SUCCESS]
    assert run.lines[3] == STAMP + ("Option_Without_Effect(WP0001): Option "
                                    "--enable_small_channel=1 is accepted but has no effect in "
                                    "this implementation (the target is the host CPU).")
    assert run.stdout.endswith("\n\n")


def test_exclude_engines_via_raw_options(atc, work):
    (work / "raw.json").write_text(json.dumps(
        {"compile options": {"session": {"ge.exec.exclude_engines": "AiCore|AiVec"}}}))
    run = atc(*VALID, "--raw_ge_options=raw.json")
    assert run.rc == 0
    options = json.loads((work / "out.om").read_text())["options"]
    assert options["ge.exec.exclude_engines"] == "AiCore|AiVec"


def test_display_model_info_after_build(atc):
    run = atc(*VALID, "--display_model_info=1")
    assert run.rc == 0
    assert run.lines[1:8] == [
        "============ Display Model Info start ============",
        "Original Atc command line: atc --recorded",
        "system   info: atc_version[0.1.0], soc_version[Ascend310], framework_type[5].",
        "resource info: memory_size[1024 B], weight_size[64 B], stream_num[1], event_num[0].",
        "om       info: modeldef_size[10 B], weight_data_size[64 B], tbe_kernels_size[0 B], "
        "cust_aicpu_kernel_store_size[0 B], task_info_size[3 B], so_store_size[0 B].",
        "============ Display Model Info end   ============",
        "...",
    ]


def test_mode6(atc):
    run = atc("--mode=6", "--om=a.om")
    assert run.rc == 0
    assert run.lines[1] == "============ Display Model Info start ============"
    assert run.lines[-4:] == ["...", SUCCESS, "", ""]


def test_mode1_om_and_original(atc, work):
    assert atc("--mode=1", "--om=a.om", "--json=out/a.json").rc == 0
    assert json.loads((work / "out" / "a.json").read_text()) == {"om": "a.om"}
    assert (work / "out" / "a.json").stat().st_mode & 0o777 == 0o600
    assert atc("--mode=1", "--framework=5", "--om=m.onnx", "--json=b.json").rc == 0
    assert json.loads((work / "b.json").read_text()) == {"model": "m.onnx", "framework": 5}


def test_mode1_rejects_framework_1(atc):
    run = atc("--mode=1", "--framework=1", "--om=a.om", "--json=a.json")
    assert "The framework must be selected from {0(Caffe), 3(TensorFlow), 5(Onnx)} when model " \
           "is set to 1(JSON)." in run.headline


def test_mode5(atc, work):
    assert atc("--mode=5", "--om=g.txt", "--json=g.json").rc == 0
    assert json.loads((work / "g.json").read_text()) == {"pbtxt": "g.txt"}


def test_mode3_report_under_work_path(atc, work):
    run = atc("--mode=3", "--framework=5", "--model=m.onnx", "--soc_version=Ascend310",
              env={"ASCEND_WORK_PATH": str(work / "wp")})
    assert run.rc == 0
    assert json.loads((work / "wp" / "check_result.json").read_text())["result"] == "success"
    assert not (work / "check_result.json").exists()


def test_mode3_failed_report(atc, work, fake_api):
    fake_api.precheck_result = "failed"
    run = atc("--mode=3", "--framework=5", "--model=m.onnx", "--soc_version=Ascend310")
    assert run.rc == 255
    assert "(EP0003)" in run.headline
    assert (work / "check_result.json").exists()


def test_internal_fault_is_e19999_with_traceback_in_log_only(atc, work, monkeypatch):
    from ge.compiler import api
    monkeypatch.setattr(api, "compile_model_file", lambda *args, **kwargs: 1 // 0)
    run = atc(*VALID)
    assert run.rc == 255
    assert run.lines[:4] == [START, "...", FAILED, "E19999: Internal error!"]
    assert "Traceback" not in run.stdout + run.stderr
    logs = list((work / "ascend" / "log" / "debug" / "plog").glob("plog-*.log"))
    assert len(logs) == 1 and "ZeroDivisionError" in logs[0].read_text()
    assert str(logs[0]) in run.stdout


def test_log_level_and_stdout_printing(atc, work):
    run = atc("--log=info", *VALID, env={"ASCEND_SLOG_PRINT_TO_STDOUT": "1"})
    assert run.rc == 0
    assert any("fake compile of m.onnx" in line for line in run.lines)
    assert list((work / "ascend" / "log" / "debug" / "plog").glob("plog-*.log"))
    quiet = atc(*VALID, env={"ASCEND_SLOG_PRINT_TO_STDOUT": "1"})
    assert "fake compile" not in quiet.stdout


def test_keyboard_interrupt_is_a_failure(atc, work, monkeypatch):
    from ge.compiler import api

    def compile_model_file(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(api, "compile_model_file", compile_model_file)
    run = atc(*VALID)
    assert run.rc == 255 and run.lines[:3] == [START, "...", FAILED]
    assert "Interrupted(EP0004): The run was interrupted by SIGINT." in run.lines[3]
    assert "Traceback" not in run.stdout + run.stderr
    assert not (work / "out.om").exists()


def test_model_info_lines_from_om_info_facts():
    from ge.atc.modes import model_info_lines
    info = {"atc_cmdline": "atc --x", "atc_version": "1", "soc_version": "S",
            "framework_type": "Onnx", "memory_size": 10, "weight_size": -1, "stream_num": 1,
            "event_num": 0, "modeldef_size": 5, "om_info_list": [1, 2, 3, 4, 0],
            "weight_data_size": 1, "tbe_kernels_size": 2, "cust_aicpu_kernel_store_size": 3,
            "task_info_size": 4, "so_store_size": 0}
    lines = model_info_lines(info, "ignored")
    assert lines[3] == ("resource info: memory_size[10 B], weight_size[-1 B], stream_num[1], "
                        "event_num[0].")
    assert lines[4] == ("om       info: modeldef_size[5 B], weight_data_size[1 B], "
                        "tbe_kernels_size[2 B], cust_aicpu_kernel_store_size[3 B], "
                        "task_info_size[4 B], so_store_size[0 B].")
    info["om_info_list"] = [1, 2]
    assert "has 2 entries" in model_info_lines(info, "")[4]
    info["om_info_list"] = None
    assert "om_info_list not found" in model_info_lines(info, "")[4]
