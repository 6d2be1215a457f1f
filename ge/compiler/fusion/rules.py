"""Built-in fusion rewrites, as plain functions graph -> number of rewrites.

Each is wrapped as a named FusionBasePass in ge/compiler/fusion/__init__.py so it is reported
and switchable like a user pass.  A rule finds its match and computes the new op; the graph is
changed only through the splice every pass uses (`_replace` -> ge.passes.boundary.splice),
which keeps the origin names of what it absorbs and drops constants no one else reads.
"""
from __future__ import annotations

import numpy as np

from ge import ops
from ge.graph import Graph, Node
from ge.graph.derived import RowScaled
from ge.graph.types import DataType
from ge.ops.defs._common import FUSED_ACTIVATION
from ge.passes.boundary import erase_unused, splice

from ..graph_utils import derived_once, input_const, make_const
from ..opcompile.gen_conv import FUSED_ACTIVATIONS


def _single_consumer(node: Node, idx: int = 0) -> Node | None:
    users = node.consumers(idx)
    return users[0][0] if len(users) == 1 else None


def _only_output_used(node: Node, idx: int = 0) -> bool:
    return all(not node.consumers(i) for i in range(node.num_outputs) if i != idx)


def _anchors(node: Node, n: int) -> list:
    """The consumer anchor (node, i) of each connected input slot of `node`, None for the
    others, for n slots."""
    return [(node, i) if i < node.num_inputs and node.input(i) is not None else None
            for i in range(n)]


def _replace(graph: Graph, out: Node, op_type: str, name: str, slots: list,
             attrs_from: Node | None = None, attrs: dict | None = None) -> Node:
    """Replace the subgraph ending at `out`:0 by one new op, through the splice every pass
    uses (ge.passes.boundary.splice).  Input slot i of the new op is `slots[i]`: a consumer
    anchor (node, input) whose producer it takes over, an ndarray (a new constant) or None.
    The op copies the attributes of `attrs_from`, then `attrs`; it gets `name` once the
    replaced nodes (and the constants only they used) are gone."""
    rep = Graph(f"{name}_replacement")
    opdef = ops.lookup(op_type)
    slot_names = ops.slot_names(opdef, len(slots))
    boundary: dict = {}            # producer edge -> (replacement Data node, anchors)
    edges, const_descs = [], {}
    for i, spec in enumerate(slots):
        if spec is None:
            edges.append(None)
        elif isinstance(spec, (np.ndarray, RowScaled)):
            const = make_const(rep, f"{name}_{slot_names[i]}", spec)
            edges.append((const, 0))
            const_descs[i] = const.out_desc(0)
        else:
            group = spec if isinstance(spec, list) else [spec]   # anchors of one producer
            src, idx = group[0][0].input(group[0][1])
            if (id(src), idx) not in boundary:     # one replacement input per producer
                k = len(boundary)
                boundary[(id(src), idx)] = (rep.add_node(
                    "Data", f"in{k}", attrs={"index": k}, input_names=["x"],
                    output_names=["y"]), [])
            data, anchors = boundary[(id(src), idx)]
            anchors.extend(group)
            edges.append((data, 0))
    new = rep.add_node(op_type, name, inputs=edges, input_names=slot_names,
                       output_names=ops.slot_names(opdef, 1, outputs=True))
    for key, kind, value in (attrs_from.attr_items() if attrs_from is not None else ()):
        new.set_attr_kind(key, kind, value)
    for key, value in (attrs or {}).items():
        new.set_attr(key, value)
    for i, desc in const_descs.items():
        new.update_input_desc(i, desc)
    new.update_output_desc(0, out.out_desc(0))
    rep.add_node("NetOutput", inputs=[(new, 0)])
    _, created = splice(graph, [anchors for _, anchors in boundary.values()], [(out, 0)], rep,
                        keep_names=True)
    return next(n for n in created if n.type == op_type)


def fold_conv_batchnorm(graph: Graph) -> int:
    """Conv2D(x, W, b?) -> BatchNorm(inference)  ==>  Conv2D(x, W', b'); a chain of them
    (Caffe's BatchNorm then Scale) folds into the one convolution."""
    count = 0
    for conv in graph.topo_order():
        while conv is not None and _fold_one_batchnorm(graph, conv):
            count += 1
            conv = graph.node(conv.name)        # the folded convolution keeps the name
    return count


