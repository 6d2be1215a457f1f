"""Switch NCHW Conv2D to NHWC and drop the transposes around the following layout change.

Our re-creation of CANN sample graph_base_pass/3 (spec/python-passes.md §7.9): for each NCHW
Conv2D, set data_format NHWC, walk downstream and remove the first Transpose with perm
[0,2,3,1] and then one with perm [0,3,1,2] (consumers read the transpose's input instead).
"""
from collections import deque

from ge.passes import (FusionBasePass, PassStage, can_fuse, register_fusion_pass,
                       report_fuse)

TO_NHWC = [0, 2, 3, 1]
TO_NCHW = [0, 3, 1, 2]


def _perm_of(transpose):
    try:
        producer, _ = transpose.get_in_data_nodes_and_port_indexes(1)
    except RuntimeError:
        return None, None
    if producer.type not in ("Const", "Constant"):
        return None, None
    value = producer.get_attr("value")
    data = value.data
    return ([int(v) for v in data] if isinstance(data, list) else None), producer


def _remove_transpose(graph, transpose, perm_const, context):
    check = can_fuse([transpose])
    if not check.ok:
        raise RuntimeError(f"cannot remove {transpose.name}: {check.reason}")
    src, src_port = transpose.get_in_data_nodes_and_port_indexes(0)
    consumers = transpose.get_out_data_nodes_and_port_indexes(0)
    for dst, dst_port in consumers:
        graph.remove_edge(transpose, 0, dst, dst_port)
        graph.add_data_edge(src, src_port, dst, dst_port)
    report_fuse([transpose], [], context)
    graph.remove_node(transpose)
    if not perm_const.get_out_data_nodes_and_port_indexes(0):
        graph.remove_node(perm_const)
    print("Remove output edges success")


def _find_downstream(start, perm):
    queue, seen = deque([start]), {start.name}
    while queue:
        node = queue.popleft()
        for i in range(node.get_outputs_size()):
            for dst, _ in node.get_out_data_nodes_and_port_indexes(i):
                if dst.name in seen:
                    continue
                seen.add(dst.name)
                if dst.type == "Transpose":
                    found, const = _perm_of(dst)
                    if found == perm:
                        return dst, const
                queue.append(dst)
    return None, None


@register_fusion_pass(name="PythonConvTransFormatPass", stage=PassStage.BEFORE_INFER_SHAPE)
class PythonConvTransFormatPass(FusionBasePass):

    def run(self, graph, context):
        print("PythonConvTransFormatPass is starting")
        for node in graph.get_direct_nodes():
            if node.type not in ("Conv2D", "Conv2DV2"):
                continue
            try:
                if node.get_attr("data_format") != "NCHW":
                    continue
            except RuntimeError:
                continue
            first, first_const = _find_downstream(node, TO_NHWC)
            if first is None:
                continue
            second, second_const = _find_downstream(first, TO_NCHW)
            if second is None:
                continue
            node.set_attr("data_format", "NHWC")
            try:
                _remove_transpose(graph, first, first_const, context)
                _remove_transpose(graph, second, second_const, context)
            except RuntimeError as exc:
                context.set_error_message(f"PythonConvTransFormatPass failed: {exc}")
                raise
        print("PythonConvTransFormatPass completed")
        return True
