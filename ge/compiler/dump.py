"""Graph dumps after each stage (DUMP_GE_GRAPH, DUMP_GRAPH_LEVEL, DUMP_GRAPH_FORMAT,
DUMP_GRAPH_PATH), as `ge_proto` text (mode 5 reads it), ONNX (Netron opens it) and readable text.

File names: ge_proto_<seq>_<graph>_<stage>.txt, ge_onnx_<seq>_<graph>_<stage>.pbtxt,
ge_readable_<seq>_<graph>_<stage>.txt, in the dump directory.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from ge.fsutil import make_dirs, publish
from ge.graph import DumpFormat, Graph

# DUMP_GRAPH_LEVEL=2 ("whitelist", the default) dumps these stages only.
WHITELIST = ("PreRunBegin", "RunCustomPassBeforeInfershape", "RunCustomPass_AfterInferShape",
             "RunCustomPassAfterBuiltinFusionPass", "RunCustomPassAfterOriginGraphOptimize",
             "MemoryPlanning")
FORMATS = {"ge_proto": ("ge_proto", "txt", DumpFormat.kTxt),
           "onnx": ("ge_onnx", "pbtxt", DumpFormat.kOnnx),
           "readable": ("ge_readable", "txt", DumpFormat.kReadable)}


def dump_dir() -> str:
    for var in ("ASCEND_DUMP_PATH", "DUMP_GRAPH_PATH"):
        if os.environ.get(var):
            return os.path.join(os.environ[var], f"pid_{os.getpid()}_deviceid_0")
    return os.environ.get("ASCEND_WORK_PATH") or os.getcwd()


@dataclass
class GraphDumper:
    graph_name: str
    level: str = ""           # "" = dumps off
    content: int = 0          # 1 full, 2 without weights, 3 structure only
    formats: tuple = ()
    seq: int = 0
    written: list = field(default_factory=list)

    @classmethod
    def from_env(cls, graph_name: str) -> "GraphDumper":
        raw = os.environ.get("DUMP_GE_GRAPH", "").strip()
        if raw not in ("1", "2", "3"):
            return cls(graph_name)
        fmts = os.environ.get("DUMP_GRAPH_FORMAT", "ge_proto|onnx")
        chosen = tuple(f for f in (x.strip() for x in fmts.split("|")) if f in FORMATS)
        level = os.environ.get("DUMP_GRAPH_LEVEL", "2").strip() or "2"
        return cls(graph_name, level, int(raw), chosen or ("ge_proto", "onnx"))

    def wanted(self, stage: str) -> bool:
        if not self.level:
            return False
        if self.level == "1":
            return True
        if self.level == "2":
            return stage in WHITELIST
        if self.level == "3":
            return stage == "MemoryPlanning"
        if self.level == "4":
            return stage == "PreRunBegin"
        return any(tok and tok in stage for tok in self.level.split("|"))

    def dump(self, graph: Graph, stage: str) -> None:
        if not self.wanted(stage):
            return
        from ge.graph.serialize import graph_to_text
        directory = dump_dir()
        make_dirs(directory)
        self.seq += 1
        for fmt in self.formats:
            prefix, ext, kind = FORMATS[fmt]
            if kind == DumpFormat.kReadable:
                data = str(graph)
            else:
                data = graph_to_text(graph, kind)
            path = os.path.join(directory,
                                f"{prefix}_{self.seq:05d}_{self.graph_name}_{stage}.{ext}")
            publish(path, data, mode=0o644)
            self.written.append(path)
