"""Helpers for the kernel generator tests: build a signature from numpy inputs, compile it once
per session (memoised by source), load it through cffi (ABI mode) and compare its outputs with
the op's numpy reference kernel from ge.ops."""
from __future__ import annotations

import hashlib

import numpy as np
from ge.compiler.opcompile.build import build
from ge.compiler.opcompile.generators import generator_for, render
from ge.compiler.opcompile.hostcall import load_kernel
from ge.compiler.opcompile.signature import OpSignature, TensorSig
from ge.graph.types import from_numpy_dtype
from ge.ops import registry

_BUILT: dict = {}


def tsig(a, fmt="ND"):
    return None if a is None else TensorSig(tuple(a.shape), from_numpy_dtype(a.dtype).name, fmt)


def full_attrs(op_type: str, attrs: dict) -> dict:
    opdef = registry.get(op_type)
    out = {s.name: s.default for s in opdef.attrs if not s.required}
    out.update(attrs)
    return out


def make_sig(op_type, inputs, outputs, attrs, fmt="ND") -> OpSignature:
    gen = generator_for(op_type)
    consts = {}
    for slot in gen.const_inputs:
        slot = slot % len(inputs) if slot < 0 else slot
        if slot < len(inputs) and inputs[slot] is not None:
            consts[slot] = np.asarray(inputs[slot]).reshape(-1).tolist()
    return OpSignature.make(op_type, [tsig(a, fmt) for a in inputs],
                            [tsig(o, fmt) for o in outputs], attrs, consts)


def run_compiled(sig, inputs):
    src = render(sig)
    key = hashlib.sha256(src.c_source.encode()).hexdigest()
    if key not in _BUILT:
        so = build(src.c_source, src.needs_blas, what=sig.op_type)
        _BUILT[key] = load_kernel(so, hashlib.sha256(so).hexdigest())
    kernel = _BUILT[key]
    outs = [np.zeros(o.shape, dtype=_np_dtype(o.dtype)) for o in sig.outputs]
    assert kernel(inputs, outs, src.workspace_bytes) == 0
    return outs


def _np_dtype(name):
    from ge.graph.types import DataType, to_numpy_dtype
    return to_numpy_dtype(DataType[name])


def check_op(op_type, inputs, attrs=None, fmt="ND", rtol=1e-5, atol=1e-5):
    """Compiled kernel == reference kernel for these inputs; returns the outputs."""
    attrs = full_attrs(op_type, attrs or {})
    ref = registry.get(op_type).kernel(list(inputs), dict(attrs))
    ref = [np.asarray(r) for r in ref]
    sig = make_sig(op_type, inputs, ref, {k: v for k, v in attrs.items()}, fmt)
    got = run_compiled(sig, inputs)
    for g, r in zip(got, ref):
        assert g.shape == r.shape
        if r.dtype == np.bool_:
            np.testing.assert_array_equal(g, r)
        else:
            np.testing.assert_allclose(g, r, rtol=rtol, atol=atol)
    return got
