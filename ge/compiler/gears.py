"""The gear build: one compiled graph per gear under CANN's multi-batch root (docs/om.md,
"Gears"), for `--dynamic_batch_size`, `--dynamic_image_size` and `--dynamic_dims`.

Each gear is a copy of the parsed graph with the gear's static input shapes, run through the
pipeline stages before OpCompile (shapes, passes, folding and placement are shape dependent).
The copies then become the branches `Batch_<i>` of one Case, with their node names suffixed
`_ascend_mbatch_batch_<i>` as CANN's multi-batch clone pass names them, and OpCompile and
MemoryPlanning run once on that root: the kernels of all gears are built in one parallel
batch, a kernel two gears share (same source, same key) is built and stored once, and a
static compile of the same shapes has put the same kernels in the cache already.  Weights
are not copied per gear: the copies share the parsed graph's arrays, work over them (conv +
BatchNorm folding) is done once per build (`graph_utils.derived_once`), and the OM's
WEIGHTS_DATA keeps each array once.

Root graph (as CANN's MultiBatchClonePass builds it):

    Data <input i> (its largest gear's shape) ------------------------+
    Data ascend_mbatch_shape_data (int32[values per gear]) -> MapIndex -> Case -> NetOutput
    Const ascend_mbatch_shape_const (int32[gears x values])  --^
"""
from __future__ import annotations


import numpy as np

from ge.errors import GeError
from ge.gear_layout import SHAPE_DATA
from ge.graph import Graph
from ge.graph.attr_names import ATTR_PARENT_INDEX
from ge.graph.tensor import TensorDesc
from ge.graph.types import AttrValueType as VT, DataType
from ge.ops import Role, role_of

from .gear_options import GearSpec
from .graph_utils import sharing_derived_constants

__all__ = ["build_gears", "copy_graph", "ATTR_BATCH_NUM", "ATTR_PRED_VALUE",
           "ATTR_DYNAMIC_TYPE", "ATTR_SHAPE_ORDER", "ATTR_INSERT_BY_MBATCH",
           "ATTR_ORIGIN_INPUT_DIMS", "SHAPE_DATA", "CASE_NODE", "BRANCH_PREFIX", "NODE_SUFFIX"]

# CANN's names (ge_attr_define, multi_batch_clone_pass)
ATTR_BATCH_NUM = "_batch_num"
ATTR_PRED_VALUE = "_pred_value"                   # _pred_value_<i>: the values of gear i
ATTR_DYNAMIC_TYPE = "mbatch_dynamic_type"         # 1 batch, 2 image size, 3 dims
ATTR_SHAPE_ORDER = "user_designate_shape_order"   # input names in --input_shape order
ATTR_INSERT_BY_MBATCH = "mbatch-inserted-node"
ATTR_ORIGIN_INPUT_DIMS = "_mbatch_origin_input_dims"
ATTR_SHAPE_DATA_MARK = "_is_multi_batch_shape_data"
SHAPE_CONST = "ascend_mbatch_shape_const"
MAP_INDEX = "ascend_mbatch_shape_mapindex"
CASE_NODE = "ascend_mbatch_shape_case"
BRANCH_PREFIX = "Batch_"
NODE_SUFFIX = "_ascend_mbatch_batch_"


def copy_graph(graph: Graph) -> Graph:
    """A copy of the graph and its subgraphs: new nodes, edges and descs; attribute values,
    constants included, are shared (passes replace a Const's value, they do not write into
    it), so the gears' weights stay one set of arrays."""
    mapped: dict = {}
    copies = [(graph, _copy_nodes(graph, Graph(graph.name), mapped))]
    copies += [(sub, _copy_nodes(sub, Graph(sub.name), mapped))
               for sub in graph.get_all_subgraphs()]
    for old, new in copies:
        for node in old.nodes:
            twin = mapped[id(node)]
            for i, edge in enumerate(node.inputs()):
                if edge is not None:
                    new.connect(mapped[id(edge[0])], edge[1], twin, i)
            for ctrl in node.get_out_control_nodes():
                new.add_control_edge(twin, mapped[id(ctrl)])
    root = copies[0][1]
    for old, new in copies[1:]:
        parent = mapped.get(id(old.parent_node)) if old.parent_node is not None else None
        root.add_subgraph(new, parent)
    return root


