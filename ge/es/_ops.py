"""Op functions generated from `ge.ops` entries (spec/python-passes.md §5.4).

`op_function(opdef)` turns one OpDef into a Python function with CANN's argument conventions:
inputs positional in IR order (dynamic inputs as one list), `<out>_num` per dynamic output,
subgraph parameters, then keyword-only attributes with IR defaults.  Functions are made on
first access and cached per OpDef object, so ops registered later appear without a rebuild.
"""
from __future__ import annotations

import inspect
import keyword
import logging
from types import SimpleNamespace

from ge.graph.attrs import kind_of
from ge.ops import registry

__all__ = ["op_function", "build_op"]

_P = inspect.Parameter
_log = logging.getLogger(__name__)
_cache: dict[int, tuple] = {}


def _py_name(name: str, prefix: str, taken: set) -> str:
    out = f"{prefix}{name}" if keyword.iskeyword(name) or name in taken else name
    taken.add(out)
    return out


def _layout(opdef):
    """(param list, binding plan) for one OpDef."""
    params: list[inspect.Parameter] = []
    plan = {"inputs": [], "outputs": [], "subgraphs": [], "attrs": [], "owner": None}
    taken: set = set()
    ins, outs = list(opdef.inputs), list(opdef.outputs)
    has_dyn_out = any(p.kind == "dynamic" for p in outs)
    if not ins:
        params.append(_P("owner_graph_builder", _P.POSITIONAL_OR_KEYWORD))
        plan["owner"] = "owner_graph_builder"
        taken.add("owner_graph_builder")
    trailing_opt = len(ins)
    while trailing_opt > 0 and ins[trailing_opt - 1].kind == "optional":
        trailing_opt -= 1
    for i, port in enumerate(ins):
        pname = _py_name(port.name, "in_", taken)
        default = None if (port.kind == "optional" and i >= trailing_opt and not has_dyn_out) \
            else _P.empty
        params.append(_P(pname, _P.POSITIONAL_OR_KEYWORD, default=default))
        plan["inputs"].append((pname, port))
    if ins and all(p.kind == "optional" for p in ins):
        params.append(_P("owner_builder", _P.POSITIONAL_OR_KEYWORD, default=None))
        plan["owner"] = "owner_builder"
    in_names = {p.name for p in ins}
    for port in outs:
        if port.kind == "dynamic":
            base = f"ref_{port.name}" if port.name in in_names else port.name
            pname = _py_name(f"{base}_num", "out_", taken)
            params.append(_P(pname, _P.POSITIONAL_OR_KEYWORD))
            plan["outputs"].append((pname, port))
        else:
            plan["outputs"].append((None, port))
    for sub in opdef.subgraphs:
        pname = _py_name(sub, "attr_", taken)
        params.append(_P(pname, _P.POSITIONAL_OR_KEYWORD))
        plan["subgraphs"].append((pname, sub))
    for spec in opdef.attrs:
        pname = f"attr_{spec.name}" if spec.name in in_names else spec.name
        pname = _py_name(pname, "attr_", taken)
        default = _P.empty if spec.required else spec.default
        params.append(_P(pname, _P.KEYWORD_ONLY, default=default))
        plan["attrs"].append((pname, spec))
    return params, plan


def _check_attr_value(op_type, name, spec, value):
    try:
        kind_of(value)
    except ValueError:
        raise TypeError(f"{op_type}: attribute {name} got unsupported value {value!r}") from None


