"""The operator registry: one OpDef per IR op; the single source for parser checks, inference,
ge.es, engine placement, kernel generation and the runtime.  See docs/ops-registry.md."""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Callable, Optional

import numpy as np

from ge.graph.types import AttrValueType as VT, DataType

REQUIRED = object()  # default of a required attribute


class Role(Enum):
    """What an op is to the graph engine (a closed set: passes, placement, folding, memory
    planning, model build and the runtime decide by role, never by a list of type names)."""
    COMPUTE = "compute"  # computes its outputs from its inputs
    DATA = "data"        # a graph input: fed by the caller
    CONST = "const"      # its value is known when the model is built
    OUTPUT = "output"    # the graph sink: input k is graph output k
    CONTROL = "control"  # runs subgraphs (calls and control flow)
    ALIAS = "alias"      # output 0 holds the bytes of input 0 in another shape (reshape family)
    BYPASS = "bypass"    # output 0 is input 0 at inference: removed when the graph is prepared


@dataclass(frozen=True)
class Port:
    name: str
    kind: str = "required"  # "required" | "optional" | "dynamic"
    dtypes: tuple = ()      # DataTypes the port accepts (checked before inference); () = any


@dataclass(frozen=True)
class AttrSpec:
    name: str
    kind: VT
    default: object = REQUIRED

    @property
    def required(self) -> bool:
        return self.default is REQUIRED


@dataclass(frozen=True)
class TensorInfo:
    """What inference sees of one input: shape (None = unknown), dtype, constant value or None,
    and where it comes from (for errors: the producer output, or a graph input)."""
    shape: Optional[tuple]
    dtype: DataType
    value: Optional[np.ndarray] = None
    source: str = ""


@dataclass(frozen=True)
class InferCtx:
    ins: list            # list[TensorInfo | None], one per input slot (None = absent optional)
    attrs: dict          # every IR attribute, defaults filled in
    num_outputs: int     # number of output slots of the node (dynamic outputs expanded)
    op_name: str = ""    # node name, for error messages
    op_type: str = ""    # IR op type, for error messages


Infer = Callable[[InferCtx], list]        # -> list[(shape tuple, DataType)], one per output
Kernel = Callable[[list, dict], list]     # (input arrays (None if absent), attrs) -> outputs
# Attribute values fixed once the input shapes are known (e.g. ONNX auto_pad resolved into
# explicit pads): InferCtx -> {attr name: new value}; empty when nothing changes.  The compiler
# applies it after shape inference (ge.compiler.prepare.resolve_attrs), so that kernel
# generators and every later consumer see only the explicit form.
Resolve = Callable[[InferCtx], dict]


@dataclass(frozen=True)
class OpDef:
    type: str
    inputs: tuple = ()      # tuple[Port]
    outputs: tuple = ()     # tuple[Port]
    attrs: tuple = ()       # tuple[AttrSpec]
    infer: Optional[Infer] = None
    kernel: Optional[Kernel] = None
    resolve: Optional[Resolve] = None
    subgraphs: tuple = ()   # IR subgraph names, e.g. ("then_branch", "else_branch")
    role: Role = Role.COMPUTE
    # The C kernel generator that compiles the op for the AIcore/Vector engines ("" = none: it
    # runs on AiCpu with `kernel`); ge.compiler.opcompile.generators renders it by this name.
    kernel_gen: str = ""
    # Input slots whose constant values the generated kernel is specialised on (-1 = last).
    kernel_consts: tuple = ()
    # The output only repeats input values (Expand, Tile): folding it may blow up the weights.
    replicates: bool = False
    # The output depends only on the shape of input 0 (Shape, Size): known at compile time
    # once that shape is static, whatever computes the values.
    shape_only: bool = False
    doc: str = ""
    family: str = ""        # defs module the op lives in: structural, matmul, conv, ...

    def attr_spec(self, name: str) -> Optional[AttrSpec]:
        for a in self.attrs:
            if a.name == name:
                return a
        return None

    def input_index(self, name: str) -> int:
        for i, p in enumerate(self.inputs):
            if p.name == name:
                return i
        raise KeyError(f"{self.type} has no input {name}")


REGISTRY: dict[str, OpDef] = {}
_loaded = False   # the built-in definitions (ge.ops.defs) have been registered


def register(opdef: OpDef) -> OpDef:
    """Add an op.  The built-in ops are registered first, so that an early custom op neither
    hides them nor silently takes the name of one."""
    _ensure_loaded()
    if opdef.type in REGISTRY:
        raise ValueError(f"op {opdef.type} registered twice")
    REGISTRY[opdef.type] = opdef
    return opdef


def get(op_type: str) -> Optional[OpDef]:
    _ensure_loaded()
    return REGISTRY.get(op_type)


def lookup(op_type: str) -> OpDef:
    """Like get(), but an unknown type raises GeError EZ9999 naming the closest known types."""
    opdef = get(op_type)
    if opdef is None:
        import difflib
        from ge.errors import GeError
        close = difflib.get_close_matches(op_type, list(REGISTRY), n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise GeError("EZ9999", {"what": f"op type {op_type}",
                                 "reason": f"it is not registered in ge.ops{hint}"})
    return opdef


def all_ops() -> dict[str, OpDef]:
    _ensure_loaded()
    return dict(REGISTRY)


def role_of(op_type: str) -> Optional[Role]:
    """The role of an op type, None when it is not registered."""
    opdef = get(op_type)
    return None if opdef is None else opdef.role


def types_with_role(*roles: Role) -> frozenset:
    """The op types whose role is one of `roles`: the one source of every op-type set."""
    return frozenset(t for t, d in all_ops().items() if d.role in roles)


def _ensure_loaded() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True  # set first: the definitions call register() while they load
    try:
        import ge.ops.defs  # noqa: F401  (registers every op)
    except BaseException:
        _loaded = False
        raise
