"""Shape arithmetic folded at compile time, inside If branches too: ONNX Size, a Pad whose pads
come from shape arithmetic inside a branch (silero-vad's pattern, once EZ9999), an If whose
condition folds replaced by its branch, and the coded error (EP0150) when a shape input stays
unknown.  Each model is small and built here; numbers are checked against onnxruntime."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T, helper, numpy_helper

import ge.runtime
from ge.om import om_to_json
from ge.runtime.compare import compare_model

from _samples import SAMPLE_SOC

OPSET = 17
SHAPE_OPS = {"Shape", "Size", "GatherV2", "ConcatD", "StridedSliceV2", "Cast", "Sub", "Mul",
             "UnsqueezeV3", "Equal"}


def _const(name: str, value) -> onnx.NodeProto:
    return helper.make_node("Constant", [], [name], name=name,
                            value=numpy_helper.from_array(np.asarray(value), name))


def _pad_to_width_nodes(prefix: str, x: str, width: int, out: str) -> list:
    """pads = [0, 0, 0, width - Size(x) // Shape(x)[0]]: x [N, W] padded on the right to
    `width` columns, the pads computed from the shape of x (Shape, Size, Gather, Div, Sub,
    Cast, Unsqueeze, Concat) as exporters write it."""
    p = f"{prefix}_"
    return [
        helper.make_node("Shape", [x], [p + "shape"], name=p + "Shape"),
        helper.make_node("Size", [x], [p + "size"], name=p + "Size"),
        _const(p + "zero", np.int64(0)),
        helper.make_node("Gather", [p + "shape", p + "zero"], [p + "rows"], name=p + "Gather"),
        helper.make_node("Div", [p + "size", p + "rows"], [p + "cols"], name=p + "Div"),
        _const(p + "width", np.int64(width)),
        helper.make_node("Sub", [p + "width", p + "cols"], [p + "right"], name=p + "Sub"),
        helper.make_node("Cast", [p + "right"], [p + "right64"], name=p + "Cast", to=T.INT64),
        _const(p + "axes", np.array([0], np.int64)),
        helper.make_node("Unsqueeze", [p + "right64", p + "axes"], [p + "right1"],
                         name=p + "Unsqueeze"),
        _const(p + "lead", np.zeros(3, np.int64)),
        helper.make_node("Concat", [p + "lead", p + "right1"], [p + "pads"], name=p + "Concat",
                         axis=0),
        helper.make_node("Pad", [x, p + "pads"], [out], name=p + "Pad"),
    ]


def _if_model(cond_nodes: list, cond_inputs: list) -> onnx.ModelProto:
    """y = If(cond, then: pad x to 8 columns then * 2, else: pad x to 8 columns then + 1);
    the branches read x from the outer scope; pads come from shape arithmetic in each branch."""
    then = helper.make_graph(
        _pad_to_width_nodes("then", "x", 8, "then_pad") + [
            _const("two", np.float32(2)),
            helper.make_node("Mul", ["then_pad", "two"], ["then_y"], name="then_Mul")],
        "then_branch", [], [helper.make_tensor_value_info("then_y", T.FLOAT, None)])
    other = helper.make_graph(
        _pad_to_width_nodes("else", "x", 8, "else_pad") + [
            _const("one", np.float32(1)),
            helper.make_node("Add", ["else_pad", "one"], ["else_y"], name="else_Add")],
        "else_branch", [], [helper.make_tensor_value_info("else_y", T.FLOAT, None)])
    nodes = cond_nodes + [helper.make_node("If", ["cond"], ["y"], name="if",
                                           then_branch=then, else_branch=other)]
    graph = helper.make_graph(
        nodes, "pad_in_branch",
        [helper.make_tensor_value_info("x", T.FLOAT, [2, 5])] + cond_inputs,
        [helper.make_tensor_value_info("y", T.FLOAT, [2, 8])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    onnx.checker.check_model(model)
    return model


def _cond_from_input() -> onnx.ModelProto:
    return _if_model([helper.make_node("Identity", ["flag"], ["cond"], name="cond")],
                     [helper.make_tensor_value_info("flag", T.BOOL, [])])


def _cond_from_shape() -> onnx.ModelProto:
    """cond = Size(x) == 10: known once x's shape is, so the If is inlined."""
    return _if_model([helper.make_node("Size", ["x"], ["n"], name="outer_Size"),
                      _const("ten", np.int64(10)),
                      helper.make_node("Equal", ["n", "ten"], ["cond"], name="outer_Equal")],
                     [])


def _squeeze_if_single_row() -> onnx.ModelProto:
    """torch.onnx's `x.squeeze(0) if x.shape[0] == 1 else x`: with x [2, 5] the then branch
    (Squeeze of a dim that is 2) cannot even infer; a Reshape after the If needs its rank."""
    then = helper.make_graph(
        [_const("axis0", np.array([0], np.int64)),
         helper.make_node("Squeeze", ["x", "axis0"], ["squeezed"], name="then_Squeeze")],
        "then_branch", [], [helper.make_tensor_value_info("squeezed", T.FLOAT, None)])
    other = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["same"], name="else_Identity")],
        "else_branch", [], [helper.make_tensor_value_info("same", T.FLOAT, None)])
    nodes = [helper.make_node("Shape", ["x"], ["shape"], name="Shape"),
             _const("zero", np.int64(0)), _const("one", np.int64(1)),
             helper.make_node("Gather", ["shape", "zero"], ["rows"], name="Gather"),
             helper.make_node("Equal", ["rows", "one"], ["cond"], name="Equal"),
             helper.make_node("If", ["cond"], ["picked"], name="if",
                              then_branch=then, else_branch=other),
             helper.make_node("Shape", ["picked"], ["picked_shape"], name="Shape_1"),
             helper.make_node("Reshape", ["x", "picked_shape"], ["y"], name="Reshape")]
    graph = helper.make_graph(nodes, "squeeze_if", [helper.make_tensor_value_info(
        "x", T.FLOAT, [2, 5])], [helper.make_tensor_value_info("y", T.FLOAT, [2, 5])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])


