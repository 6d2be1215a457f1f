"""Op roles: the registry is the one source of every op-type set (placement, folding, no-op
removal, the runtime), and registering a custom op never hides the built-in ones."""
import ast
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import ge
from ge import ops
from ge.compiler.engines import ATTR_ENGINE, GE_LOCAL, place_engines
from ge.compiler.prepare import fold_constants, remove_bypass_ops
from ge.graph import CONST_TYPES, DATA_TYPES, Graph
from ge.ops import OpDef, Port, Role, registry


GE_ROOT = pathlib.Path(ge.__file__).parent


_added: list = []


@pytest.fixture(autouse=True)
def _unregister_test_ops():
    """The test ops leave the (process-wide) registry after each test."""
    yield
    while _added:
        registry.REGISTRY.pop(_added.pop(), None)


def _custom(name: str, role: Role) -> OpDef:
    ops.register(OpDef(name, inputs=(Port("x"),), outputs=(Port("y"),), role=role,
                       infer=lambda ctx: [(ctx.ins[0].shape, ctx.ins[0].dtype)],
                       kernel=lambda ins, attrs: [ins[0]], doc="test op"))
    _added.append(name)
    return ops.get(name)


def _chain(op_type: str) -> Graph:
    g = Graph("g")
    x = g.add_node("Data", "x", attrs={"index": 0}, input_names=["x"])
    mid = g.add_node(op_type, "mid", inputs=[(x, 0)])
    relu = g.add_node("Relu", "relu", inputs=[(mid, 0)])
    g.add_node("NetOutput", "out", inputs=[(relu, 0)])
    return g


def test_custom_op_registered_first_keeps_the_builtin_ops():
    # A fresh interpreter: the registry must not have been loaded before the registration.
    code = ("from ge.ops import registry, OpDef, Port\n"
            "registry.register(OpDef('MyEarlyOp', inputs=(Port('x'),), outputs=(Port('y'),)))\n"
            "print(registry.get('Relu') is not None, registry.get('MyEarlyOp') is not None,"
            " len(registry.all_ops()) > 100)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.split() == ["True", "True", "True"]


def test_custom_op_cannot_take_a_builtin_name_before_the_first_lookup():
    code = ("from ge.ops import registry, OpDef\n"
            "try:\n"
            "    registry.register(OpDef('Relu'))\n"
            "except ValueError as exc:\n"
            "    print('refused:', exc)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "refused: op Relu registered twice"


def test_types_with_role_follows_the_registry():
    _custom("TestAliasOp", Role.ALIAS)
    assert "TestAliasOp" in ops.types_with_role(Role.ALIAS)
    assert "TestAliasOp" not in ops.types_with_role(Role.COMPUTE, Role.BYPASS)
    for role in Role:
        for op_type in ops.types_with_role(role):
            assert ops.role_of(op_type) is role
    assert ops.role_of("NoSuchOpType") is None


def test_value_constants_are_const_role():
    # ge.graph cannot read the registry: its CONST_TYPES and DATA_TYPES must agree with it.
    assert set(CONST_TYPES) <= ops.types_with_role(Role.CONST)
    assert set(DATA_TYPES) == ops.types_with_role(Role.DATA)


def test_custom_bypass_op_is_removed_by_preparation():
    _custom("TestNoOp", Role.BYPASS)
    g = _chain("TestNoOp")
    assert remove_bypass_ops(g) == 1
    assert [n.type for n in g.topo_order()] == ["Data", "Relu", "NetOutput"]


def test_custom_alias_op_runs_on_the_graph_engine():
    _custom("TestAliasOp", Role.ALIAS)
    g = _chain("TestAliasOp")
    place_engines(g, {})
    assert g.node("mid").attr(ATTR_ENGINE) == GE_LOCAL
    assert g.node("relu").attr(ATTR_ENGINE) != GE_LOCAL


def test_control_role_is_never_folded():
    def const_into(op_type: str) -> Graph:
        g = Graph(op_type)
        c = g.add_node("Const", "c", attrs={"value": ge.graph.Tensor.from_numpy(
            np.ones(2, np.float32))})
        mid = g.add_node(op_type, "mid", inputs=[(c, 0)])
        g.add_node("NetOutput", "out", inputs=[(mid, 0)])
        return g

    _custom("TestControlOp", Role.CONTROL)
    assert fold_constants(const_into("TestControlOp")) == 0
    _custom("TestComputeOp", Role.COMPUTE)
    assert fold_constants(const_into("TestComputeOp")) == 1


# ---- nothing outside ge/ops re-declares a set of op types ------------------------------------

# ge.graph cannot depend on ge.ops: it keeps the one definition of the ops whose output is the
# attribute `value` (checked against the registry above).
ALLOWED = {("graph/graph.py", "CONST_TYPES"), ("graph/graph.py", "DATA_TYPES")}


def _role_literals(path: pathlib.Path):
    """(target name, op types) of set/tuple/list literals naming two or more registered op
    types whose role is not COMPUTE."""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Set, ast.Tuple, ast.List)):
            continue
        names = [e.value for e in node.elts
                 if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        special = [n for n in names if ops.role_of(n) not in (None, Role.COMPUTE)]
        if len(special) >= 2:
            yield node.lineno, special


def test_no_op_type_set_outside_the_registry():
    found = []
    for path in sorted(GE_ROOT.rglob("*.py")):
        rel = path.relative_to(GE_ROOT).as_posix()
        if rel.startswith(("ops/", "parser/")):   # the registry; framework mapping tables
            continue
        text = path.read_text()
        for line, names in _role_literals(path):
            owner = text.splitlines()[line - 1].split("=")[0].strip()
            if (rel, owner) not in ALLOWED:
                found.append(f"ge/{rel}:{line} {names}")
    assert not found, "op-type sets re-declared outside ge.ops:\n" + "\n".join(found)
