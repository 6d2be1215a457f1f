"""DUMP_GE_GRAPH / DUMP_GRAPH_PATH write a ge_proto text and an ONNX dump per stage, and
`--mode=5` turns a ge_proto dump into the same JSON shape as mode 1."""
from __future__ import annotations

import json
import re

import onnx
from google.protobuf import text_format

from ge.compiler.pipeline import STAGES
from ge.proto.ge_ir import ModelDef

from .conftest import compile_args

STAGES_DUMPED = ["PreRunBegin"] + [name for name, _ in STAGES]
_NAME = re.compile(r"^ge_(proto|onnx)_(\d{5})_(.+)\.(txt|pbtxt)$")


def _parse(file_name: str) -> tuple:
    """(kind, seq, stage) of a dump file name ge_<kind>_<seq>_<graph>_<stage>.<ext>."""
    match = _NAME.match(file_name)
    assert match, file_name
    rest = match.group(3)
    stage = max((s for s in STAGES_DUMPED if rest.endswith("_" + s)), key=len, default=None)
    assert stage, file_name
    return match.group(1), int(match.group(2)), stage


def _dumps(atc_main, model_path, tmp_path, level: str) -> tuple:
    work = tmp_path / "work"
    work.mkdir()
    env = {"DUMP_GE_GRAPH": "1", "DUMP_GRAPH_PATH": str(tmp_path / "dumps"),
           "DUMP_GRAPH_LEVEL": level}
    run = atc_main(*compile_args(model_path("bert_ci"), "m"), cwd=work, env=env)
    assert run.rc == 0, run.text
    (directory,) = (tmp_path / "dumps").iterdir()          # pid_<pid>_deviceid_0
    assert re.fullmatch(r"pid_\d+_deviceid_0", directory.name)
    return work, directory


def test_every_stage_dumped_as_ge_proto_and_onnx(atc_main, model_path, tmp_path):
    work, directory = _dumps(atc_main, model_path, tmp_path, level="1")
    assert (work / "m.om").exists()
    files = sorted(p.name for p in directory.iterdir())
    assert not [f for f in files if f.endswith(".tmp")]
    stages = STAGES_DUMPED
    by_kind = {"proto": [], "onnx": []}
    for name in files:
        kind, seq, stage = _parse(name)
        by_kind[kind].append((seq, stage))
    for kind, entries in by_kind.items():
        assert [stage for _, stage in sorted(entries)] == stages, kind
        assert [seq for seq, _ in sorted(entries)] == list(range(1, len(stages) + 1))
    # each dump parses as what it claims to be, and both views of a stage agree
    for seq, stage in sorted(by_kind["proto"]):
        (proto_file,) = directory.glob(f"ge_proto_{seq:05d}_*_{stage}.txt")
        (onnx_file,) = directory.glob(f"ge_onnx_{seq:05d}_*_{stage}.pbtxt")
        model_def = text_format.Parse(proto_file.read_text(), ModelDef())
        onnx_model = text_format.Parse(onnx_file.read_text(), onnx.ModelProto())
        ops = [(op.name, op.type) for op in model_def.graph[0].op]
        assert ops and [n.name for n in onnx_model.graph.node] == [name for name, _ in ops]
        assert [n.op_type for n in onnx_model.graph.node] == [t for _, t in ops]
    # the graph changes along the way: the first and last dumps differ
    first = text_format.Parse(next(directory.glob("ge_proto_00001_*.txt")).read_text(),
                              ModelDef())
    last = text_format.Parse(sorted(directory.glob("ge_proto_*.txt"))[-1].read_text(),
                             ModelDef())
    assert {op.type for op in first.graph[0].op} != {op.type for op in last.graph[0].op}


def test_default_level_dumps_the_whitelist(atc_main, model_path, tmp_path):
    from ge.compiler.dump import WHITELIST
    _, directory = _dumps(atc_main, model_path, tmp_path, level="")
    stages = {_parse(p.name)[2] for p in directory.iterdir()}
    assert stages == set(WHITELIST)


def test_mode5_reads_a_ge_proto_dump(atc_main, model_path, tmp_path):
    work, directory = _dumps(atc_main, model_path, tmp_path, level="3")
    (dump,) = directory.glob("ge_proto_*_MemoryPlanning.txt")
    out = work / "dump.json"
    run = atc_main("--mode=5", f"--om={dump}", f"--json={out}", cwd=work)
    assert run.rc == 0, run.text
    seen = json.loads(out.read_text())
    model_def = text_format.Parse(dump.read_text(), ModelDef())
    assert [(op["name"], op["type"]) for op in seen["graph"][0]["op"]] == \
        [(op.name, op.type) for op in model_def.graph[0].op]
    # the same graph as the OM's mode-1 JSON
    om_json = work / "om.json"
    run = atc_main("--mode=1", f"--om={work / 'm.om'}", f"--json={om_json}",
                   cwd=work)
    assert run.rc == 0, run.text
    from_om = json.loads(om_json.read_text())
    assert [(op["name"], op["type"]) for op in from_om["graph"][0]["op"]] == \
        [(op["name"], op["type"]) for op in seen["graph"][0]["op"]]


def test_mode5_refuses_a_non_dump(atc_main, tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("this is { not a ge_proto dump\n")
    run = atc_main("--mode=5", f"--om={bad}", f"--json={tmp_path / 'x.json'}",
                   cwd=tmp_path)
    assert run.rc == 255 and "E10041" in run.stdout, run.text
    assert not (tmp_path / "x.json").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.txt"]