def _rank_from_runtime_branch() -> onnx.ModelProto:
    """The squeeze guard of `_squeeze_if_single_row` on a condition that is a graph input: the
    If's output rank (1 or 2) is known only at run time, and a Shape reads it."""
    model = _squeeze_if_single_row()
    graph = model.graph
    kept = [n for n in graph.node if n.name not in ("Shape", "Gather", "Equal")
            and n.output[0] not in ("zero", "one")]
    kept[kept.index(next(n for n in kept if n.name == "if"))].input[0] = "flag"
    del graph.node[:]
    graph.node.extend(kept)
    graph.input.append(helper.make_tensor_value_info("flag", T.BOOL, []))
    graph.input[0].type.tensor_type.shape.dim[0].dim_value = 1
    graph.output[0].type.tensor_type.shape.dim[0].dim_value = 1
    return model


def _pads_from_input() -> onnx.ModelProto:
    """Pad whose pads are a graph input: no compile-time value exists."""
    graph = helper.make_graph(
        [helper.make_node("Pad", ["x", "pads"], ["y"], name="pad_by_input")], "pads_input",
        [helper.make_tensor_value_info("x", T.FLOAT, [2, 5]),
         helper.make_tensor_value_info("pads", T.INT64, [4])],
        [helper.make_tensor_value_info("y", T.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])


def _size_model() -> onnx.ModelProto:
    """y = Reshape(x, [Size(x)]) * Cast(Size(x))."""
    nodes = [helper.make_node("Size", ["x"], ["n"], name="size"),
             _const("axes", np.array([0], np.int64)),
             helper.make_node("Unsqueeze", ["n", "axes"], ["shape"], name="unsqueeze"),
             helper.make_node("Reshape", ["x", "shape"], ["flat"], name="reshape"),
             helper.make_node("Cast", ["n"], ["nf"], name="cast", to=T.FLOAT),
             helper.make_node("Mul", ["flat", "nf"], ["y"], name="mul")]
    graph = helper.make_graph(nodes, "size", [helper.make_tensor_value_info("x", T.FLOAT,
                                                                            [2, 3, 4])],
                              [helper.make_tensor_value_info("y", T.FLOAT, [24])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])


@pytest.fixture(scope="module")
def compile_onnx(atc_main, shared_kernel_cache, tmp_path_factory):
    """compile_onnx(name, model) -> (AtcRun, onnx path, om path)."""
    root = tmp_path_factory.mktemp("shape_folding")

    def run(name: str, model: onnx.ModelProto):
        work = root / name
        work.mkdir()
        path = work / f"{name}.onnx"
        onnx.save(model, str(path))
        done = atc_main("--framework=5", f"--model={path}", f"--output={name}",
                        f"--soc_version={SAMPLE_SOC}", "--precision_mode=must_keep_origin_dtype",
                        f"--op_compiler_cache_dir={shared_kernel_cache}", cwd=work)
        return done, path, work / f"{name}.om"
    return run


def _op_types(om: Path) -> dict:
    """{graph name: [op types]} of the OM's root graph and subgraphs."""
    return {g["name"]: [op["type"] for op in g.get("op", [])]
            for g in json.loads(om_to_json(str(om)))["graph"]}


def _matches_onnxruntime(onnx_path: Path, om: Path, inputs: list) -> None:
    result = compare_model(str(onnx_path), ge.runtime.load(str(om)), inputs)
    assert result.ok, [(d.name, d.max_abs) for d in result.outputs]


def test_size_maps_and_folds(compile_onnx):
    done, path, om = compile_onnx("size", _size_model())
    assert done.rc == 0, done.text
    (types,) = _op_types(om).values()
    assert "Size" not in types and "Cast" not in types   # folded: x has a static shape
    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    _matches_onnxruntime(path, om, [x])


def test_size_kernel_counts_elements():
    from ge import ops
    opdef = ops.get("Size")
    (y,) = opdef.kernel([np.zeros((2, 3, 4), np.float32)], {"dtype": 9})  # DT_INT64
    assert y.dtype == np.int64 and y.shape == () and int(y) == 24


def test_pad_from_shape_arithmetic_inside_branches_folds(compile_onnx):
    """The condition is a graph input, so the If stays; inside each branch the pads fold to
    a constant (no shape op is left) and Pad infers [2, 8]."""
    done, path, om = compile_onnx("pad_in_branch", _cond_from_input())
    assert done.rc == 0, done.text
    graphs = _op_types(om)
    assert len(graphs) == 3 and "If" in graphs["pad_in_branch"]
    for name, types in graphs.items():
        if name != "pad_in_branch":
            assert not SHAPE_OPS & set(types), (name, types)
            assert "PadV3" in types
    x = np.random.default_rng(1).standard_normal((2, 5)).astype(np.float32)
    for flag in (True, False):
        _matches_onnxruntime(path, om, [x, np.array(flag)])


def test_if_with_folded_condition_is_inlined(compile_onnx):
    done, path, om = compile_onnx("if_inlined", _cond_from_shape())
    assert done.rc == 0, done.text
    graphs = _op_types(om)
    (types,) = graphs.values()                              # no subgraph left
    # the then branch (x * 2, fused into Muls), its pads folded; nothing of the else branch
    assert sorted(set(types)) == ["Const", "Data", "Muls", "NetOutput", "PadV3"]
    x = np.random.default_rng(2).standard_normal((2, 5)).astype(np.float32)
    _matches_onnxruntime(path, om, [x])


def test_branch_never_taken_is_neither_inferred_nor_kept(compile_onnx):
    done, _, om = compile_onnx("squeeze_if", _squeeze_if_single_row())
    assert done.rc == 0, done.text
    (types,) = _op_types(om).values()
    assert "If" not in types and "Squeeze" not in types and "SqueezeV3" not in types
    # onnxruntime refuses this model (it infers both branches), so the reference is numpy
    x = np.random.default_rng(3).standard_normal((2, 5)).astype(np.float32)
    (y,) = ge.runtime.load(str(om)).run([x])
    np.testing.assert_array_equal(np.asarray(y), x)


def test_shape_input_that_stays_unknown_is_a_coded_error(compile_onnx):
    done, _, om = compile_onnx("pads_input", _pads_from_input())
    assert done.rc == 255
    assert "EP0150" in done.text and "EZ9999" not in done.text
    assert "pad_by_input (PadV3)" in done.text and "paddings (slot 1)" in done.text
    assert "input pads" in done.text          # where the unknown value comes from
    assert "Traceback" not in done.text and not om.exists()


def test_rank_that_stays_unknown_is_a_coded_error(compile_onnx):
    done, _, om = compile_onnx("rank_unknown", _rank_from_runtime_branch())
    assert done.rc == 255
    assert "EP0151" in done.text and "EZ9999" not in done.text
    assert "Shape_1 (Shape)" in done.text and "output 0 of op if (If)" in done.text
    assert "Traceback" not in done.text and not om.exists()
