"""Converter of the ONNX recurrent layers: LSTM → CommonLSTM, GRU → CommonGRU (CANN's IR ops),
RNN → CommonRNN (ours: CANN's ONNX parser has no RNN plugin).  docs/parser.md, "Recurrent
layers".

The ONNX inputs map positionally (the IR ports are ONNX's, in ONNX's order) and every ONNX
attribute is kept under its own name.  The IR ops have ONNX's layout 0 only: a layout-1 node
gets TransposeD nodes around it (x, initial_h, initial_c in; y, y_h, y_c out).  Attribute errors
are refused here (E11010); shapes are checked by the op's inference (EP0130).
"""
from __future__ import annotations

from ge.ops.defs.recurrent import CELLS, check_attrs

from ._context import NodeCtx, refuse

__all__ = ["IR_OF", "recurrent"]

IR_OF = {"LSTM": "CommonLSTM", "GRU": "CommonGRU", "RNN": "CommonRNN"}
_OWN_ATTR = {"LSTM": "input_forget", "GRU": "linear_before_reset"}   # Int, default 0
_BATCH_FIRST_IN = {0: [1, 0, 2], 5: [1, 0, 2], 6: [1, 0, 2]}          # layout 1 → 0
_BATCH_FIRST_OUT = {0: [2, 0, 1, 3], 1: [1, 0, 2], 2: [1, 0, 2]}      # layout 0 → 1


def _attrs(ctx: NodeCtx, ir_type: str) -> dict:
    if not ctx.has_attr("hidden_size"):
        refuse("the hidden_size attribute is required")
    attrs = {"hidden_size": int(ctx.attr("hidden_size")),
             "direction": ctx.attr("direction", "forward"),
             "clip": float(ctx.attr("clip", -1.0)),
             "activations": list(ctx.attr("activations", [])),
             "activation_alpha": [float(v) for v in ctx.attr("activation_alpha", [])],
             "activation_beta": [float(v) for v in ctx.attr("activation_beta", [])]}
    own = _OWN_ATTR.get(ctx.op_type)
    if own:
        attrs[own] = int(ctx.attr(own, 0))
    try:
        check_attrs(ir_type, attrs)
    except ValueError as exc:
        refuse(str(exc))
    return attrs


def recurrent(ctx: NodeCtx) -> list:
    ir_type = IR_OF[ctx.op_type]
    attrs = _attrs(ctx, ir_type)
    layout = int(ctx.attr("layout", 0))
    if layout not in (0, 1):
        refuse(f"layout must be 0 or 1, got {layout}")
    n_in = 8 if ir_type == "CommonLSTM" else 6
    if len(ctx.ins) > n_in:
        refuse(f"{ctx.op_type} takes at most {n_in} inputs, got {len(ctx.ins)}")
    ins = list(ctx.ins) + [None] * (n_in - len(ctx.ins))
    if layout == 1:
        ins = [_transpose(ctx, edge, _BATCH_FIRST_IN[i], f"TransposeD_in{i}")
               if edge is not None and i in _BATCH_FIRST_IN else edge
               for i, edge in enumerate(ins)]
    node = ctx.emit(ir_type, ins, attrs, num_outputs=1 + CELLS[ir_type].state_outputs)
    outs = [(node, i) for i in range(node.num_outputs)]
    if layout == 1:
        declared = list(ctx.proto.output)
        outs = [_transpose(ctx, edge, _BATCH_FIRST_OUT[i], f"TransposeD_out{i}")
                if i < len(declared) and declared[i] else edge for i, edge in enumerate(outs)]
    return outs


def _transpose(ctx: NodeCtx, edge, perm: list, suffix: str):
    return (ctx.emit("TransposeD", [edge], {"perm": perm}, suffix=suffix), 0)
