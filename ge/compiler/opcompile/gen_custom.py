"""Kernels of custom operator packages (ge.ops.custom, docs/custom-ops.md).

The package gives the C text of `ge_kernel` (docs/kernel-abi.md); this generator opens the
translation unit with the same head as every built-in kernel (ABI version, signature) and GE_*
macros that describe the node: per input slot k `GE_IN<k>_PRESENT`, `GE_IN<k>_RANK`,
`GE_IN<k>_NUMEL`, `GE_IN<k>_SHAPE[]` and `GE_IN<k>_T` (its C type); the same `GE_OUT<k>_*` per
output slot; `GE_ATTR_<name>` per attribute (a number, a string literal, or an array with
`GE_ATTR_<name>_LEN`).  The package's source is part of the rendered source, so it is part of
the cache key like any generator's output.
"""
from __future__ import annotations

import hashlib

from ge.graph.types import AttrValueType as VT
from ge.ops import custom

from .cgen import C_TYPE, KernelSource, Unsupported, flit, kernel_head, numel, _c_string
from .signature import OpSignature, TensorSig

__all__ = ["VERSION", "render_custom", "check_kernel"]

VERSION = 1


def _number(value) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return f"INT64_C({value})"
    return flit(value)


def _attr_lines(name: str, value) -> list:
    macro = f"GE_ATTR_{name}"
    if isinstance(value, str):
        return [f'#define {macro} "{_c_string(value)}"']
    if isinstance(value, (list, tuple)):
        flat = [v for v in value if isinstance(v, (int, float))]
        ctype = "double" if any(isinstance(v, float) for v in flat) else "int64_t"
        items = ", ".join(_number(v) for v in flat) or "0"
        return [f"static const {ctype} {macro}[] = {{{items}}};",
                f"#define {macro}_LEN {len(flat)}"]
    if isinstance(value, (int, float)):
        return [f"#define {macro} {_number(value)}"]
    return []                       # tensors and other kinds have no C form


def _tensor_lines(prefix: str, t) -> list:
    if t is None:
        return [f"#define {prefix}_PRESENT 0"]
    dims = ", ".join(f"INT64_C({d})" for d in t.shape) or "1"
    return [f"#define {prefix}_PRESENT 1", f"#define {prefix}_RANK {len(t.shape)}",
            f"#define {prefix}_NUMEL INT64_C({numel(t.shape)})",
            f"static const int64_t {prefix}_SHAPE[] = {{{dims}}};",
            f"#define {prefix}_T {C_TYPE[t.dtype]}"]


def render_custom(sig) -> KernelSource:
    loaded = custom.custom_op(sig.op_type)
    if loaded is None or not loaded.c_source:
        raise Unsupported(f"{sig.op_type} has no C kernel in its package")
    return _render(loaded, sig)


def _render(loaded, sig) -> KernelSource:
    kernel = loaded.op.c_kernel
    for t in list(sig.inputs) + list(sig.outputs):
        if t is not None and t.dtype not in kernel.dtypes:
            raise Unsupported(f"dtype {t.dtype} (the package's kernel handles "
                              f"{', '.join(kernel.dtypes)})")
    lines = kernel_head(sig, f"custom {loaded.package} {loaded.version}", VERSION,
                        system_headers=True)
    for k, t in enumerate(sig.inputs):
        lines += _tensor_lines(f"GE_IN{k}", t)
    for k, t in enumerate(sig.outputs):
        lines += _tensor_lines(f"GE_OUT{k}", t)
    for name, value in sig.attrs:
        lines += _attr_lines(name, value)
    workspace = kernel.workspace_bytes
    workspace = int(workspace(sig) if callable(workspace) else workspace)
    lines += [f"#define GE_WORKSPACE_BYTES {workspace}", "", f"#line 1 \"{loaded.op.opdef.type}.c\"",
              loaded.c_source, ""]
    return KernelSource("\n".join(lines), workspace_bytes=workspace)


_ZERO = {VT.VT_FLOAT: 0.0, VT.VT_INT: 0, VT.VT_BOOL: False, VT.VT_STRING: ""}
_checked: dict = {}           # sha256 of a sample source -> reason ("" = compiles)


def _sample_signature(loaded) -> OpSignature:
    """A small node of the op: every slot [2] of the kernel's first dtype, attributes at
    their defaults (zero for required ones)."""
    opdef, dtype = loaded.op.opdef, loaded.op.c_kernel.dtypes[0]
    t = TensorSig((2,), dtype)
    attrs = {a.name: (_ZERO.get(a.kind, []) if a.required else a.default)
             for a in opdef.attrs}
    return OpSignature.make(opdef.type, [t] * len(opdef.inputs), [t] * len(opdef.outputs),
                            attrs)


def check_kernel(loaded) -> str:
    """Why the op's C kernel does not compile ("" when it does), on a sample node."""
    from .build import KernelBuildError, build
    try:
        source = _render(loaded, _sample_signature(loaded)).c_source
    except (Unsupported, TypeError, ValueError) as exc:
        return f"it cannot be rendered: {exc}"
    digest = hashlib.sha256(source.encode()).hexdigest()
    if digest not in _checked:
        try:
            build(source, False, (), f"{loaded.package}/{loaded.op.opdef.type}")
            _checked[digest] = ""
        except KernelBuildError as exc:
            _checked[digest] = exc.params.get("reason", "").strip()
    return _checked[digest]
