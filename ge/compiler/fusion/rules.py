"""Built-in fusion rewrites, as plain functions graph -> number of rewrites.

Each is wrapped as a named FusionBasePass in ge/compiler/fusion/__init__.py so it is reported
and switchable like a user pass.  Every rewrite keeps the origin names of what it absorbs.
"""
from __future__ import annotations

import numpy as np

from ge import ops
from ge.graph import CONST_TYPES, Graph, Node

from ..graph_utils import const_value, input_const, make_const


def _single_consumer(node: Node, idx: int = 0) -> Node | None:
    users = node.consumers(idx)
    return users[0][0] if len(users) == 1 else None


def _only_output_used(node: Node, idx: int = 0) -> bool:
    return all(not node.consumers(i) for i in range(node.num_outputs) if i != idx)


def _set_input_const(graph: Graph, node: Node, slot: int, array: np.ndarray, name: str,
                     origin) -> None:
    old = node.input(slot)
    const = make_const(graph, name, array, origin=origin)
    graph.connect(const, 0, node, slot)
    node.update_input_desc(slot, const.out_desc(0))
    if old is not None and not old[0].consumers(old[1]) and old[0].type in CONST_TYPES:
        graph.erase_node(old[0])


def fold_conv_batchnorm(graph: Graph) -> int:
    """Conv2D(x, W, b?) -> BatchNorm(inference)  ==>  Conv2D(x, W', b')."""
    count = 0
    for conv in graph.topo_order():
        if conv.type != "Conv2D" or conv.graph is None:
            continue
        bn = _single_consumer(conv)
        if bn is None or bn.type != "BatchNorm" or bn.input(0) != (conv, 0):
            continue
        if bn.attr("is_training", True) or not _only_output_used(bn):
            continue
        if conv.attr("data_format", "NHWC") != "NCHW" or bn.attr("data_format") != "NCHW":
            continue
        weight = input_const(conv, 1)
        params = [input_const(bn, i) if bn.num_inputs > i else None for i in range(1, 5)]
        if weight is None or weight.dtype != np.float32 or any(p is None for p in params):
            continue
        bias = input_const(conv, 2) if conv.num_inputs > 2 else None
        if conv.num_inputs > 2 and conv.input(2) is not None and bias is None:
            continue
        scale, offset, mean, var = (p.astype(np.float64) for p in params)
        factor = scale / np.sqrt(var + float(bn.attr("epsilon", 1e-4)))
        # one fp32 pass over the (large) filter: the factor is exact to fp32 rounding, the
        # product is rounded once, as when onnxruntime folds the same pair
        new_w = weight * factor.astype(np.float32).reshape(-1, 1, 1, 1)
        b0 = np.zeros_like(mean) if bias is None else bias.astype(np.float64)
        new_b = ((b0 - mean) * factor + offset).astype(np.float32)
        while conv.num_inputs < 3:
            conv.add_input("bias" if conv.num_inputs == 2 else None)
        origin = bn.origin
        _set_input_const(graph, conv, 1, new_w, f"{conv.name}_filter_bn", conv.origin)
        _set_input_const(graph, conv, 2, new_b, f"{conv.name}_bias_bn", origin)
        conv.merge_origin(origin)
        graph.replace_uses((bn, 0), (conv, 0))
        for i in range(bn.num_inputs):
            src = bn.input(i)
            graph.disconnect(bn, i)
            if i and src is not None and not src[0].consumers(src[1]) \
                    and const_value(src[0]) is not None:
                graph.erase_node(src[0])
        graph.erase_node(bn)
        count += 1
    return count


MATMUL_WITH_BIAS = ("MatMul", "MatMulV2", "BatchMatMulV2")  # IR ops with a `bias` input


def fuse_matmul_add(graph: Graph) -> int:
    """MatMulV2/BatchMatMulV2(a, b) -> Add(., c[N])  ==>  matmul with bias input c."""
    count = 0
    for mm in graph.topo_order():
        if mm.type not in MATMUL_WITH_BIAS or mm.graph is None:
            continue
        slot = ops.get(mm.type).input_index("bias")
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
        while mm.num_inputs <= slot:
            mm.add_input("bias" if mm.num_inputs == slot else "x")
        _set_input_const(graph, mm, slot, bias.reshape(n), f"{mm.name}_bias", add.origin)
        mm.merge_origin(add.origin)
        graph.replace_uses((add, 0), (mm, 0))
        src = add.input(other)
        graph.erase_node(add)
        if src is not None and not src[0].consumers(src[1]):
            graph.erase_node(src[0])
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
        new = graph.add_node(new_type, graph.unique_name(f"{node.name}_{new_type.lower()}"),
                             inputs=[x_edge], input_names=["x"], output_names=["y"],
                             attrs={"value": scalar}, origin=node.origin)
        new.update_input_desc(0, node.in_desc(0))
        new.update_output_desc(0, node.out_desc(0))
        graph.replace_uses((node, 0), (new, 0))
        src = node.input(1)
        graph.erase_node(node)
        if src is not None and not src[0].consumers(src[1]):
            graph.erase_node(src[0])
        count += 1
    for node in graph.topo_order():  # Muls(Muls(x, a), b) -> Muls(x, a*b)
        if node.type != "Muls" or node.graph is None:
            continue
        prev = node.input(0)
        if prev is None or prev[0].type != "Muls" or len(prev[0].consumers(0)) != 1:
            continue
        inner = prev[0]
        node.set_attr("value", float(np.float32(inner.attr("value")) * np.float32(node.attr("value"))))
        graph.connect(inner.input(0)[0], inner.input(0)[1], node, 0)
        node.merge_origin(inner.origin)
        graph.erase_node(inner)
        count += 1
    return count
