"""Python build API over the same pipeline as ATC: options are GE option keys.

    model = build_model(graph, {"ge.socVersion": "Ascend310P3",
                                "ge.exec.exclude_engines": "AiCore"})
    save_model("net.om", model)

The option map is ATC's (`ge.atc.options`): the flag defaults, the caller's keys over them,
then ATC's finishing rules (a caller's `ge.optimizationSwitch` gets `forbidden_close_pass:on`
appended, as a `--optimization_switch` does), so a graph built here and the same graph saved as
AIR and compiled with `atc --framework=1` give the same OM.
"""
from __future__ import annotations

from ge.atc.options import default_options, finish_options
from ge.errors import GeError
from ge.graph import Graph

# A graph built in Python is compiled as ATC compiles an AIR file of it (--framework=1).
FRAMEWORK = 1


def build_model(graph: Graph, build_options: dict | None = None):
    """Compile `graph` (consumed: the pipeline rewrites it in place) into a model."""
    if not isinstance(graph, Graph):
        raise TypeError("graph must be a ge.graph.Graph")
    options = default_options()
    options["ge.frameworkType"] = str(FRAMEWORK)
    for key, value in (build_options or {}).items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise TypeError("build options must map str to str")
        options[key] = value
    finish_options(options)
    if not options.get("ge.socVersion"):
        raise GeError("E10054", {"parameter": "ge.socVersion"})
    from ge.compiler.api import build_graph
    return build_graph(graph, options, framework=FRAMEWORK)


def save_model(path: str, model) -> None:
    """Write the model as `<path>` (an .om suffix is added when missing)."""
    from ge.compiler.api import save_om
    if not path.endswith(".om"):
        path += ".om"
    save_om(path, model, atc_cmdline="")


__all__ = ["build_model", "save_model"]
