"""The IR: Graph and Node, with the CANN `ge.graph` surface on top of a small internal API.

Internal API (used by the parser, compiler and pass engine), in the spirit of torch.fx:

    g = Graph("net")
    x = g.add_node("Data", "x", attrs={"index": 0}, input_names=["x"], output_names=["y"])
    r = g.add_node("Relu", "relu", inputs=[(x, 0)], input_names=["x"], output_names=["y"])
    r.input(0) -> (x, 0);  x.consumers(0) -> [(r, 0)]
    g.replace_uses((x, 0), (other, 0));  g.erase_node(r);  g.topo_order();  g.verify()

`erase_node` refuses a node that still has consumers (rewire them first); `remove_node`, the
CANN surface, unlinks the node's consumers and erases it.  `verify()` checks the invariants
listed in ge/graph/verify.py.

Every node carries `_datadump_original_op_names` (list of source-model op names it stands for),
kept through rewrites by `Graph.add_node(..., origin=[...])` and `Node.merge_origin`.
"""
from __future__ import annotations

from typing import Iterable, Optional

from .attr_names import ATTR_ORIGIN
from ge.errors import GeError

from .attrs import kind_of, normalize
from .tensor import TensorDesc
from .types import AttrValueType as VT, DumpFormat

INVARIANT_ERROR = "EP0005"   # Graph {graph}: {where} breaks an IR invariant: {reason}.
CONST_TYPES = ("Const", "Constant")  # op types whose output is the attr `value`
DATA_TYPES = ("Data", "AippData")    # graph inputs (AippData: the dynamic AIPP parameters)
Edge = tuple  # (Node, port index)


class GraphCycleError(ValueError):
    def __init__(self, graph_name: str, nodes: list[str]):
        self.graph_name, self.nodes = graph_name, nodes
        super().__init__(f"graph {graph_name} has a cycle through {', '.join(nodes[:5])}")