def _copy_nodes(old: Graph, new: Graph, mapped: dict) -> Graph:
    for key, kind, value in old.attr_items():
        new.set_attr_kind(key, kind, value)
    for node in old.nodes:
        twin = new.copy_node(node, node.name)
        twin.subgraphs = dict(node.subgraphs)
        for key, kind, value in node.attr_items():       # lists may be edited in place
            if isinstance(value, (list, dict)):
                twin.set_attr_kind(key, kind, type(value)(value))
        mapped[id(node)] = twin
    return new


def _data_nodes(graph: Graph) -> list:
    data = [n for n in graph.nodes if role_of(n.type) == Role.DATA]
    return sorted(data, key=lambda n: int(n.attr("index") or 0))


def set_gear_shapes(graph: Graph, shapes: dict) -> None:
    """Give the graph inputs named in `shapes` those static dims (E10016 for a name that is
    not an input of the model)."""
    by_name = {n.name: n for n in _data_nodes(graph)}
    for name, dims in shapes.items():
        node = by_name.get(name)
        if node is None:
            raise GeError("E10016", {"opname": name, "parameter": "input_shape"})
        desc = node.out_desc(0).clone().set_shape(list(dims)).set_origin_shape(list(dims))
        node.update_input_desc(0, desc)
        node.update_output_desc(0, desc)


def build_gears(graph: Graph, spec: GearSpec, options: dict, framework: int):
    """Compile every gear of `spec` and assemble the Case root; returns a CompiledModel."""
    from .api import CompiledModel
    from .pipeline import STAGES, run_pipeline
    split = next(i for i, (name, _) in enumerate(STAGES) if name == "OpCompile")
    with sharing_derived_constants():          # the gear copies share their arrays
        branches, ctx = _compile_branches(graph, spec, options, STAGES[:split])
    root = assemble_root(graph.name, branches, spec)
    run_pipeline(root, options, STAGES[split:], ctx)
    return CompiledModel(graph=root, options=dict(options), context=ctx, framework=framework)


def _compile_branches(graph: Graph, spec: GearSpec, options: dict, stages: tuple) -> tuple:
    """(one graph per gear through `stages`, the first gear's BuildContext with the stage
    times of all gears)."""
    from .input_dims import refuse_unknown_input_dims
    from .pipeline import run_pipeline
    branches, ctx = [], None
    for gear in range(len(spec.gears)):
        g = copy_graph(graph)
        set_gear_shapes(g, spec.shapes(gear))
        refuse_unknown_input_dims(g, options)
        gear_ctx = run_pipeline(g, options, stages)
        if ctx is None:
            ctx = gear_ctx
        else:
            for name, seconds in gear_ctx.stage_times.items():
                ctx.stage_times[name] = ctx.stage_times.get(name, 0.0) + seconds
        branches.append(g)
    return branches, ctx


# -- the Case root ----------------------------------------------------------------------------
def _rename_branch(g: Graph, gear: int) -> None:
    """Node and nested-subgraph names get CANN's per-gear suffix; the graph is Batch_<i>."""
    suffix = f"{NODE_SUFFIX}{gear}"
    for sub in g.get_all_subgraphs():
        sub._name = f"{sub.name}{suffix}"
        for node in sub.nodes:
            sub.rename_node(node, f"{node.name}{suffix}")
    g._subgraphs = {sub.name: sub for sub in g._subgraphs.values()}
    for node in g.get_all_nodes():
        node.subgraphs = {k: f"{v}{suffix}" for k, v in node.subgraphs.items()}
    for node in g.nodes:
        g.rename_node(node, f"{node.name}{suffix}")
    g._name = f"{BRANCH_PREFIX}{gear}"


def _as_branch(g: Graph, gear: int) -> None:
    """Data i reads Case input i + 1; NetOutput input k is Case output k."""
    for data in _data_nodes(g):
        data.set_attr_kind(ATTR_PARENT_INDEX, VT.VT_INT, int(data.attr("index") or 0) + 1)
    net = g.output_node()
    for k in range(net.num_inputs if net is not None else 0):
        net.set_input_attr(ATTR_PARENT_INDEX, k, k)
    _rename_branch(g, gear)


