"""A stand-in for ge.compiler.api used by the ATC dispatch tests (GE_ATC_COMPILER_API).

It records what ATC hands over: the OM it "saves" is a JSON document of the arguments, so tests
can check the option map and the command line end to end through a real process.
"""
from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass


@dataclass
class CompiledModel:
    model_path: str
    framework: int
    options: dict
    weight_path: str | None
    host_platform_dependent: bool = False


def compile_model_file(model_path, framework, options, weight_path=None, graph_name=None):
    if os.environ.get("FAKE_API_LOG") == "1":
        logging.getLogger("ge.compiler").info("fake compile of %s", model_path)
    if os.environ.get("FAKE_API_INTERRUPT") == "1":
        raise KeyboardInterrupt
    return CompiledModel(model_path, framework, dict(options), weight_path,
                         os.environ.get("FAKE_API_HOST_DEPENDENT") == "1")


def save_om(path, compiled, atc_cmdline):
    with open(path, "w", encoding="utf-8", errors="surrogateescape") as handle:
        json.dump({"model": compiled.model_path, "framework": compiled.framework,
                   "options": compiled.options, "atc_cmdline": atc_cmdline}, handle)


def om_to_json(om_path):
    return json.dumps({"om": os.path.basename(om_path)})


def model_to_json(model_path, framework):
    return json.dumps({"model": os.path.basename(model_path), "framework": framework})


def pbtxt_to_json(path):
    return json.dumps({"pbtxt": os.path.basename(path)})


def precheck(model_path, framework, options):
    failed = os.environ.get("FAKE_API_PRECHECK_FAIL") == "1"
    return {"name": "m", "result": "failed" if failed else "success", "total": 1,
            "pass": 0 if failed else 1, "fail": 1 if failed else 0, "op": []}


def om_info(om_path):
    return {"atc_cmdline": "atc --recorded", "atc_version": "0.1.0", "soc_version": "Ascend310",
            "framework_type": 5, "memory_size": 1024, "weight_size": 64, "stream_num": 1,
            "event_num": 0, "modeldef_size": 10, "weight_data_size": 64, "tbe_kernels_size": 0,
            "cust_aicpu_kernel_store_size": 0, "task_info_size": 3, "so_store_size": 0,
            "om_info_list": [64, 0, 0, 3, 0]}
