"""Python build API over the same pipeline as ATC: options are GE option keys.

    model = build_model(graph, {"ge.socVersion": "Ascend310P3",
                                "ge.exec.exclude_engines": "AiCore"})
    save_model("net.om", model)
"""
from __future__ import annotations

from ge.errors import GeError
from ge.graph import Graph

DEFAULT_OPTIONS = {
    "ge.buildGraphMode": "offline",
    "ge.op_compiler_cache_mode": "enable",
    "ge.optimizationSwitch": "forbidden_close_pass:on",
}


def build_model(graph: Graph, build_options: dict | None = None):
    """Compile `graph` (consumed: the pipeline rewrites it in place) into a model."""
    if not isinstance(graph, Graph):
        raise TypeError("graph must be a ge.graph.Graph")
    options = dict(DEFAULT_OPTIONS)
    for key, value in (build_options or {}).items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise TypeError("build options must map str to str")
        options[key] = value
    if not options.get("ge.socVersion"):
        raise GeError("E10054", {"parameter": "ge.socVersion"},
                      message="option ge.socVersion is required")
    from ge.compiler.api import build_graph
    return build_graph(graph, options, framework=1)


def save_model(path: str, model) -> None:
    """Write the model as `<path>` (an .om suffix is added when missing)."""
    from ge.compiler.api import save_om
    if not path.endswith(".om"):
        path += ".om"
    save_om(path, model, atc_cmdline="")


__all__ = ["build_model", "save_model"]