class Node:
    """One op in a graph.  Created only through Graph.add_node."""

    def __init__(self, *_a, **_k):
        raise RuntimeError("Node cannot be constructed directly; use Graph.add_node")

    @classmethod
    def _make(cls, graph, name, op_type, n_in, n_out):
        n = object.__new__(cls)
        n._graph, n._name, n._type = graph, name, op_type
        n._attrs: dict[str, tuple[VT, object]] = {}
        n._inputs: list[Optional[Edge]] = [None] * n_in
        n._outputs: list[list[Edge]] = [[] for _ in range(n_out)]
        n._in_descs = [TensorDesc() for _ in range(n_in)]
        n._out_descs = [TensorDesc() for _ in range(n_out)]
        n._in_names = [f"x{i}" for i in range(n_in)]
        n._out_names = [f"y{i}" for i in range(n_out)]
        n._in_attrs = [dict() for _ in range(n_in)]
        n._out_attrs = [dict() for _ in range(n_out)]
        n._ctrl_in: list[Node] = []
        n._ctrl_out: list[Node] = []
        n.subgraphs: dict[str, str] = {}  # IR subgraph name -> subgraph instance name
        return n

    def __copy__(self):
        raise RuntimeError("Node cannot be copied")

    __deepcopy__ = lambda self, memo: self.__copy__()  # noqa: E731

    # -- identity ---------------------------------------------------------------------------
    name = property(lambda self: self._name)
    type = property(lambda self: self._type)
    graph = property(lambda self: self._graph)

    def __repr__(self):
        return f"Node({self._name}:{self._type})"

    # -- attributes (CANN surface) ----------------------------------------------------------
    def get_attr(self, key: str):
        try:
            return self._attrs[key][1]
        except KeyError:
            raise RuntimeError(f"node {self._name} has no attribute {key}") from None

    def set_attr(self, key: str, value) -> None:
        if not isinstance(key, str):
            raise TypeError("attribute name must be a str")
        kind = kind_of(value)
        self._attrs[key] = (kind, normalize(kind, value))

    def has_attr(self, key: str) -> bool:
        return key in self._attrs

    # -- attributes (internal) --------------------------------------------------------------
    def attr(self, key: str, default=None):
        entry = self._attrs.get(key)
        return default if entry is None else entry[1]

    def set_attr_kind(self, key: str, kind: VT, value) -> None:
        self._attrs[key] = (VT(kind), normalize(VT(kind), value))

    def attr_items(self):
        """(name, kind, value) in insertion order."""
        return [(k, kv[0], kv[1]) for k, kv in self._attrs.items()]

    def del_attr(self, key: str) -> None:
        self._attrs.pop(key, None)

    @property
    def origin(self) -> list[str]:
        return list(self.attr(ATTR_ORIGIN, []))

    def merge_origin(self, names: Iterable[str]) -> None:
        merged = self.origin
        merged += [n for n in names if n not in merged]
        self.set_attr_kind(ATTR_ORIGIN, VT.VT_LIST_STRING, merged)

    # -- tensor-level attributes ------------------------------------------------------------
    def get_input_attr(self, name, i):
        try:
            return self._in_attrs[i][name]
        except (KeyError, IndexError):
            raise RuntimeError(f"input {i} of {self._name} has no attribute {name}") from None

    def set_input_attr(self, name, i, value):
        kind_of(value)
        self._in_attrs[i][name] = value

    def get_output_attr(self, name, i):
        try:
            return self._out_attrs[i][name]
        except (KeyError, IndexError):
            raise RuntimeError(f"output {i} of {self._name} has no attribute {name}") from None

    def set_output_attr(self, name, i, value):
        kind_of(value)
        self._out_attrs[i][name] = value

    # -- ports -------------------------------------------------------------------------------
    def get_inputs_size(self) -> int:
        return len(self._inputs)

    def get_outputs_size(self) -> int:
        return len(self._outputs)

    num_inputs = property(get_inputs_size)
    num_outputs = property(get_outputs_size)
    input_names = property(lambda self: list(self._in_names))
    output_names = property(lambda self: list(self._out_names))

    def input(self, i: int) -> Optional[Edge]:
        return self._inputs[i]

    def inputs(self) -> list[Optional[Edge]]:
        return list(self._inputs)

    def consumers(self, i: int) -> list[Edge]:
        return list(self._outputs[i])

    def all_consumers(self) -> list["Node"]:
        seen: dict[int, Node] = {}
        for outs in self._outputs:
            for dst, _ in outs:
                seen.setdefault(id(dst), dst)
        return list(seen.values())

    def get_in_data_nodes_and_port_indexes(self, i: int):
        if not 0 <= i < len(self._inputs) or self._inputs[i] is None:
            raise RuntimeError(f"input {i} of node {self._name} is not connected")
        return self._inputs[i]

    def get_out_data_nodes_and_port_indexes(self, i: int):
        if not 0 <= i < len(self._outputs):
            raise RuntimeError(f"node {self._name} has no output {i}")
        return list(self._outputs[i])

    def get_in_control_nodes(self):
        return list(self._ctrl_in)

    def get_out_control_nodes(self):
        return list(self._ctrl_out)

    def get_input_desc(self, i: int) -> TensorDesc:
        return self._in_descs[i].clone()

    def get_output_desc(self, i: int) -> TensorDesc:
        return self._out_descs[i].clone()

    def update_input_desc(self, i: int, desc: TensorDesc) -> None:
        if not isinstance(desc, TensorDesc):
            raise TypeError("desc must be a TensorDesc")
        self._in_descs[i] = desc.clone()

    def update_output_desc(self, i: int, desc: TensorDesc) -> None:
        if not isinstance(desc, TensorDesc):
            raise TypeError("desc must be a TensorDesc")
        self._out_descs[i] = desc.clone()

    # Internal, no copy: the compiler updates descs in place.
    def in_desc(self, i: int) -> TensorDesc:
        return self._in_descs[i]

    def out_desc(self, i: int) -> TensorDesc:
        return self._out_descs[i]

    def _edited(self) -> None:
        if self._graph is not None:
            self._graph._edits += 1

    def add_output(self, name: str | None = None) -> int:
        self._edited()
        self._outputs.append([])
        self._out_descs.append(TensorDesc())
        self._out_names.append(name or f"y{len(self._outputs) - 1}")
        self._out_attrs.append({})
        return len(self._outputs) - 1

    def add_input(self, name: str | None = None) -> int:
        self._edited()
        self._inputs.append(None)
        self._in_descs.append(TensorDesc())
        self._in_names.append(name or f"x{len(self._inputs) - 1}")
        self._in_attrs.append({})
        return len(self._inputs) - 1


