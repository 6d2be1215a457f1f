"""Each reserved attribute name is spelled once, in ge/graph/attr_names.py: every other module
imports the constant (a re-typed string would drift silently)."""
from __future__ import annotations

import ast
from pathlib import Path

from ge.graph.attr_names import RESERVED

GE = Path(__file__).resolve().parents[1] / "ge"


def test_reserved_names_are_spelled_only_in_attr_names():
    assert len(set(RESERVED)) == len(RESERVED) and "_kernelname" in RESERVED
    found = []
    for path in sorted(GE.rglob("*.py")):
        if path.name == "attr_names.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in RESERVED:
                found.append(f"{path.relative_to(GE.parent)}:{node.lineno} {node.value!r}")
    assert not found, "re-typed reserved attribute names:\n" + "\n".join(found)