def _fold_one_batchnorm(graph: Graph, conv: Node) -> bool:
    """Fold the inference BatchNorm that alone reads `conv` into it; False when none does."""
    if conv.type != "Conv2D" or conv.graph is None:
        return False
    bn = _single_consumer(conv)
    if bn is None or bn.type != "BatchNorm" or bn.input(0) != (conv, 0):
        return False
    if bn.attr("is_training", True) or not _only_output_used(bn):
        return False
    if conv.attr("data_format", "NHWC") != "NCHW" or bn.attr("data_format") != "NCHW":
        return False
    weight = input_const(conv, 1)
    params = [input_const(bn, i) if bn.num_inputs > i else None for i in range(1, 5)]
    if weight is None or weight.dtype != np.float32 or any(p is None for p in params):
        return False
    bias = input_const(conv, 2) if conv.num_inputs > 2 else None
    if conv.num_inputs > 2 and conv.input(2) is not None and bias is None:
        return False
    epsilon = float(bn.attr("epsilon", 1e-4))
    # the gears of a model fold the same arrays: once (graph_utils.derived_once)
    new_w, new_b = derived_once((weight, bias, *params, epsilon),
                                lambda: _folded(weight, bias, params, epsilon))
    slots = _anchors(conv, max(conv.num_inputs, 3))
    slots[1:3] = [new_w, new_b]
    _replace(graph, bn, conv.type, conv.name, slots, attrs_from=conv)
    return True


def _folded(weight, bias, params, epsilon: float) -> tuple:
    scale, offset, mean, var = (p.astype(np.float64) for p in params)
    factor = scale / np.sqrt(var + epsilon)
    # one fp32 pass over the (large) filter: the factor is exact to fp32 rounding, the
    # product is rounded once, as when onnxruntime folds the same pair; computed when its
    # values are needed, or streamed into the OM (ge.graph.derived)
    new_w = RowScaled(weight, factor.astype(np.float32))
    b0 = np.zeros_like(mean) if bias is None else bias.astype(np.float64)
    return new_w, ((b0 - mean) * factor + offset).astype(np.float32)


def _matmul_bias_slot(op_type: str) -> int | None:
    """The `bias` input slot of a compiled matrix product (registry facts), else None."""
    opdef = ops.get(op_type)
    if opdef is None or opdef.kernel_gen != "matmul":
        return None
    return next((i for i, p in enumerate(opdef.inputs) if p.name == "bias"), None)


def fuse_matmul_add(graph: Graph) -> int:
    """MatMul/MatMulV2/BatchMatMulV2(a, b) -> Add(., c[N])  ==>  matmul with bias input c."""
    count = 0
    for mm in graph.topo_order():
        slot = _matmul_bias_slot(mm.type)
        if slot is None or mm.graph is None:
            continue
        if mm.num_inputs > slot and mm.input(slot) is not None:
            continue
        add = _single_consumer(mm)
        if add is None or add.type != "Add":
            continue
        other = 1 if add.input(0) == (mm, 0) else 0
        bias = input_const(add, other)
        out_shape = list(mm.out_desc(0).shape)
        if bias is None or not out_shape or bias.dtype != np.float32:
            continue
        if list(add.out_desc(0).shape) != out_shape:
            continue  # the Add broadcasts the product: not a bias
        n = out_shape[-1]
        if bias.size != n or any(d != 1 for d in bias.shape[:-1]) or bias.shape[-1:] != (n,):
            continue
        slots = _anchors(mm, max(mm.num_inputs, slot + 1))
        slots[slot] = bias.reshape(n)
        _replace(graph, add, mm.type, mm.name, slots, attrs_from=mm)
        count += 1
    return count


SCALAR_OPS = {"Mul": ("Muls", lambda v: v), "Add": ("Adds", lambda v: v),
              "RealDiv": ("Muls", lambda v: 1.0 / v), "Sub": ("Adds", lambda v: -v)}


def fold_scalar_elementwise(graph: Graph) -> int:
    """x (op) scalar-constant  ==>  Muls/Adds(x, value); then Muls(Muls(x)) ==> Muls(x)."""
    count = 0
    for node in graph.topo_order():
        rule = SCALAR_OPS.get(node.type)
        if rule is None or node.graph is None or node.num_inputs != 2:
            continue
        value = input_const(node, 1)
        x_edge = node.input(0)
        if value is None or value.size != 1 or x_edge is None or value.dtype != np.float32:
            continue
        if list(node.out_desc(0).shape) != list(node.in_desc(0).shape):
            continue  # the scalar broadcasts x up: keep the op
        if node.out_desc(0).data_type != node.in_desc(0).data_type:
            continue
        if node.type == "RealDiv" and float(value.reshape(())) == 0.0:
            continue
        new_type, conv = rule
        scalar = float(conv(np.float32(value.reshape(()))))
        _replace(graph, node, new_type, f"{node.name}_{new_type.lower()}", [(node, 0)],
                 attrs={"value": scalar})
        count += 1
    for node in graph.topo_order():  # Muls(Muls(x, a), b) -> Muls(x, a*b)
        if node.type != "Muls" or node.graph is None:
            continue
        prev = node.input(0)
        if prev is None or prev[0].type != "Muls" or len(prev[0].consumers(0)) != 1:
            continue
        inner = prev[0]
        value = float(np.float32(inner.attr("value")) * np.float32(node.attr("value")))
        _replace(graph, node, "Muls", node.name, [(inner, 0)], attrs_from=node,
                 attrs={"value": value})
        count += 1
    return count


