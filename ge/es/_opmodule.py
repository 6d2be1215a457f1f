"""Shared body of the op modules `ge.es.math`, `ge.es.nn` and `ge.es.all`.

Each is a thin module whose attributes are resolved from the op registry on access (PEP 562),
so ops registered after import still appear.  Every registered op is visible in all three:
CANN splits ops by op package (math, nn), and a superset keeps every sample import working.
"""
from __future__ import annotations

from ge.ops import registry

from ._ops import op_function

__all__ = ["resolve", "names"]


def names() -> list[str]:
    return sorted(registry.all_ops())


def resolve(module_name: str, attr: str):
    if attr == "__all__":
        return names()
    opdef = registry.all_ops().get(attr)
    if opdef is None or attr.startswith("_"):
        raise AttributeError(f"module {module_name!r} has no op {attr!r}")
    return op_function(opdef)
