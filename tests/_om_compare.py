"""Comparing two OMs that should differ only in the `atc_cmdline` model attribute."""
from __future__ import annotations

import dataclasses

from ge.om import read_om
from ge.proto.ge_ir import ModelDef

MODEL_DEF = 0           # OM partition holding the ModelDef


def same_om_but_model_def(a, b) -> tuple:
    """Assert header (length and checksum aside: the checksum covers atc_cmdline too),
    partition table and every partition but MODEL_DEF equal; returns the two MODEL_DEF
    payloads for the caller's own comparison."""
    om_a, om_b = read_om(str(a)), read_om(str(b))
    header_a, header_b = dataclasses.asdict(om_a.header), dataclasses.asdict(om_b.header)
    for key in ("model_length", "checksum"):
        header_a.pop(key), header_b.pop(key)
    assert header_a == header_b
    assert [p.type for p in om_a.partitions] == [p.type for p in om_b.partitions]
    for pa, pb in zip(om_a.partitions, om_b.partitions):
        if pa.type != MODEL_DEF:
            assert om_a.payload(pa.type) == om_b.payload(pb.type), f"partition {pa.type}"
    return om_a.payload(MODEL_DEF), om_b.payload(MODEL_DEF)


def model_def_without_cmdline(payload: bytes) -> bytes:
    model_def = ModelDef.FromString(payload)
    del model_def.attr["atc_cmdline"]
    return model_def.SerializeToString(deterministic=True)


def assert_same_om_except_cmdline(a, b) -> None:
    payload_a, payload_b = same_om_but_model_def(a, b)
    assert model_def_without_cmdline(payload_a) == model_def_without_cmdline(payload_b)