def _call(opdef, plan, bound: dict):
    from .tensor_holder import TensorHolder
    from .tensor_like import convert_to_tensor_holder, resolve_builder
    op_type = opdef.type
    raw_inputs = [bound[p] for p, _ in plan["inputs"]]
    owner = bound.get(plan["owner"]) if plan["owner"] else None
    allow_like = len(opdef.inputs) > 1 or all(p.kind == "optional" for p in opdef.inputs)
    if not allow_like:
        for (pname, _), value in zip(plan["inputs"], raw_inputs):
            if value is not None and not isinstance(value, TensorHolder):
                raise TypeError(f"{op_type}: input {pname} must be a TensorHolder, "
                                f"got {type(value).__name__}")
    builder = resolve_builder(raw_inputs, owner)
    edges, in_names = [], []
    for (pname, port), value in zip(plan["inputs"], raw_inputs):
        items = value if port.kind == "dynamic" else [value]
        if port.kind == "dynamic" and not isinstance(value, (list, tuple)):
            raise TypeError(f"{op_type}: dynamic input {pname} expects a list")
        if port.kind == "required" and value is None:
            raise TypeError(f"{op_type}: required input {pname} is None")
        for k, item in enumerate(items):
            if not isinstance(item, TensorHolder) and item is not None and not allow_like:
                raise TypeError(f"{op_type}: input {pname} must be a TensorHolder")
            edges.append(convert_to_tensor_holder(item, builder))
            in_names.append(f"{port.name}{k}" if port.kind == "dynamic" else port.name)
    out_names, dyn_groups = [], []
    for pname, port in plan["outputs"]:
        if pname is None:
            out_names.append(port.name)
            continue
        count = bound[pname]
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            raise TypeError(f"{op_type}: {pname} must be a non-negative int")
        dyn_groups.append((port.name, len(out_names), count))
        out_names += [f"{port.name}{k}" for k in range(count)]
    typed = {}
    for pname, spec in plan["attrs"]:
        value = bound[pname]
        _check_attr_value(op_type, pname, spec, value)
        typed[spec.name] = (spec.kind, value)
    node = builder._add_op(op_type, edges, typed_attrs=typed, num_outputs=len(out_names),
                           input_names=in_names, output_names=out_names)
    _infer_best_effort(node)
    for pname, sub in plan["subgraphs"]:
        graphs = bound[pname]
        graphs = graphs if isinstance(graphs, (list, tuple)) else [graphs]
        for k, g in enumerate(graphs):
            key = sub if len(graphs) == 1 else f"{sub}{k}"
            node.subgraphs[key] = g.name
            builder._graph.add_subgraph(g, node)
    return _wrap_outputs(builder, node, opdef, plan, dyn_groups)


def _infer_best_effort(node) -> None:
    """Fill output descs from the registry's inference when the inputs allow it.  Inputs of
    patterns are placeholders (scalar float), so inference may legitimately fail here; the
    compiler infers the real graph later."""
    try:
        from ge import ops
        ops.infer_node(node)
    except Exception as exc:  # placeholder inputs: descs stay as created
        _log.debug("ES: no shape inference for %s (%s): %s", node.name, node.type, exc)


def _wrap_outputs(builder, node, opdef, plan, dyn_groups):
    outs = plan["outputs"]
    if not outs:
        return builder._holder(node, 0) if node.num_outputs else None
    if len(outs) == 1:
        if outs[0][0] is None:
            return builder._holder(node, 0)
        return [builder._holder(node, k) for k in range(node.num_outputs)]
    fields, slot = {}, 0
    dyn = {name: (start, count) for name, start, count in dyn_groups}
    for pname, port in outs:
        if pname is None:
            fields[port.name] = builder._holder(node, slot)
            slot += 1
        else:
            start, count = dyn[port.name]
            fields[port.name] = [builder._holder(node, start + k) for k in range(count)]
            slot += count
    result = type(f"{opdef.type}Output", (SimpleNamespace,), {})(**fields)
    return result


def op_function(opdef):
    """The ES function for `opdef` (cached while the same OpDef object stays registered)."""
    hit = _cache.get(id(opdef))
    if hit is not None and hit[0] is opdef:
        return hit[1]
    params, plan = _layout(opdef)
    sig = inspect.Signature(params)

    def es_op(*args, **kwargs):
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        return _call(opdef, plan, bound.arguments)

    es_op.__name__ = es_op.__qualname__ = opdef.type
    es_op.__signature__ = sig
    es_op.__doc__ = f"{opdef.type}{sig}\n\n{opdef.doc}".rstrip()
    es_op.__module__ = "ge.es.all"
    _cache[id(opdef)] = (opdef, es_op)
    return es_op


def build_op(op_type: str, inputs: list, attrs: dict | None = None):
    """One node of `op_type` fed by TensorHolders (operators use this); registry-aware."""
    opdef = registry.get(op_type)
    builder = inputs[0]._builder
    if opdef is None:
        node = builder._add_op(op_type, inputs, attrs=attrs)
        return builder._holder(node, 0)
    return op_function(opdef)(*inputs, **(attrs or {}))