def _origin_dims(user: tuple, shapes: list) -> list:
    """The input's dims with -1 where the gears vary: the --input_shape dims, or, when the
    compile changed the input's layout (AIPP takes NHWC images), the dims that differ between
    the gears' compiled inputs."""
    compiled = shapes[0]
    if len(user) == len(compiled) and all(u in (-1, c) for u, c in zip(user, compiled)):
        return [int(d) for d in user]
    return [-1 if len({s[i] for s in shapes}) > 1 else int(d) for i, d in enumerate(compiled)]


def _largest_desc(descs: list) -> TensorDesc:
    """The desc with the most elements (CANN sizes each root input for its largest gear)."""
    def elements(desc) -> int:
        count = 1
        for d in desc.shape:
            count *= max(int(d), 0)
        return count
    return max(descs, key=elements).clone()


def assemble_root(name: str, branches: list, spec: GearSpec) -> Graph:
    largest = branches[spec.largest()]
    inputs = _data_nodes(largest)
    root = Graph(name)
    data_nodes = []
    order = {n: d for n, d in spec.inputs}
    for node in inputs:
        data = root.copy_node(node, node.name)
        data.update_output_desc(0, _largest_desc(
            [d.out_desc(0) for b in branches for d in _data_nodes(b) if d.name == node.name]))
        data.update_input_desc(0, data.out_desc(0))
        if node.name in order:
            shapes = [list(d.out_desc(0).shape) for b in branches for d in _data_nodes(b)
                      if d.name == node.name]
            data.set_attr(ATTR_ORIGIN_INPUT_DIMS, _origin_dims(order[node.name], shapes))
        data_nodes.append(data)
    width = len(spec.gears[0])
    shape_data = root.add_node("Data", SHAPE_DATA, [None], output_names=["y"],
                               input_names=["x"])
    desc = TensorDesc([width], data_type=DataType.DT_INT32)
    shape_data.update_input_desc(0, desc)
    shape_data.update_output_desc(0, desc)
    shape_data.set_attr("index", len(data_nodes))
    shape_data.set_attr(ATTR_SHAPE_DATA_MARK, True)
    shape_data.set_attr(ATTR_INSERT_BY_MBATCH, True)
    from .graph_utils import make_const
    table = np.asarray(spec.gears, dtype=np.int32).reshape(-1)
    const = make_const(root, SHAPE_CONST, table)
    index = root.add_node("MapIndex", MAP_INDEX, [(shape_data, 0), (const, 0)],
                          input_names=["x", "data_seq"], output_names=["y"])
    index.update_output_desc(0, TensorDesc([], data_type=DataType.DT_INT32))
    net_out = largest.output_node()
    n_out = net_out.num_inputs if net_out is not None else 0
    case = root.add_node("Case", CASE_NODE, [(index, 0)] + [(d, 0) for d in data_nodes],
                         num_outputs=n_out,
                         input_names=["branch_index"] + [f"input{i}" for i in
                                                         range(len(data_nodes))],
                         output_names=[f"output{k}" for k in range(n_out)])
    case.set_attr(ATTR_BATCH_NUM, len(spec.gears))
    for i, gear in enumerate(spec.gears):
        case.set_attr(f"{ATTR_PRED_VALUE}_{i}", [int(v) for v in gear])
    case.set_attr(ATTR_SHAPE_ORDER, [n for n, _ in spec.inputs])
    case.set_attr(ATTR_INSERT_BY_MBATCH, True)
    case.set_attr(ATTR_DYNAMIC_TYPE, spec.dynamic_type)
    for k in range(n_out):          # every output sized for the gear that needs most
        case.update_output_desc(k, _largest_desc(
            [e[0].out_desc(e[1]) for e in (b.output_node().input(k) for b in branches)
             if e is not None]))
    out = root.add_node("NetOutput", net_out.name if net_out is not None else "NetOutput",
                        [(case, k) for k in range(n_out)],
                        input_names=list(net_out.input_names) if net_out is not None else [])
    for key, kind, value in (net_out.attr_items() if net_out is not None else ()):
        out.set_attr_kind(key, kind, value)
    for node in root.nodes:              # input descs mirror the producers' output descs
        for i, edge in enumerate(node.inputs()):
            if edge is not None:
                node.update_input_desc(i, edge[0].out_desc(edge[1]))
    subgraphs = {}
    for gear, g in enumerate(branches):
        _as_branch(g, gear)
        subgraphs[f"branches{gear}"] = g.name
    case.subgraphs = subgraphs
    for g in branches:
        root.add_subgraph(g, case)
    return root