SQRT_HALF = 0.7071067811865476


def _scalar_op(edge, op_type: str, value: float, last: bool = False) -> Node | None:
    """The producer of `edge` when it is a Muls/Adds of `value` (to fp32 rounding) read only
    there (unless it is the `last` node of the match), else None."""
    node = edge[0] if edge is not None else None
    if node is None or node.type != op_type or (not last and len(node.consumers(0)) != 1):
        return None
    return node if abs(float(node.attr("value")) - value) <= 1e-6 * abs(value) else None


def _gelu_end(erf: Node):
    """(x edge, last node, anchors of x) of x*0.5*(1+erf(x/sqrt2)) around `erf`, after
    ScalarElementwiseFoldingPass (Div/Mul by constants are Muls, + 1 is Adds), in the orders
    exporters write it: ((x * (1+e)) * 0.5), ((x * 0.5) * (1+e)), (x * ((1+e) * 0.5))."""
    pre = _scalar_op(erf.input(0), "Muls", SQRT_HALF)
    add = _single_consumer(erf)
    if pre is None or add is None or _scalar_op((add, 0), "Adds", 1.0) is None:
        return None
    x = pre.input(0)
    nxt = _single_consumer(add)
    half_after = _scalar_op((nxt, 0), "Muls", 0.5) if nxt is not None else None
    mul = _single_consumer(half_after) if half_after is not None else nxt
    if mul is None or mul.type != "Mul" or mul.num_inputs != 2:
        return None
    inner = half_after or add
    k = 0 if mul.input(1) == (inner, 0) else 1
    if mul.input(1 - k) != (inner, 0):
        return None
    other = mul.input(k)
    if other == x:
        if half_after is not None:
            return x, mul, [(pre, 0), (mul, k)]
        end = _single_consumer(mul)
        if end is not None and _scalar_op((end, 0), "Muls", 0.5, last=True) is not None:
            return x, end, [(pre, 0), (mul, k)]
        return None
    half_x = _scalar_op(other, "Muls", 0.5)
    if half_after is None and half_x is not None and half_x.input(0) == x:
        return x, mul, [(pre, 0), (half_x, 0)]
    return None


def fuse_gelu_erf(graph: Graph) -> int:
    """x * 0.5 * (1 + erf(x / sqrt(2)))  ==>  GeluV2(x, approximate="none") (float32 only)."""
    count = 0
    for erf in graph.topo_order():
        if erf.type != "Erf" or erf.graph is None:
            continue
        if erf.out_desc(0).data_type != DataType.DT_FLOAT:
            continue
        found = _gelu_end(erf)
        if found is None:
            continue
        _, end, anchors = found
        _replace(graph, end, "GeluV2", f"{erf.name}_gelu", [anchors],
                 attrs={"approximate": "none"})
        count += 1
    return count


def _default_attrs(node: Node) -> bool:
    """Every public attribute of `node` at its registry default."""
    opdef = ops.get(node.type)
    defaults = {s.name: s.default for s in opdef.attrs if not s.required} if opdef else {}
    return all(k in defaults and v == defaults[k]
               for k, _, v in node.attr_items() if not k.startswith("_"))


def _fuse_activation(graph: Graph, accepts) -> int:
    """op -> activation (alone reading it, default attributes)  ==>  op with
    `fused_activation` = the activation's type; the kernels apply it to each block of their
    output while it is in the cache (ge/compiler/opcompile/gen_conv.py)."""
    count = 0
    for node in graph.topo_order():
        if node.graph is None or not accepts(node) or node.attr(FUSED_ACTIVATION):
            continue
        act = _single_consumer(node)
        if act is None or act.type not in FUSED_ACTIVATIONS or act.input(0) != (node, 0):
            continue
        if not _only_output_used(node) or not _default_attrs(act):
            continue
        if node.out_desc(0).data_type not in (DataType.DT_FLOAT, DataType.DT_FLOAT16):
            continue
        if act.out_desc(0).data_type != node.out_desc(0).data_type:
            continue
        _replace(graph, act, node.type, node.name, _anchors(node, node.num_inputs),
                 attrs_from=node, attrs={FUSED_ACTIVATION: act.type})
        count += 1
    return count


def fuse_conv_activation(graph: Graph) -> int:
    """Conv2D(x, W, b?) -> Relu | GeluV2  ==>  Conv2D with fused_activation."""
    return _fuse_activation(graph, lambda n: n.type == "Conv2D")


