"""Readable text of a graph (str(graph), DumpFormat.kReadable)."""
from __future__ import annotations

from ge.fsutil import publish


def readable(graph) -> str:
    lines = [f"graph {graph.name} {{"]
    for n in graph.nodes:
        ins = ", ".join("-" if e is None else f"{e[0].name}:{e[1]}" for e in n.inputs())
        outs = ", ".join(f"{list(n.out_desc(i).shape)}:{n.out_desc(i).data_type.name}"
                         for i in range(n.num_outputs))
        lines.append(f"  {n.name} = {n.type}({ins}) -> [{outs}]")
    lines.append("}")
    return "\n".join(lines)


def dump_text(graph, fmt) -> str:
    from .types import DumpFormat
    if fmt == DumpFormat.kReadable:
        return readable(graph)
    from .serialize import graph_to_text
    return graph_to_text(graph, fmt)


def dump_file(graph, fmt, suffix: str = "") -> None:
    from .types import DumpFormat
    # CANN's dump names: ge_proto_*.txt (mode 5 reads it), ge_onnx_*.pbtxt (Netron opens it)
    prefix, ext = {DumpFormat.kReadable: ("ge_readable", "txt"), DumpFormat.kTxt: ("ge_proto", "txt"),
                   DumpFormat.kOnnx: ("ge_onnx", "pbtxt")}[fmt]
    path = f"{prefix}_{graph.name}{suffix}.{ext}"
    publish(path, dump_text(graph, fmt), mode=0o644)
