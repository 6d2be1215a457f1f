"""Every coded raise site below ge/ fills its code's template exactly (issue #10, 3.3).

The code table (ge/atc/codes.py) is the one text of every message: a raise site passes the
code and the template's parameters, nothing else.  This test reads the source (AST) of every
module under ge/, finds each `GeError(...)`, `warn(...)` and `error(...)` call whose code is a
literal (or a module-level constant naming one) and checks that the parameter names it passes
are exactly the placeholders of that code's template.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from ge.atc.codes import CODES, lookup, placeholders

REPO = Path(__file__).resolve().parents[1]
GE = REPO / "ge"
CALLS = {"GeError", "KernelBuildError", "warn", "error", "add"}   # add: ge.atc ErrorLog.add
CODE_RE = re.compile(r"(?:E1\d{4}|EZ\d{4}|EP\d{4}|WP\d{4})")


@dataclass(frozen=True)
class Site:
    where: str            # path:line
    code: str
    keys: frozenset | None    # None: the parameters are not a literal dict / keywords
    extra: str = ""           # what else the call passes (a ready message, ...)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _constants(tree: ast.Module) -> dict[str, str]:
    """Module-level NAME = "<code>" assignments."""
    found = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Constant):
            value = stmt.value.value
            if isinstance(value, str) and CODE_RE.fullmatch(value):
                for target in stmt.targets:
                    if isinstance(target, ast.Name):
                        found[target.id] = value
    return found


def _imported_names(tree: ast.Module, module: str, is_package: bool) -> dict[str, tuple]:
    """alias -> (module it comes from, name there), for `from X import NAME` statements."""
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = module.split(".") if is_package else module.split(".")[:-1]
                package = package[:len(package) - (node.level - 1)]
                base = ".".join(package + ([base] if base else []))
            for alias in node.names:
                names[alias.asname or alias.name] = (base, alias.name)
    return names


def _code_of(arg: ast.expr, local: dict, imported: dict, constants: dict) -> str | None:
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value if CODE_RE.fullmatch(arg.value) else None
    if isinstance(arg, ast.Name):
        if arg.id in local:
            return local[arg.id]
        origin = imported.get(arg.id)
        if origin is not None:
            return constants.get(origin[0], {}).get(origin[1])
    return None


def _params_of(call: ast.Call) -> tuple[frozenset | None, str]:
    keys: set = set()
    extra = []
    params = call.args[1] if len(call.args) > 1 else None
    if len(call.args) > 2:
        extra.append("a third positional argument")
    for kw in call.keywords:
        if kw.arg in ("args", "params"):
            params = kw.value
        elif kw.arg is None:
            return None, "**keywords"
        else:
            extra.append(f"keyword {kw.arg}=")
    if params is not None:
        if not isinstance(params, ast.Dict) or any(
                not (isinstance(k, ast.Constant) and isinstance(k.value, str))
                for k in params.keys):
            return None, ", ".join(extra)
        keys |= {k.value for k in params.keys}
    return frozenset(keys), ", ".join(extra)


def _call_name(call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Name):
        return call.func.id
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return None


def raise_sites() -> list[Site]:
    trees = {}
    for path in sorted(GE.rglob("*.py")):
        rel = path.relative_to(REPO).as_posix()
        trees[rel] = (path, ast.parse(path.read_text(encoding="utf-8"), filename=rel))
    constants = {_module_name(p): _constants(t) for p, t in trees.values()}
    sites = []
    for rel, (path, tree) in trees.items():
        module = _module_name(path)
        local = constants[module]
        imported = _imported_names(tree, module, path.name == "__init__.py")
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and _call_name(node) in CALLS and node.args):
                continue
            code = _code_of(node.args[0], local, imported, constants)
            if code is None:
                continue
            keys, extra = _params_of(node)
            sites.append(Site(f"{rel}:{node.lineno}", code, keys, extra))
    return sites


SITES = raise_sites()


def test_the_scan_finds_the_raise_sites():
    # a scan that silently finds nothing would pass everything below
    assert len(SITES) > 150
    assert {"E10001", "E10041", "EP0002", "WP0010", "EP0405"} <= {s.code for s in SITES}


@pytest.mark.parametrize("site", SITES, ids=lambda s: f"{s.where}-{s.code}")
def test_raise_site_fills_its_template(site: Site):
    entry = lookup(site.code)
    assert entry is not None, f"{site.where}: {site.code} is not in ge/atc/codes.py"
    assert not site.extra, f"{site.where}: passes {site.extra}; the code table is the one text"
    assert site.keys is not None, \
        f"{site.where}: parameters must be a literal dict with string keys, so they can be checked"
    wanted = placeholders(site.code)
    assert site.keys == wanted, (
        f"{site.where}: {site.code} gets {sorted(site.keys)}, its template needs {sorted(wanted)}")


def test_every_code_in_the_table_is_raised_somewhere():
    raised = {s.code for s in SITES}
    assert [c.code for c in CODES if c.code not in raised] == []


def test_a_detail_is_the_first_traceback_line_under_the_cann_headline():
    from ge.atc.report import ErrorLog, render_errors
    log = ErrorLog()
    log.add("E10041", {"file": "m.onnx", "reason": "the file is empty"})
    log.add("E10001", {"value": "x", "parameter": "--y", "reason": "z"})
    lines = render_errors(log)
    assert lines[0].endswith("Invalid_Argument_Model(E10041): Failed to load the model from "
                             "m.onnx.")
    assert lines[1:] == ["        Solution: Check that the file is a model of the selected kind.",
                         "TraceBack (most recent call last):",
                         "        Reason: the file is empty.",
                         "        Value x for parameter --y is invalid. Reason: z",
                         ""]


def test_internal_records_print_their_detail_too():
    from ge.atc.report import ErrorLog, render_errors
    log = ErrorLog()
    log.add("E19999", {"reason": "The traceback is in the log file /tmp/x.log."})
    assert render_errors(log) == ["E19999: Internal error!",
                                  "        Unknown error occurred. Please check the log.",
                                  "        The traceback is in the log file /tmp/x.log.", ""]


def test_a_coded_error_survives_pickling():
    """Kernel builds raise in worker processes: the code and parameters must come back."""
    import pickle
    from ge.errors import GeError
    error = pickle.loads(pickle.dumps(GeError("E13001", {"file": "f", "reason": "r"})))
    assert (error.code, error.params) == ("E13001", {"file": "f", "reason": "r"})
    assert str(error) == "E13001: Failed to open file f. Reason: r."