class Graph:
    """A graph of nodes; the root graph also owns every subgraph (flattened, like CANN)."""

    def __init__(self, name: str = "graph"):
        if not isinstance(name, str):
            raise TypeError("graph name must be a str")
        self._name = name
        self._nodes: dict[str, Node] = {}
        self._attrs: dict[str, tuple[VT, object]] = {}
        self._subgraphs: dict[str, Graph] = {}
        self.parent_graph: Optional[Graph] = None
        self.parent_node: Optional[Node] = None
        self._name_counter = 0
        # Structural edits so far (nodes, edges, slots, order): Graph.verify skips a graph
        # whose structure has not changed since it last passed.  Attributes do not count.
        self._edits = 0
        self._verified = None

    name = property(lambda self: self._name)

    def __copy__(self):
        raise RuntimeError("Graph cannot be copied")

    __deepcopy__ = lambda self, memo: self.__copy__()  # noqa: E731

    # -- building (internal) ----------------------------------------------------------------
    def unique_name(self, base: str) -> str:
        if base not in self._nodes:
            return base
        while True:
            self._name_counter += 1
            cand = f"{base}_{self._name_counter}"
            if cand not in self._nodes:
                return cand

    def add_node(self, op_type: str, name: str | None = None, inputs: Iterable = (),
                 attrs: dict | None = None, num_outputs: int = 1,
                 input_names: list[str] | None = None, output_names: list[str] | None = None,
                 origin: Iterable[str] | None = None) -> Node:
        """Create a node; `inputs` are (Node, out_index) pairs or None for absent inputs."""
        inputs = list(inputs)
        n_in = max(len(inputs), len(input_names or ()))
        n_out = len(output_names) if output_names is not None else num_outputs
        name = self.unique_name(name or op_type)
        node = Node._make(self, name, op_type, n_in, n_out)
        self._edits += 1
        if input_names:
            node._in_names = list(input_names)
        if output_names:
            node._out_names = list(output_names)
        self._nodes[name] = node
        for i, edge in enumerate(inputs):
            if edge is not None:
                self.connect(edge[0], edge[1], node, i)
        for k, v in (attrs or {}).items():
            node.set_attr(k, v)
        if origin is not None:
            node.merge_origin(origin)
        return node

    def copy_node(self, node: Node, name: str) -> Node:
        """Add a copy of `node` (from any graph) named `name`: type, slots and their names,
        attributes and descs; no edges, no subgraphs."""
        copy = self.add_node(node.type, name, [None] * node.num_inputs,
                             num_outputs=node.num_outputs, input_names=node.input_names,
                             output_names=node.output_names)
        for key, kind, value in node.attr_items():
            copy.set_attr_kind(key, kind, value)
        for i in range(node.num_outputs):
            copy.update_output_desc(i, node.out_desc(i))
        for i in range(node.num_inputs):
            copy.update_input_desc(i, node.in_desc(i))
        return copy

    def connect(self, src: Node, src_idx: int, dst: Node, dst_idx: int) -> None:
        """Set dst's input dst_idx to src:src_idx (replacing any existing edge)."""
        if dst._inputs[dst_idx] is not None:
            self.disconnect(dst, dst_idx)
        self._edits += 1
        dst._inputs[dst_idx] = (src, src_idx)
        src._outputs[src_idx].append((dst, dst_idx))

    def disconnect(self, dst: Node, dst_idx: int) -> None:
        edge = dst._inputs[dst_idx]
        if edge is None:
            return
        src, src_idx = edge
        self._edits += 1
        src._outputs[src_idx] = [(d, i) for d, i in src._outputs[src_idx]
                                 if not (d is dst and i == dst_idx)]
        dst._inputs[dst_idx] = None

    def replace_uses(self, old: Edge, new: Edge) -> int:
        """Point every consumer of old (node, idx) at new; returns how many were changed."""
        users = list(old[0]._outputs[old[1]])
        for dst, i in users:
            self.connect(new[0], new[1], dst, i)
        return len(users)

    def erase_node(self, node: Node) -> None:
        """Remove a node that no one consumes any more, with its input and control edges.
        Refuses (EP0005, naming the consumers) while a data consumer remains: erasing it
        would leave that consumer reading nothing."""
        self._own(node)
        users = [f"{dst.name}:{i}" for outs in node._outputs for dst, i in outs]
        if users:
            raise GeError(INVARIANT_ERROR, {
                "graph": self._name, "where": f"erase_node({node.name})",
                "reason": f"{node.name} still feeds {', '.join(users)}; point them elsewhere "
                          f"first (Graph.replace_uses)"})
        for i in range(len(node._inputs)):
            self.disconnect(node, i)
        for c in node._ctrl_in:
            c._ctrl_out = [x for x in c._ctrl_out if x is not node]
        for c in node._ctrl_out:
            c._ctrl_in = [x for x in c._ctrl_in if x is not node]
        node._ctrl_in, node._ctrl_out = [], []
        self._edits += 1
        del self._nodes[node._name]
        node._graph = None

    def rename_node(self, node: Node, new_name: str) -> None:
        if new_name in self._nodes:
            raise RuntimeError(f"node name {new_name} already exists in graph {self._name}")
        self._edits += 1
        del self._nodes[node._name]
        node._name = new_name
        self._nodes[new_name] = node

    # -- queries (internal) -----------------------------------------------------------------
    @property
    def nodes(self) -> list[Node]:
        return list(self._nodes.values())

    def node(self, name: str) -> Optional[Node]:
        return self._nodes.get(name)

    def data_nodes(self) -> list[Node]:
        """Graph inputs ordered by their `index` attribute."""
        data = [n for n in self._nodes.values() if n.type in DATA_TYPES]
        return sorted(data, key=lambda n: n.attr("index", 0))

    def output_node(self) -> Optional[Node]:
        for n in self._nodes.values():
            if n.type == "NetOutput":
                return n
        return None

    def topo_order(self) -> list[Node]:
        """Nodes in a stable topological order (ties broken by insertion order); remembered
        until the structure changes (`_edits`), as passes ask for it again and again."""
        cached = self.__dict__.get("_topo")
        if cached is not None and cached[0] == self._edits:
            return list(cached[1])
        order = self._topo_order()
        self._topo = (self._edits, order)
        return list(order)

    def _topo_order(self) -> list[Node]:
        nodes = list(self._nodes.values())
        order_of = {id(n): i for i, n in enumerate(nodes)}
        if self._insertion_order_is_topological(nodes, order_of):
            return nodes  # what the sort below returns then, found in one pass over the edges
        pending = {}
        for n in self._nodes.values():
            preds = {id(e[0]) for e in n._inputs if e is not None and e[0]._graph is self}
            preds |= {id(c) for c in n._ctrl_in}
            pending[id(n)] = len(preds)
        import heapq
        ready = [(order_of[id(n)], n) for n in self._nodes.values() if pending[id(n)] == 0]
        heapq.heapify(ready)
        out: list[Node] = []
        while ready:
            _, n = heapq.heappop(ready)
            out.append(n)
            succs = {id(d): d for outs in n._outputs for d, _ in outs}
            succs.update({id(c): c for c in n._ctrl_out})
            for s in succs.values():
                pending[id(s)] -= 1
                if pending[id(s)] == 0:
                    heapq.heappush(ready, (order_of[id(s)], s))
        if len(out) != len(self._nodes):
            stuck = [n.name for n in self._nodes.values() if pending[id(n)] > 0]
            raise GraphCycleError(self._name, stuck)
        return out

    def _insertion_order_is_topological(self, nodes: list[Node], order_of: dict) -> bool:
        for i, n in enumerate(nodes):
            for e in n._inputs:
                if e is not None and e[0]._graph is self and order_of.get(id(e[0]), i) >= i:
                    return False
            for c in n._ctrl_in:
                if order_of.get(id(c), i) >= i:
                    return False
        return True

    def sort(self) -> None:
        """Reorder the node table topologically (deterministic)."""
        self._nodes = {n.name: n for n in self.topo_order()}
        self._edits += 1

    def root(self) -> "Graph":
        g = self
        while g.parent_graph is not None:
            g = g.parent_graph
        return g

    # -- CANN surface -------------------------------------------------------------------------
    def get_direct_nodes(self) -> list[Node]:
        return self.nodes

    def get_all_nodes(self) -> list[Node]:
        out = []
        for n in self._nodes.values():
            out.append(n)
            for sub_name in n.subgraphs.values():
                sub = self.root()._subgraphs.get(sub_name)
                if sub is not None:
                    out.extend(sub.get_all_nodes())
        return out

    def find_node_by_name(self, name: str) -> Node:
        node = self._nodes.get(name)
        if node is None:
            raise RuntimeError(f"node {name} not found in graph {self._name}")
        return node

    def get_attr(self, key: str):
        try:
            return self._attrs[key][1]
        except KeyError:
            raise RuntimeError(f"graph {self._name} has no attribute {key}") from None

    def set_attr(self, key: str, value) -> None:
        kind = kind_of(value)
        self._attrs[key] = (kind, normalize(kind, value))

    def set_attr_kind(self, key: str, kind: VT, value) -> None:
        self._attrs[key] = (VT(kind), normalize(VT(kind), value))

    def attr_items(self):
        return [(k, kv[0], kv[1]) for k, kv in self._attrs.items()]

    def _own(self, node, what="node"):
        if not isinstance(node, Node):
            raise TypeError(f"{what} must be a Node")
        if node._graph is not self:
            raise RuntimeError(f"node {node.name} does not belong to graph {self._name}")
        return node

    def add_data_edge(self, src: Node, src_port: int, dst: Node, dst_port: int) -> None:
        self._own(src, "src")
        self._own(dst, "dst")
        if not isinstance(src_port, int) or not isinstance(dst_port, int):
            raise TypeError("port indexes must be int")
        if not 0 <= src_port < src.num_outputs or not 0 <= dst_port < dst.num_inputs:
            raise RuntimeError(f"bad port in edge {src.name}:{src_port} -> {dst.name}:{dst_port}")
        if dst._inputs[dst_port] is not None:
            raise RuntimeError(f"input {dst_port} of {dst.name} is already connected")
        self.connect(src, src_port, dst, dst_port)

    def add_control_edge(self, src: Node, dst: Node) -> None:
        self._own(src, "src")
        self._own(dst, "dst")
        if dst not in src._ctrl_out:
            self._edits += 1
            src._ctrl_out.append(dst)
            dst._ctrl_in.append(src)

    def remove_edge(self, src: Node, src_port: int, dst: Node, dst_port: int) -> None:
        self._own(src, "src")
        self._own(dst, "dst")
        if src_port == -1 or dst_port == -1:
            if dst not in src._ctrl_out:
                raise RuntimeError(f"no control edge {src.name} -> {dst.name}")
            self._edits += 1
            src._ctrl_out.remove(dst)
            dst._ctrl_in.remove(src)
            return
        if not 0 <= dst_port < dst.num_inputs or dst._inputs[dst_port] != (src, src_port):
            raise RuntimeError(f"no edge {src.name}:{src_port} -> {dst.name}:{dst_port}")
        self.disconnect(dst, dst_port)

    def remove_node(self, node: Node) -> None:
        """CANN Graph::RemoveNode: the node goes with all its edges (its consumers' inputs
        become unconnected)."""
        self._own(node)
        for outs in node._outputs:
            for dst, i in list(outs):
                self.disconnect(dst, i)
        self.erase_node(node)

    def verify(self, required=None) -> None:
        """Raise GraphInvariantError (ge/graph/verify.py) if this graph or one of its live
        subgraphs is malformed; `required(node)` lists the input slots that must be
        connected (ge.ops.required_slots: ge.graph knows no ops)."""
        from .verify import verify
        verify(self, required)

    def get_all_subgraphs(self) -> list["Graph"]:
        return list(self.root()._subgraphs.values())

    def get_subgraph(self, name: str) -> Optional["Graph"]:
        return self.root()._subgraphs.get(name)

    def add_subgraph(self, graph: "Graph", parent_node: Node | None = None) -> None:
        root = self.root()
        if graph.name in root._subgraphs:
            raise RuntimeError(f"subgraph {graph.name} already exists")
        root._subgraphs[graph.name] = graph
        root._edits += 1
        graph.parent_graph = self if parent_node is None else parent_node.graph
        graph.parent_node = parent_node
        for sub in list(graph._subgraphs.values()):  # adopt nested subgraphs
            root._subgraphs.setdefault(sub.name, sub)
        graph._subgraphs = {}

    def remove_subgraph(self, name: str) -> None:
        if self.root()._subgraphs.pop(name, None) is None:
            raise RuntimeError(f"subgraph {name} not found")
        self.root()._edits += 1

    def save_to_air(self, file_path: str) -> None:
        from .serialize import save_air
        save_air(self, file_path)

    @classmethod
    def load_from_air(cls, file_path: str) -> "Graph":
        from .serialize import load_air
        return load_air(file_path)

    def dump_to_stream(self, format: DumpFormat = DumpFormat.kReadable) -> str:
        from .dump import dump_text
        return dump_text(self, format)

    def dump_to_file(self, format: DumpFormat = DumpFormat.kReadable, suffix: str = "") -> None:
        from .dump import dump_file
        dump_file(self, format, suffix)

    def __str__(self):
        from .dump import readable
        return readable(self)