def fuse_matmul_activation(graph: Graph) -> int:
    """MatMul/MatMulV2/BatchMatMul(V2)(a, b, bias?) -> Relu | GeluV2  ==>  the matmul with
    fused_activation."""
    return _fuse_activation(graph, lambda n: _matmul_bias_slot(n.type) is not None)


def _residual_conv(add: Node, k: int) -> Node | None:
    """The Conv2D feeding input `k` of `add` when the other input can be its residual: a
    float32 NCHW convolution read only there, with no residual nor activation yet, and both
    operands of the Add's output shape (no broadcasting)."""
    edge = add.input(k)
    conv = edge[0] if edge is not None else None
    if conv is None or conv.type != "Conv2D" or edge[1] != 0 or _single_consumer(conv) is not add:
        return None
    if conv.attr(FUSED_ACTIVATION) or not _only_output_used(conv):
        return None
    slot = ops.lookup("Conv2D").input_index("residual")
    if conv.num_inputs > slot and conv.input(slot) is not None:
        return None
    if conv.attr("data_format", "NHWC") != "NCHW":
        return None
    out = add.out_desc(0)
    for desc in (conv.out_desc(0), add.in_desc(1 - k)):
        if desc.data_type != DataType.DT_FLOAT or list(desc.shape) != list(out.shape):
            return None
    return conv if out.data_type == DataType.DT_FLOAT and -1 not in list(out.shape) else None


def fuse_conv_add(graph: Graph) -> int:
    """Add(Conv2D(x, W, b?), r) with r of the sum's shape  ==>  Conv2D(x, W, b?, residual=r):
    the block output of a residual network is written once (the kernel adds r to each block of
    its output while it is in the cache; ConvActivationFusionPass can then take the Relu)."""
    count = 0
    slot = ops.lookup("Conv2D").input_index("residual")
    for add in graph.topo_order():
        if add.type != "Add" or add.graph is None or add.num_inputs != 2:
            continue
        if add.input(0) is None or add.input(1) is None:
            continue
        found = [(k, c) for k in (0, 1) for c in [_residual_conv(add, k)] if c is not None]
        if not found:
            continue
        k, conv = found[0]          # of two convolutions (a downsampling block), the first
        slots = _anchors(conv, slot + 1)
        slots[slot] = (add, 1 - k)
        _replace(graph, add, "Conv2D", conv.name, slots, attrs_from=conv)
        count += 1
    return count


def _param_source(ln: Node, slot: int, params: list):
    """The edge a BroadcastTo feeding `slot` of `ln` broadcasts, when it already has the
    normalised dims' shape `params` (and the parameter's dtype), else None."""
    edge = ln.input(slot) if slot < ln.num_inputs else None
    if edge is None or edge[0].type != "BroadcastTo" or edge[1] != 0:
        return None
    src = edge[0].input(0)
    if src is None:
        return None
    desc = src[0].out_desc(src[1])
    if list(desc.shape) != params or desc.data_type != ln.in_desc(slot).data_type:
        return None
    return src


def fold_layer_norm_broadcast(graph: Graph) -> int:
    """LayerNorm(x, BroadcastTo(g, Shape(x)), BroadcastTo(b, Shape(x))) with g and b of the
    normalised dims' shape  ==>  LayerNorm(x, g, b), begin_params_axis = begin_norm_axis.
    ONNX LayerNormalization is mapped as CANN maps it, parameters broadcast to x's shape; the
    kernel reads one row of them instead of two copies of x's size made at each run (BERT-base:
    50 broadcasts, 2.2 ms of a run with one thread)."""
    opdef = ops.lookup("LayerNorm")
    slots = (opdef.input_index("gamma"), opdef.input_index("beta"))
    count = 0
    for ln in graph.topo_order():
        if ln.type != "LayerNorm" or ln.graph is None:
            continue
        shape = list(ln.in_desc(0).shape)
        if not shape or -1 in shape or -2 in shape:
            continue
        axis = int(ln.attr("begin_norm_axis", 0))
        axis = axis + len(shape) if axis < 0 else axis
        if not 0 <= axis < len(shape):
            continue
        sources = {slot: _param_source(ln, slot, shape[axis:]) for slot in slots}
        if None in sources.values():
            continue
        for slot, (src, idx) in sources.items():
            broadcast = ln.input(slot)[0]
            graph.remove_edge(broadcast, 0, ln, slot)
            graph.add_data_edge(src, idx, ln, slot)
            ln.update_input_desc(slot, src.out_desc(idx))
            # the broadcast and its shape operand, unless something else reads them
            erase_unused(graph, [broadcast] + [e[0] for e in broadcast.inputs()
                                               if e is not None and e[0].type != "Data"])
        ln.set_attr("begin_params_axis", axis)
        count += 1
    return count

