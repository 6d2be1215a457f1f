"""TF1 conditionals (Switch / Merge) found in a GraphDef, for mapping a data-dependent one to
the IR's If.  Pure analysis over node names; builds nothing.

A group is every Switch reading one predicate tensor (tf.cond makes one Switch per value the
branches read, plus a pivot Switch of the predicate itself).  Branch b (False = port 0, True =
port 1) is every node reached forward from port b of a group Switch, over data and control
edges, up to the Merge nodes (the conditional's outputs).  Captures are tensors branch nodes
read from outside without a Switch.  A group whose branches overlap, or hold another Switch or
a while loop, carries an `error` instead (reported only if its predicate is not constant).
"""
from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["CondGroup", "find_cond_groups", "merge_inputs"]


@dataclass
class CondGroup:
    pred: tuple                                     # (node name, output index)
    switches: list = field(default_factory=list)    # Switch node names
    branches: dict = field(default_factory=dict)    # False / True -> [node names]
    merges: list = field(default_factory=list)      # Merge node names, GraphDef order
    captures: list = field(default_factory=list)    # [(node name, index)] read from outside
    error: str = ""


def find_cond_groups(nodes: list, refs, skip: set) -> dict:
    """{Switch or Merge name: CondGroup}; `refs(node)` gives [(src, index, is_control)],
    `skip` names nodes of while frames (their Switches belong to the loop)."""
    by_name = {n.name: n for n in nodes}
    order = {n.name: i for i, n in enumerate(nodes)}
    users: dict = {}
    for n in nodes:
        for src, idx, control in refs(n):
            users.setdefault(src, []).append((n.name, None if control else idx))
    groups: dict = {}
    for n in nodes:
        if n.op == "Switch" and n.name not in skip:
            pred = next((s, i) for s, i, c in refs(n)[1:2])
            groups.setdefault(pred, CondGroup(pred)).switches.append(n.name)
    by_member: dict = {}
    for group in groups.values():
        _fill(group, by_name, users, order, refs)
        for name in group.switches + group.merges:
            by_member[name] = group
    return by_member


def _fill(group: CondGroup, by_name: dict, users: dict, order: dict, refs) -> None:
    switches = set(group.switches)
    seen: dict = {}
    merges = set()
    for branch in (False, True):
        stack = [u for s in switches for u, port in users.get(s, [])
                 if port is None or port == int(branch)]
        while stack:
            name = stack.pop()
            node = by_name[name]
            if node.op == "Merge":
                merges.add(name)
                continue
            if name in switches:
                continue
            if seen.get(name, branch) != branch:
                group.error = f"node {name} lies on both branches"
            if name in seen:
                continue
            if node.op in ("Switch", "Enter"):
                group.error = f"branch node {name} ({node.op}) nests control flow"
            seen[name] = branch
            stack += [u for u, _ in users.get(name, [])]
    group.branches = {b: sorted((n for n, nb in seen.items() if nb == b), key=order.get)
                      for b in (False, True)}
    group.merges = sorted(merges, key=order.get)
    inside = set(seen) | switches
    captures = set()
    for name in seen:
        for src, idx, control in refs(by_name[name]):
            if not control and src not in inside:
                captures.add((src, idx))
    group.captures = sorted(captures, key=lambda c: (order.get(c[0], -1), c[1]))


def merge_inputs(group: CondGroup, merge_refs: list) -> dict:
    """{branch: (src, index)} of one Merge's inputs: the input coming from each branch."""
    out = {}
    for src, idx in merge_refs:
        for branch in (False, True):
            if src in group.branches[branch] or (src in group.switches and idx == int(branch)):
                out[branch] = (src, idx)
    return out
